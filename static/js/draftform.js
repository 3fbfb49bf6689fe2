/* The core every annotation screen shares: a real form whose field names are the draft's keys,
 * autosaved to the server with conflict detection, active time, validation in place, submit
 * after a last save, and resuming where the annotator left off. The forms work without it.
 *
 * Contract with the server: POST form.dataset.draftUrl {version, draft, active_seconds_delta}
 * -> 200 {version, saved_at} or 409 {version, draft, message}; a redirect (to the login page),
 * 401 or 403 means the session has ended. The form carries hidden inputs
 * draft_version, active_seconds and csrfmiddlewaretoken; the page has #save-status,
 * #conflict-banner (with #conflict-load and #conflict-keep) and #error-summary.
 *
 * A screen calls Attest.draftForm(form, hooks) and gets back {changed, save, setStatus, ...}.
 * Hooks (all optional): problems() -> [{key, label, message}]; focusField(key);
 * beforeApply(draft) (e.g. make room for a draft's fields); afterApply(); afterConflict();
 * resumeDefault() (where to start when nothing is remembered); resumeElement(el) -> el.
 */
(function () {
  "use strict";

  const IDLE_MS = 5 * 60 * 1000; // no input for this long: the time stops counting as work
  const TYPING_DEBOUNCE_MS = 600;
  const FOCUS_DEBOUNCE_MS = 4000;
  const MAX_BACKOFF_MS = 30000;
  const SIGNED_OUT = "You are signed out: sign in again in another tab; your work is kept here";

  function draftForm(form, hooks) {
    hooks = hooks || {};
    const statusLine = document.getElementById("save-status");
    const banner = document.getElementById("conflict-banner");
    const errorSummary = document.getElementById("error-summary");
    const versionInput = form.elements.namedItem("draft_version");
    const activeInput = form.elements.namedItem("active_seconds");
    const csrfInput = form.elements.namedItem("csrfmiddlewaretoken");
    const draftUrl = form.dataset.draftUrl;
    const initialDraft = JSON.parse(document.getElementById(form.dataset.draftJson).textContent || "{}");

    let version = parseInt(versionInput.value, 10) || 0;
    let changeSeq = 0; // bumped by every edit of a field
    let savedSeq = 0; // the changeSeq the server has
    let focusName = initialDraft._focus || "";
    let focusSaved = focusName;
    let base = contentKey(collectDraft()); // what the server had when we last agreed with it
    let saving = null; // the promise of the save in flight
    let saveTimer = null;
    let retryDelay = 1000;
    let inConflict = false;
    let submitting = false;
    let failing = false; // the last save got no (good) answer: retrying
    let unanswered = []; // contentKeys of drafts sent since the last answer: the server may have any

    form.classList.add("js");

    /* ---- Active time: visible, and someone touched the page in the last few minutes. ---- */
    let totalActive = parseFloat(activeInput.value) || 0;
    let unsent = 0;
    let lastTick = performance.now();
    let lastInput = lastTick;

    function tick() {
      const now = performance.now();
      if (document.visibilityState === "visible" && now - lastInput < IDLE_MS) {
        const seconds = Math.min(now - lastTick, 5000) / 1000;
        unsent += seconds;
        totalActive += seconds;
        activeInput.value = totalActive.toFixed(1);
      }
      lastTick = now;
    }
    setInterval(tick, 1000);
    ["keydown", "pointerdown", "input", "wheel", "scroll"].forEach(function (type) {
      document.addEventListener(type, function () { lastInput = performance.now(); }, { capture: true, passive: true });
    });

    /* ---- Reading and writing the form as a draft. ---- */
    function fields() {
      return Array.from(form.elements).filter(function (el) {
        return el.name && el.type !== "hidden" && el.type !== "submit" && el.type !== "button";
      });
    }

    function collectDraft() {
      const draft = {};
      fields().forEach(function (el) {
        if (el.type === "radio" || el.type === "checkbox") {
          if (el.checked) draft[el.name] = el.value;
        } else {
          draft[el.name] = el.value;
        }
      });
      return draft;
    }

    // The content of a draft, ignoring focus and empty values, as the server stores it.
    function contentKey(draft) {
      return JSON.stringify(Object.keys(draft).filter(function (k) {
        return k !== "_focus" && draft[k] !== "" && draft[k] !== null && draft[k] !== undefined;
      }).sort().map(function (k) { return [k, String(draft[k])]; }));
    }

    function applyDraft(draft) {
      if (hooks.beforeApply) hooks.beforeApply(draft);
      fields().forEach(function (el) {
        const value = draft[el.name];
        if (el.type === "radio") el.checked = value !== undefined && String(value) === el.value;
        else if (el.type === "checkbox") el.checked = value !== undefined && value !== null && String(value) === el.value;
        else el.value = value === undefined || value === null ? "" : String(value);
      });
      if (hooks.afterApply) hooks.afterApply();
      revalidateShown();
    }

    /* ---- Autosave. ---- */
    function setStatus(text, state) {
      statusLine.textContent = text;
      statusLine.dataset.state = state || "";
    }

    function timeNow() {
      return new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
    }

    function hasWork() {
      return changeSeq !== savedSeq || focusName !== focusSaved || unsent >= 1;
    }

    // Leaving the page (or the tab) saves edits, and time alone only past a few seconds; the
    // focus alone goes to sessionStorage instead. Every save bumps the version, and a reload
    // that races a keepalive save would otherwise open on a stale version.
    function leavingWork() {
      return changeSeq !== savedSeq || unsent >= 5;
    }

    const focusKey = "draft-focus:" + location.pathname;
    function rememberFocus() {
      try { sessionStorage.setItem(focusKey, focusName); } catch (e) { /* storage off: the draft keeps it */ }
    }
    function rememberedFocus() {
      try { return sessionStorage.getItem(focusKey) || ""; } catch (e) { return ""; }
    }

    // Edits the server may not have (offline, signed out, a conflict, a page left mid-save) are
    // kept in this tab's storage until a save is answered, and offered again when the page opens.
    const unsavedKey = "draft-unsaved:" + location.pathname;
    function keepLocally() {
      try {
        sessionStorage.setItem(unsavedKey, JSON.stringify({ version: version, sent: unanswered, draft: collectDraft() }));
      } catch (e) { /* storage off: the page still has it */ }
    }
    function forgetLocally() {
      try { sessionStorage.removeItem(unsavedKey); } catch (e) { /* nothing kept */ }
    }
    function keptLocally() {
      try { return JSON.parse(sessionStorage.getItem(unsavedKey) || "null"); } catch (e) { return null; }
    }

    // The session cookie's CSRF token: signing in again (in another tab) replaces the page's.
    function csrfToken() {
      const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
      return match ? decodeURIComponent(match[1]) : csrfInput.value;
    }

    function schedule(delay) {
      clearTimeout(saveTimer);
      saveTimer = setTimeout(function () { save(); }, delay);
    }

    function payload() {
      tick();
      const draft = collectDraft();
      if (focusName) draft._focus = focusName;
      const delta = unsent;
      unsent = 0;
      return { draft: draft, delta: delta, body: JSON.stringify({ version: version, draft: draft, active_seconds_delta: delta }) };
    }

    function post(body, keepalive) {
      return fetch(draftUrl, {
        method: "POST",
        credentials: "same-origin",
        keepalive: !!keepalive,
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), Accept: "application/json" },
        body: body,
      });
    }

    // Resolves to "ok", "conflict", "offline" (no answer), "signedout" or "error" (any other answer).
    function save(options) {
      clearTimeout(saveTimer);
      if (inConflict) return Promise.resolve("conflict");
      if (submitting) return Promise.resolve("ok");
      if (saving) {
        return saving.then(function (result) {
          return result === "ok" && hasWork() ? save(options) : result;
        });
      }
      if (options && options.keepalive ? !leavingWork() : !hasWork()) return Promise.resolve("ok");
      const seq = changeSeq;
      const sent = payload();
      setStatus("Saving…", "saving");
      unanswered = unanswered.filter(function (k) { return k !== contentKey(sent.draft); }).slice(-9);
      unanswered.push(contentKey(sent.draft));
      const answer = post(sent.body, options && options.keepalive).then(function (response) {
        // An ended session answers with the login page (followed redirect) or a 403 (CSRF).
        if (response.redirected || response.status === 401 || response.status === 403) return { status: 401, data: {} };
        return response.json().then(function (data) {
          return { status: response.status, data: data };
        }, function () {
          return { status: response.ok ? 502 : response.status, data: {} };
        });
      }, function () {
        return { status: 0, data: {} };
      });
      // `saving` is cleared before the answer is handled, so a handler may start the next save.
      saving = answer.then(function (reply) {
        saving = null;
        const ours = unanswered;
        if (reply.status !== 0) unanswered = [];
        return handleResponse(reply.status, reply.data, seq, sent, ours);
      });
      return saving;
    }

    // `ours`: what this page sent without hearing back; a server holding one of them is not a conflict.
    function handleResponse(status, data, seq, sent, ours) {
      if (status === 200) {
        version = data.version;
        versionInput.value = String(version);
        savedSeq = seq;
        focusSaved = sent.draft._focus || "";
        base = contentKey(sent.draft);
        retryDelay = 1000;
        failing = false;
        setStatus("Saved " + timeNow(), "saved");
        if (changeSeq !== savedSeq) schedule(0);
        else forgetLocally();
        return "ok";
      }
      unsent += sent.delta;
      if (status === 0) return failed("offline");
      if (status === 401) return failed("signedout");
      if (status === 409) {
        const theirs = contentKey(data.draft || {});
        // The server already has exactly this (sent before, its answer lost): agreed.
        if (theirs === contentKey(sent.draft)) return handleResponse(200, data, seq, sent, []);
        if (theirs === base || ours.indexOf(theirs) >= 0) {
          // Only the focus or the time changed elsewhere (a save from a closing page), or the
          // server has an earlier save of ours whose answer was lost: nothing to choose.
          version = data.version;
          versionInput.value = String(version);
          return save();
        }
        showConflict(data);
        return "conflict";
      }
      return failed("error");
    }

    function failed(kind) {
      failing = true;
      keepLocally();
      setStatus(kind === "signedout" ? SIGNED_OUT : "Not saved — retrying", "error");
      schedule(retryDelay);
      retryDelay = Math.min(retryDelay * 2, MAX_BACKOFF_MS);
      return kind;
    }

    window.addEventListener("online", function () { if (hasWork()) save(); });
    // Back from another tab (where one may have signed in again): retry now, not at the backoff's end.
    window.addEventListener("focus", function () { if (failing) save(); });

    function changed(delay) {
      changeSeq += 1;
      if (!inConflict) schedule(delay || 0);
    }

    // Leaving the tab or the page: save now, in a request that outlives the page.
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") {
        tick();
        if (leavingWork()) save({ keepalive: true });
        if (!submitting && changeSeq !== savedSeq) keepLocally();
      } else {
        lastTick = performance.now();
        if (failing) save();
      }
    });
    window.addEventListener("pagehide", function () {
      tick();
      if (!submitting && !inConflict && !saving && leavingWork()) save({ keepalive: true });
      // A keepalive save's answer is never seen, and one in flight may not have reached the server.
      if (!submitting && changeSeq !== savedSeq) keepLocally();
    });
    window.addEventListener("beforeunload", function (event) {
      // Only when the server really lacks typed work (offline, or a conflict left open).
      if (!submitting && changeSeq !== savedSeq && (inConflict || statusLine.dataset.state === "error")) {
        event.preventDefault();
        event.returnValue = "";
      }
    });

    /* ---- Conflict with another tab. ---- */
    let theirs = null;

    function showConflict(data) {
      inConflict = true;
      theirs = data;
      keepLocally();
      banner.hidden = false;
      setStatus("Not saved — changed in another tab", "error");
    }

    function closeConflict() {
      inConflict = false;
      theirs = null;
      banner.hidden = true;
    }

    document.getElementById("conflict-load").addEventListener("click", function () {
      const other = theirs;
      closeConflict();
      version = other.version;
      versionInput.value = String(version);
      applyDraft(other.draft || {});
      base = contentKey(collectDraft());
      savedSeq = changeSeq;
      focusSaved = focusName;
      forgetLocally();
      setStatus("Loaded the other version", "saved");
      if (hooks.afterConflict) hooks.afterConflict();
    });

    document.getElementById("conflict-keep").addEventListener("click", function () {
      const other = theirs;
      closeConflict();
      version = other.version;
      versionInput.value = String(version);
      save();
      if (hooks.afterConflict) hooks.afterConflict();
    });

    /* ---- Edits and focus. ---- */
    function isTyping(el) {
      return el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text");
    }

    form.addEventListener("change", function (event) {
      revalidateShown();
      if (!isTyping(event.target)) changed(0);
    });
    form.addEventListener("input", function (event) {
      if (isTyping(event.target)) {
        changed(TYPING_DEBOUNCE_MS);
        if (event.target.getAttribute("aria-invalid") === "true") revalidateShown();
      }
    });
    form.addEventListener("focusin", function (event) {
      const el = event.target;
      if (el.name && el.type !== "hidden" && el.name !== focusName) {
        focusName = el.name;
        rememberFocus();
        // Where one is working is worth keeping, but not worth a request per keystroke.
        if (changeSeq === savedSeq && !inConflict && !saving) schedule(FOCUS_DEBOUNCE_MS);
      }
    });

    /* ---- Validation in place (the server checks again). ---- */
    function problems() {
      return hooks.problems ? hooks.problems() : [];
    }

    function showMessage(key, message) {
      const holder = document.getElementById("error-" + key);
      if (holder) holder.textContent = message;
      const control = document.getElementById(key);
      const group = document.getElementById("field-" + key);
      [control, group].forEach(function (el) {
        if (!el) return;
        if (message) el.setAttribute("aria-invalid", "true");
        else el.removeAttribute("aria-invalid");
      });
      if (group) group.classList.toggle("has-error", !!message);
    }

    function clearMessages() {
      form.querySelectorAll(".field-error").forEach(function (p) {
        showMessage(p.id.replace("error-", ""), "");
      });
    }

    function showProblems(found) {
      clearMessages();
      found.forEach(function (p) { showMessage(p.key, p.message); });
      const list = errorSummary.querySelector("ul");
      list.replaceChildren();
      found.forEach(function (p) {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = "#field-" + p.key;
        link.textContent = p.label + ": " + p.message;
        item.append(link);
        list.append(item);
      });
      errorSummary.querySelector("h2").textContent = found.length === 1
        ? "Please fix this before submitting" : "Please fix these " + found.length + " things before submitting";
      errorSummary.hidden = found.length === 0;
    }

    // Messages already on screen go away as soon as their field is fixed.
    function revalidateShown() {
      const open = new Set(problems().map(function (p) { return p.key; }));
      form.querySelectorAll(".field-error").forEach(function (p) {
        const key = p.id.replace("error-", "");
        if (p.textContent && !open.has(key)) {
          showMessage(key, "");
          const link = errorSummary.querySelector("a[href='#field-" + key + "']");
          if (link) link.closest("li").remove();
        }
      });
      if (!errorSummary.querySelector("li")) errorSummary.hidden = true;
    }

    function focusField(key) {
      if (hooks.focusField) return hooks.focusField(key);
      const group = document.getElementById("field-" + key);
      if (!group) return;
      const control = document.getElementById(key) || group.querySelector("input:checked") || group.querySelector("input");
      (control || group).focus({ preventScroll: true });
      (control || group).scrollIntoView({ block: "center" });
    }

    errorSummary.addEventListener("click", function (event) {
      const link = event.target.closest("a[href^='#field-']");
      if (!link) return;
      event.preventDefault();
      focusField(link.getAttribute("href").slice("#field-".length));
    });

    /* ---- Submit: check, save a last time, then post the form (with the button's name). ---- */
    let submitter = null;
    form.addEventListener("submit", function (event) {
      if (submitting) return;
      event.preventDefault();
      submitter = event.submitter || null;
      const skipChecks = submitter && submitter.hasAttribute("formnovalidate");
      const found = skipChecks ? [] : problems();
      if (found.length) {
        showProblems(found);
        focusField(found[0].key);
        return;
      }
      showProblems([]);
      if (inConflict) {
        banner.querySelector("button").focus();
        return;
      }
      setStatus("Saving before submitting…", "saving");
      save().then(function (result) {
        if (result === "conflict") {
          banner.querySelector("button").focus();
          return;
        }
        if (result === "offline") {
          setStatus("Not saved — retrying; submit again once it is saved", "error");
          return;
        }
        if (result === "signedout") return; // the status line says so; the form would go to the login page
        tick();
        activeInput.value = totalActive.toFixed(1);
        csrfInput.value = csrfToken();
        submitting = true;
        clearTimeout(saveTimer);
        setStatus("Submitting…", "saving");
        if (submitter && submitter.name) {
          const carried = document.createElement("input");
          carried.type = "hidden";
          carried.name = submitter.name;
          carried.value = submitter.value;
          form.append(carried);
        }
        form.submit();
      });
    });

    // Ctrl+Enter (Cmd+Enter) submits with the form's primary button, from anywhere.
    document.addEventListener("keydown", function (event) {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        event.preventDefault();
        const primary = form.querySelector("button[type=submit].primary");
        form.requestSubmit(primary || undefined);
      }
    });

    /* ---- Resume where the annotator left off. ---- */
    function resume() {
      if (!errorSummary.hidden) {
        form.querySelectorAll(".field-error").forEach(function (p) {
          if (p.textContent.trim()) showMessage(p.id.replace("error-", ""), p.textContent.trim());
        });
        errorSummary.focus();
        return;
      }
      focusName = rememberedFocus() || focusName;
      const named = focusName && form.elements.namedItem(focusName);
      let element = null;
      if (named && named.length !== undefined && !named.tagName) {
        element = Array.from(named).find(function (r) { return r.checked; }) || named[0];
      } else if (named) {
        element = named;
      }
      if (element && hooks.resumeElement) element = hooks.resumeElement(element);
      if (element) {
        element.focus({ preventScroll: true });
        element.scrollIntoView({ block: "center" });
      } else if (hooks.resumeDefault) {
        hooks.resumeDefault();
      }
    }

    // Edits kept in this tab that the page, as the server sent it, lacks: saved now when the server
    // has not moved on since (or moved on with what was in flight), a conflict to resolve otherwise.
    function restoreUnsaved() {
      const kept = keptLocally();
      if (!kept || !kept.draft || contentKey(kept.draft) === base) {
        forgetLocally();
        return;
      }
      applyDraft(kept.draft);
      if (kept.version === version || (kept.sent || []).indexOf(base) >= 0) {
        setStatus("Restored changes that were not saved yet", "saving");
        changed(0);
      } else {
        // As after a 409: ours rests on the version we had, the server's is theirs.
        const served = { version: version, draft: initialDraft };
        version = kept.version;
        versionInput.value = String(version);
        changeSeq += 1;
        showConflict(served);
      }
    }

    function start() {
      resume();
      // Where the page opened is not news to the server.
      focusSaved = focusName;
      clearTimeout(saveTimer);
      restoreUnsaved();
    }

    return {
      changed: changed,
      save: save,
      setStatus: setStatus,
      isTyping: isTyping,
      revalidateShown: revalidateShown,
      start: start,
    };
  }

  window.Attest = window.Attest || {};
  window.Attest.draftForm = draftForm;
})();
