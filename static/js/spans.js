/* Span-level inconsistencies (Ramprasad et al. 2024): mark spans of the summary with the mouse or
 * the keyboard, give each a category, a class, evidence and a note; on top of the shared
 * draft-form core (static/js/draftform.js: autosave, conflicts, active time, checks, resume).
 *
 * Offsets are Unicode code points of the summary text, as the server stores them. The DOM counts
 * UTF-16 units, so everything here works on `cps` (Array.from(text)) and converts DOM positions
 * with cpCount(). The text comes from json_script, never from the DOM (which normalises line
 * breaks). The draft's `spans` textarea holds the JSON list annotation/protocols/spans.py reads.
 * Only textContent and createElement here: the summary and notes are user text. */
(function () {
  "use strict";

  const form = document.getElementById("spans-form");
  if (!form || !window.Attest) return;

  const config = JSON.parse(document.getElementById("spans-config").textContent);
  const text = config.text;
  const cps = Array.from(text);
  const N = cps.length;
  const store = form.elements.namedItem("spans");
  const noneBox = form.elements.namedItem("no_inconsistency");
  const summaryEl = document.getElementById("span-summary");
  const listEl = document.getElementById("span-list");
  const emptyEl = document.getElementById("span-list-empty");
  const markButton = document.getElementById("mark-span");
  const notice = document.getElementById("span-notice");
  const selectionStatus = document.getElementById("selection-status");
  const unitButtons = Array.from(document.querySelectorAll(".evidence-unit"));
  const unitName = config.unitName;
  // The cards' controls belong to an empty form of their own: they are not draft keys (the JSON
  // in `spans` is), so the core neither collects nor submits them; their events still bubble here.
  const CONTROLS = "span-controls";
  document.getElementById(CONTROLS).addEventListener("submit", function (event) { event.preventDefault(); });

  /* ---- Code points, graphemes, words. ---- */
  function cpCount(s) {
    let n = 0;
    for (const _ of s) n += 1; // for..of walks code points, not UTF-16 units
    return n;
  }

  function pieces(granularity) {
    const out = [];
    if (window.Intl && Intl.Segmenter) {
      let at = 0;
      for (const piece of new Intl.Segmenter(undefined, { granularity: granularity }).segment(text)) {
        const length = cpCount(piece.segment);
        out.push({ start: at, end: at + length, word: granularity !== "word" || !!piece.isWordLike });
        at += length;
      }
      return out;
    }
    if (granularity === "grapheme") return cps.map(function (_, i) { return { start: i, end: i + 1, word: true }; });
    let start = -1;
    cps.forEach(function (c, i) {
      const space = /\s/u.test(c);
      if (!space && start < 0) start = i;
      if (space && start >= 0) { out.push({ start: start, end: i, word: true }); start = -1; }
    });
    if (start >= 0) out.push({ start: start, end: N, word: true });
    return out;
  }

  const boundaries = [0].concat(pieces("grapheme").map(function (g) { return g.end; }));
  const words = pieces("word").filter(function (w) { return w.word; });

  function nextBoundary(c) { const b = boundaries.find(function (x) { return x > c; }); return b === undefined ? N : b; }
  function prevBoundary(c) { let p = 0; boundaries.forEach(function (x) { if (x < c) p = x; }); return p; }
  function snapDown(c) { let p = 0; boundaries.forEach(function (x) { if (x <= c) p = x; }); return p; }
  function snapUp(c) { const b = boundaries.find(function (x) { return x >= c; }); return b === undefined ? N : b; }
  function nextWordEnd(c) { const w = words.find(function (x) { return x.end > c; }); return w ? w.end : N; }
  function prevWordStart(c) { let s = 0; words.forEach(function (x) { if (x.start < c) s = x.start; }); return s; }

  // A selection made minimal: whole characters (graphemes), no white space at either end.
  function tidy(start, end) {
    let a = snapDown(Math.max(0, Math.min(start, end)));
    let b = snapUp(Math.min(N, Math.max(start, end)));
    while (a < b && /\s/u.test(cps[a])) a += 1;
    while (b > a && /\s/u.test(cps[b - 1])) b -= 1;
    return a < b ? [snapDown(a), snapUp(b)] : null;
  }

  function slice(a, b) { return cps.slice(a, b).join(""); }

  /* ---- State: the spans (in text order), the keyboard selection, the current span. ---- */
  const FIELDS = ["id", "start", "end", "text", "category", "error_class", "evidence", "no_evidence", "note"];

  function readSpans(value) {
    let list = [];
    try { list = value ? JSON.parse(value) : []; } catch (e) { list = []; }
    return (Array.isArray(list) ? list : []).filter(function (s) {
      return s && Number.isInteger(s.id) && Number.isInteger(s.start) && Number.isInteger(s.end) && s.text === slice(s.start, s.end);
    }).map(function (s) {
      return { id: s.id, start: s.start, end: s.end, text: s.text, category: s.category || "", error_class: s.error_class || "",
        evidence: Array.isArray(s.evidence) ? s.evidence.filter(Number.isInteger) : [], no_evidence: s.no_evidence === true,
        note: typeof s.note === "string" ? s.note : "" };
    });
  }

  let spans = readSpans(store.value);
  let nextId = Math.max(config.firstFreeId || 0, 1 + Math.max(-1, ...spans.map(function (s) { return s.id; })));
  let anchor = 0;
  let caret = 0;
  let current = spans.length ? spans[0].id : null; // the span whose evidence the source buttons edit
  let resizing = null; // the id of the span whose extent is being changed
  let core = null;

  function byId(id) { return spans.find(function (s) { return s.id === id; }) || null; }
  function numberOf(span) { return spans.indexOf(span) + 1; }
  function selection() { return [Math.min(anchor, caret), Math.max(anchor, caret)]; }

  function sortSpans() { spans.sort(function (x, y) { return x.start - y.start || x.end - y.end; }); }

  // The draft's JSON, keys in the server's order (so both sides write the same string).
  function writeSpans(delay) {
    store.value = spans.length ? JSON.stringify(spans.map(function (s) {
      const out = {};
      FIELDS.forEach(function (k) { out[k] = s[k]; });
      return out;
    })) : "";
    if (core && delay !== null) core.changed(delay);
  }

  function say(message, isError) {
    notice.textContent = message;
    notice.classList.toggle("is-error", !!isError);
  }

  /* ---- Drawing the summary: segments cut at every span and selection boundary. ---- */
  function renderSummary() {
    const sel = selection();
    const cuts = new Set([0, N, sel[0], sel[1], caret]);
    spans.forEach(function (s) { cuts.add(s.start); cuts.add(s.end); });
    const points = Array.from(cuts).sort(function (x, y) { return x - y; });
    const nodes = [];
    points.forEach(function (a, k) {
      if (a === caret) {
        const mark = document.createElement("span");
        mark.className = "caret";
        mark.setAttribute("aria-hidden", "true");
        nodes.push(mark);
      }
      const b = points[k + 1];
      if (b === undefined) return;
      const seg = document.createElement("span");
      seg.className = "seg";
      const span = spans.find(function (s) { return s.start <= a && b <= s.end; });
      if (span) {
        seg.classList.add("is-span");
        seg.dataset.span = String(span.id);
        if (span.id === current) seg.classList.add("is-current");
        if (b === span.end) { seg.classList.add("span-end"); seg.dataset.n = String(numberOf(span)); }
      }
      if (sel[0] < sel[1] && sel[0] <= a && b <= sel[1]) seg.classList.add("is-selected");
      seg.textContent = slice(a, b);
      nodes.push(seg);
    });
    summaryEl.replaceChildren.apply(summaryEl, nodes);
    const open = sel[0] < sel[1];
    markButton.disabled = !open;
    markButton.textContent = resizing !== null ? "Set extent of span " + numberOf(byId(resizing)) : "Mark span";
    selectionStatus.textContent = open ? "Selected: “" + slice(sel[0], sel[1]) + "”" : "";
  }

  // A DOM boundary point inside the summary -> its code-point offset (the text before it).
  function offsetAt(node, offset) {
    const before = document.createRange();
    before.setStart(summaryEl, 0);
    before.setEnd(node, offset);
    return cpCount(before.toString());
  }

  function domSelection() {
    const sel = window.getSelection();
    if (!sel || !sel.rangeCount) return null;
    const range = sel.getRangeAt(0);
    if (!range.intersectsNode(summaryEl)) return null;
    const whole = document.createRange();
    whole.selectNodeContents(summaryEl);
    const start = range.compareBoundaryPoints(Range.START_TO_START, whole) <= 0 ? 0 : offsetAt(range.startContainer, range.startOffset);
    const end = range.compareBoundaryPoints(Range.END_TO_END, whole) >= 0 ? N : offsetAt(range.endContainer, range.endOffset);
    return [start, end];
  }

  /* ---- The span cards. ---- */
  function el(tag, attributes, text) {
    const node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function choiceGroup(span, legend, name, options, chosen) {
    const group = el("fieldset", { class: "choice-group span-" + name });
    group.append(el("legend", {}, legend));
    options.forEach(function (option) {
      const id = "span-" + span.id + "-" + name + "-" + option.code;
      const row = el("div", { class: "span-option" });
      const input = el("input", { type: "radio", name: "span-" + span.id + "-" + name, id: id, value: option.code, form: CONTROLS });
      input.checked = chosen === option.code;
      const label = el("label", { for: id }, option.name);
      row.append(input, label, el("span", { class: "muted option-definition" }, option.definition));
      group.append(row);
    });
    return group;
  }

  function evidenceText(span) {
    if (!span.evidence.length) return span.no_evidence ? "none: the source does not support it." : "none linked yet.";
    return unitName + (span.evidence.length > 1 ? "s " : " ") + span.evidence.map(function (i) { return i + 1; }).join(", ") + ".";
  }

  function card(span) {
    const n = numberOf(span);
    const item = el("li", { class: "span-card", id: "field-span-" + span.id, tabindex: "-1", "data-span": String(span.id),
      "aria-labelledby": "span-" + span.id + "-heading" });
    if (span.id === current) item.classList.add("is-current");
    const heading = el("h4", { id: "span-" + span.id + "-heading" }, "Span " + n + ": ");
    heading.append(el("q", {}, span.text));
    item.append(heading);
    item.append(choiceGroup(span, "Category", "category", config.categories, span.category));
    item.append(choiceGroup(span, "Intrinsic or extrinsic", "class", config.classes, span.error_class));
    const evidence = el("div", { class: "span-evidence" });
    const line = el("p", { class: "evidence-line" }, "Evidence: ");
    line.append(el("span", { class: "evidence-list", id: "span-" + span.id + "-evidence" }, evidenceText(span)));
    const link = el("button", { type: "button", class: "link-evidence" }, "Link evidence in the source");
    const none = el("p", { class: "no-evidence" });
    const box = el("input", { type: "checkbox", name: "span-" + span.id + "-none", id: "span-" + span.id + "-none", value: "on", form: CONTROLS });
    box.checked = span.no_evidence;
    none.append(box, el("label", { for: "span-" + span.id + "-none" }, "No evidence: the source does not support this (unsupported information)"));
    evidence.append(line, link, none);
    item.append(evidence);
    item.append(el("label", { for: "span-" + span.id + "-note", class: "note-label" }, "Note (optional)"));
    const note = el("textarea", { name: "span-" + span.id + "-note", id: "span-" + span.id + "-note", rows: "2", maxlength: "2000",
      form: CONTROLS });
    note.value = span.note;
    item.append(note);
    const actions = el("p", { class: "span-actions" });
    actions.append(el("button", { type: "button", class: "change-extent" }, "Change extent"),
      el("button", { type: "button", class: "delete-span" }, "Delete span " + n));
    item.append(actions, el("p", { class: "field-error", id: "error-span-" + span.id }));
    return item;
  }

  function renderCards() {
    listEl.replaceChildren.apply(listEl, spans.map(card));
    emptyEl.hidden = spans.length > 0;
  }

  function renderUnits() {
    const span = byId(current);
    unitButtons.forEach(function (button) {
      button.disabled = !span;
      const pressed = !!span && span.evidence.indexOf(Number(button.dataset.unit)) >= 0;
      button.setAttribute("aria-pressed", pressed ? "true" : "false");
    });
  }

  function setCurrent(id) {
    if (current === id) return;
    current = id;
    listEl.querySelectorAll(".span-card").forEach(function (c) { c.classList.toggle("is-current", Number(c.dataset.span) === id); });
    renderSummary();
    renderUnits();
  }

  function renderAll() {
    renderSummary();
    renderCards();
    renderUnits();
  }

  function cardOf(span) { return document.getElementById("field-span-" + span.id); }

  function focusCard(span) {
    const item = cardOf(span);
    if (!item) return;
    const target = item.querySelector("input[type=radio]:checked") || item.querySelector("input[type=radio]");
    (target || item).focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest" });
  }

  /* ---- Marking, changing and deleting spans. ---- */
  function mark(start, end) {
    const range = tidy(start, end);
    if (!range) {
      say("Select some text of the summary first.", true);
      return;
    }
    const clash = spans.find(function (s) { return s.id !== resizing && s.start < range[1] && range[0] < s.end; });
    if (clash) {
      say("Spans may not overlap: this selection overlaps span " + numberOf(clash) + " (“" + clash.text + "”).", true);
      return;
    }
    let span = resizing !== null ? byId(resizing) : null;
    if (span) {
      span.start = range[0];
      span.end = range[1];
      span.text = slice(range[0], range[1]);
    } else {
      span = { id: nextId, start: range[0], end: range[1], text: slice(range[0], range[1]), category: "", error_class: "",
        evidence: [], no_evidence: false, note: "" };
      nextId += 1;
      spans.push(span);
    }
    const changedExtent = resizing !== null;
    resizing = null;
    sortSpans();
    current = span.id;
    anchor = caret = range[1];
    if (noneBox.checked) noneBox.checked = false; // a span contradicts "no inconsistency"
    const sel = window.getSelection();
    if (sel) sel.removeAllRanges();
    writeSpans(0);
    renderAll();
    say((changedExtent ? "Changed span " : "Marked span ") + numberOf(span) + ": “" + span.text + "”." +
      (changedExtent ? "" : " Choose its category."));
    focusCard(span);
  }

  function remove(span) {
    const n = numberOf(span);
    spans = spans.filter(function (s) { return s !== span; });
    if (current === span.id) current = spans.length ? spans[Math.min(n - 1, spans.length - 1)].id : null;
    if (resizing === span.id) resizing = null;
    writeSpans(0);
    renderAll();
    say("Deleted span " + n + " (“" + span.text + "”).");
    const next = byId(current);
    if (next) focusCard(next); else summaryEl.focus();
  }

  function startResizing(span) {
    resizing = span.id;
    current = span.id;
    anchor = span.start;
    caret = span.end;
    renderAll();
    say("Select the new extent of span " + numberOf(span) + ", then Enter or “Set extent”; Esc keeps it as it is.");
    summaryEl.focus();
  }

  function confirmSelection() {
    const sel = selection();
    if (sel[0] < sel[1]) return mark(sel[0], sel[1]);
    const inside = spans.find(function (s) { return s.start <= caret && caret < s.end; });
    if (inside) {
      setCurrent(inside.id);
      focusCard(inside);
    } else {
      say("Select text first: Shift with the arrow keys, or the mouse.", true);
    }
  }

  /* ---- Events: registered before the core's, so the JSON is written before it saves. ---- */
  summaryEl.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") return; // the core submits
    let key = event.key;
    if (getComputedStyle(summaryEl).direction === "rtl" && (key === "ArrowLeft" || key === "ArrowRight")) {
      key = key === "ArrowLeft" ? "ArrowRight" : "ArrowLeft";
    }
    const byWord = event.ctrlKey || event.altKey;
    let to = null;
    if (key === "ArrowRight") to = byWord ? nextWordEnd(caret) : nextBoundary(caret);
    else if (key === "ArrowLeft") to = byWord ? prevWordStart(caret) : prevBoundary(caret);
    else if (key === "Home") to = 0;
    else if (key === "End") to = N;
    else if (key === "Enter") {
      event.preventDefault();
      confirmSelection();
      return;
    } else if (key === "Escape") {
      event.preventDefault();
      if (resizing !== null) say("Kept span " + numberOf(byId(resizing)) + " as it was.");
      resizing = null;
      anchor = caret;
      renderSummary();
      return;
    } else {
      return;
    }
    event.preventDefault();
    caret = to;
    if (!event.shiftKey) anchor = caret;
    renderSummary();
  });

  // A drag that starts in the summary may end anywhere.
  let pressing = false;
  summaryEl.addEventListener("mousedown", function () { pressing = true; });
  document.addEventListener("mouseup", function () {
    if (!pressing) return;
    pressing = false;
    // After the browser has settled the selection.
    setTimeout(function () {
      const range = domSelection();
      if (!range) return;
      if (range[0] === range[1]) {
        caret = anchor = snapDown(range[0]);
        const inside = spans.find(function (s) { return s.start <= caret && caret < s.end; });
        if (inside) {
          setCurrent(inside.id);
          cardOf(inside).scrollIntoView({ block: "nearest" });
        }
        renderSummary();
        return;
      }
      const tidied = tidy(range[0], range[1]);
      if (!tidied) return;
      anchor = tidied[0];
      caret = tidied[1];
      window.getSelection().removeAllRanges();
      renderSummary();
      summaryEl.focus({ preventScroll: true });
      say("Press Enter or “" + markButton.textContent + "” to mark “" + slice(tidied[0], tidied[1]) + "”.");
    }, 0);
  });

  markButton.addEventListener("click", confirmSelection);

  unitButtons.forEach(function (button) {
    button.addEventListener("click", function () {
      const span = byId(current);
      if (!span) return;
      const index = Number(button.dataset.unit);
      const at = span.evidence.indexOf(index);
      if (at >= 0) span.evidence.splice(at, 1);
      else span.evidence.push(index);
      span.evidence.sort(function (x, y) { return x - y; });
      if (span.evidence.length && span.no_evidence) {
        span.no_evidence = false;
        const box = document.getElementById("span-" + span.id + "-none");
        if (box) box.checked = false;
      }
      document.getElementById("span-" + span.id + "-evidence").textContent = evidenceText(span);
      writeSpans(0);
      renderUnits();
      if (core) core.revalidateShown();
    });
    button.addEventListener("keydown", function (event) {
      const span = byId(current);
      if (event.key === "Escape" && span) {
        event.preventDefault();
        const link = cardOf(span).querySelector(".link-evidence");
        link.focus();
        cardOf(span).scrollIntoView({ block: "nearest" });
      }
    });
  });

  listEl.addEventListener("click", function (event) {
    const item = event.target.closest(".span-card");
    const span = item && byId(Number(item.dataset.span));
    if (!span) return;
    if (event.target.closest(".delete-span")) remove(span);
    else if (event.target.closest(".change-extent")) startResizing(span);
    else if (event.target.closest(".link-evidence")) {
      setCurrent(span.id);
      const first = unitButtons.find(function (b) { return b.getAttribute("aria-pressed") === "true"; }) || unitButtons[0];
      if (first) {
        first.focus();
        first.scrollIntoView({ block: "nearest" });
      }
    }
  });

  listEl.addEventListener("focusin", function (event) {
    const item = event.target.closest(".span-card");
    if (item) setCurrent(Number(item.dataset.span));
  });

  form.addEventListener("change", function (event) {
    const item = event.target.closest(".span-card");
    const span = item && byId(Number(item.dataset.span));
    if (!span) return;
    const name = event.target.name || "";
    if (name.endsWith("-category")) span.category = event.target.value;
    else if (name.endsWith("-class")) span.error_class = event.target.value;
    else if (name.endsWith("-none")) {
      span.no_evidence = event.target.checked;
      if (span.no_evidence && span.evidence.length) {
        span.evidence = [];
        renderUnits();
      }
      document.getElementById("span-" + span.id + "-evidence").textContent = evidenceText(span);
    } else {
      return;
    }
    writeSpans(null); // the core saves on this same change
  });

  form.addEventListener("input", function (event) {
    const item = event.target.closest(".span-card");
    const span = item && byId(Number(item.dataset.span));
    if (span && event.target.tagName === "TEXTAREA") {
      span.note = event.target.value;
      writeSpans(null); // the core saves a moment after typing stops
    }
  });

  /* ---- Checks before submitting (the server checks again). ---- */
  function problems() {
    const found = [];
    spans.forEach(function (s, k) {
      const missing = [];
      if (!s.category) missing.push("its category");
      if (!s.error_class) missing.push("intrinsic or extrinsic");
      if (!s.evidence.length && !s.no_evidence) missing.push("its evidence (or that there is none)");
      if (missing.length) {
        found.push({ key: "span-" + s.id, label: "Span " + (k + 1) + " (“" + s.text + "”)", message: "Choose " + missing.join(", ") + "." });
      }
    });
    if (!spans.length && !noneBox.checked) {
      found.push({ key: "no_inconsistency", label: "Summary", message: "Mark the inconsistent spans, or confirm that this summary has no inconsistency." });
    } else if (spans.length && noneBox.checked) {
      found.push({ key: "no_inconsistency", label: "Summary", message: "You marked spans and confirmed there is no inconsistency: untick the box." });
    }
    return found;
  }

  function focusField(key) {
    const span = key.indexOf("span-") === 0 ? byId(Number(key.slice(5))) : null;
    if (span) {
      const item = cardOf(span);
      const open = !span.category ? item.querySelector("input[name$='-category']")
        : !span.error_class ? item.querySelector("input[name$='-class']") : item.querySelector(".link-evidence");
      setCurrent(span.id);
      (open || item).focus({ preventScroll: true });
      item.scrollIntoView({ block: "center" });
    } else if (key === "no_inconsistency") {
      noneBox.focus();
    } else {
      summaryEl.focus();
    }
  }

  renderAll();
  Object.keys(config.errors || {}).forEach(function (key) {
    const holder = document.getElementById("error-" + key);
    if (holder && !holder.textContent) holder.textContent = config.errors[key];
  });

  core = window.Attest.draftForm(form, {
    problems: problems,
    focusField: focusField,
    afterApply: function () {
      spans = readSpans(store.value);
      nextId = Math.max(nextId, 1 + Math.max(-1, ...spans.map(function (s) { return s.id; })));
      if (!byId(current)) current = spans.length ? spans[0].id : null;
      resizing = null;
      renderAll();
    },
    resumeDefault: function () { summaryEl.focus(); },
  });
  core.start();
})();
