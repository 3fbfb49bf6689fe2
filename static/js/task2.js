/* TofuEval task 2 screen on top of the shared draft-form core (static/js/draftform.js).
 * Before the commit: key points added, edited, moved and removed in place, renumbered so the
 * draft always holds kp-1..kp-n in order. After it: ticks per summary, with keys.
 * The form works without either file (the buttons then post to the server). */
(function () {
  "use strict";

  const form = document.getElementById("task2-form");
  if (!form || !window.Attest) return;

  const list = document.getElementById("key-points");
  const cards = Array.from(form.querySelectorAll(".t2-summary"));
  const maxPoints = parseInt(form.dataset.maxKeyPoints, 10) || 20;
  let current = -1; // index of the current summary card

  /* ---- Key points (before the commit). ---- */
  function rows() {
    return list ? Array.from(list.querySelectorAll("li.key-point")) : [];
  }

  function inputOf(row) {
    return row.querySelector("input[type=text]");
  }

  // Names, ids, labels and button values follow the position: kp-1 is always the first row.
  function renumber() {
    rows().forEach(function (row, i) {
      const k = i + 1;
      const name = "kp-" + k;
      const input = inputOf(row);
      row.id = "field-" + name;
      input.name = name;
      input.id = name;
      input.setAttribute("aria-describedby", "error-" + name);
      input.placeholder = k > 1 && k === rows().length ? "Another key point" : "";
      row.querySelector("label").htmlFor = name;
      row.querySelector("label").textContent = "Key point " + k;
      row.querySelector(".field-error").id = "error-" + name;
      [["kp-up", "up", "Move key point " + k + " up"], ["kp-down", "down", "Move key point " + k + " down"],
        ["kp-remove", "remove", "Remove key point " + k]].forEach(function (spec) {
        const button = row.querySelector("." + spec[0]);
        button.value = spec[1] + "-" + k;
        button.setAttribute("aria-label", spec[2]);
      });
      row.querySelector(".kp-up").disabled = i === 0;
      row.querySelector(".kp-down").disabled = i === rows().length - 1;
    });
    const filled = rows().filter(function (row) { return inputOf(row).value.trim(); }).length;
    const count = document.getElementById("kp-count");
    count.textContent = filled === 1 ? "1 key point" : filled + " key points";
    document.getElementById("kp-add").disabled = rows().length >= maxPoints;
  }

  function addRow(after) {
    if (rows().length >= maxPoints) return null;
    const template = rows()[0];
    const row = template.cloneNode(true);
    row.classList.remove("has-error");
    inputOf(row).value = "";
    inputOf(row).removeAttribute("aria-invalid");
    row.querySelector(".field-error").textContent = "";
    if (after) after.after(row); else list.append(row);
    renumber();
    return row;
  }

  function moveRow(row, step) {
    const all = rows();
    const i = all.indexOf(row);
    const j = i + step;
    if (j < 0 || j >= all.length) return;
    if (step < 0) all[j].before(row); else all[j].after(row);
    renumber();
    core.changed(0);
    inputOf(row).focus();
  }

  function removeRow(row) {
    const all = rows();
    const i = all.indexOf(row);
    if (all.length === 1) {
      inputOf(row).value = "";
    } else {
      row.remove();
    }
    renumber();
    core.changed(0);
    const left = rows();
    inputOf(left[Math.min(i, left.length - 1)]).focus();
    return i;
  }

  function pointProblems() {
    const found = [];
    const seen = {};
    let filled = 0;
    rows().forEach(function (row, i) {
      const text = inputOf(row).value.trim();
      if (!text) return;
      filled += 1;
      const folded = text.toLowerCase();
      if (seen[folded]) {
        found.push({ key: "kp-" + (i + 1), label: "Key point " + (i + 1), message: "It repeats key point " + seen[folded] + "." });
      } else {
        seen[folded] = i + 1;
      }
    });
    if (!filled) found.unshift({ key: "kp-1", label: "Key points", message: "Write at least one key point before you commit." });
    return found;
  }

  /* ---- Coverage (after the commit). ---- */
  function noneOf(card) {
    return card.querySelector(".coverage-none input");
  }

  function ticksOf(card) {
    return Array.from(card.querySelectorAll("input[data-k]"));
  }

  function setCurrent(index) {
    if (index < 0 || index >= cards.length) return;
    if (cards[current]) cards[current].classList.remove("is-current");
    current = index;
    cards[current].classList.add("is-current");
  }

  function focusCard(index) {
    if (!cards.length) return;
    index = Math.max(0, Math.min(index, cards.length - 1));
    setCurrent(index);
    const card = cards[index];
    const target = card.querySelector("input:checked") || card.querySelector("input");
    target.focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
  }

  function toggle(box) {
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    box.focus({ preventScroll: true });
  }

  function coverageProblems() {
    const found = [];
    cards.forEach(function (card) {
      const position = card.id.replace("summary-", "");
      const ticked = ticksOf(card).some(function (box) { return box.checked; });
      if (!ticked && !noneOf(card).checked) {
        found.push({ key: "cov-" + card.dataset.summary, label: "Summary " + position,
          message: "Tick the key points summary " + position + " covers, or that it covers none of them." });
      }
    });
    return found;
  }

  /* ---- Events. ---- */
  if (list) {
    document.getElementById("kp-add").hidden = false;
    document.getElementById("kp-add").addEventListener("click", function () {
      const last = rows()[rows().length - 1];
      const row = inputOf(last).value.trim() ? addRow(last) : last;
      if (row) inputOf(row).focus();
    });
    list.addEventListener("click", function (event) {
      const button = event.target.closest("button");
      if (!button) return;
      event.preventDefault(); // done here, without a round trip
      const row = button.closest("li.key-point");
      if (button.classList.contains("kp-up")) moveRow(row, -1);
      else if (button.classList.contains("kp-down")) moveRow(row, 1);
      else if (button.classList.contains("kp-remove")) removeRow(row);
    });
    list.addEventListener("input", renumber);
  }

  form.addEventListener("change", function (event) {
    const box = event.target;
    const card = box.closest(".t2-summary");
    if (!card || !box.checked) return;
    // "None of them" and a ticked key point exclude each other.
    if (box === noneOf(card)) ticksOf(card).forEach(function (other) { other.checked = false; });
    else noneOf(card).checked = false;
  });
  form.addEventListener("focusin", function (event) {
    const card = event.target.closest(".t2-summary");
    if (card) setCurrent(cards.indexOf(card));
  });

  function focusField(key) {
    const group = document.getElementById("field-" + key);
    if (!group) return;
    const control = group.querySelector("input:checked") || group.querySelector("input");
    (control || group).focus({ preventScroll: true });
    (control || group).scrollIntoView({ block: "center" });
  }

  const core = window.Attest.draftForm(form, {
    problems: list ? pointProblems : coverageProblems,
    focusField: focusField,
    // A draft from another tab may hold more or fewer key points than there are boxes.
    beforeApply: function (draft) {
      if (!list) return;
      let wanted = 1;
      Object.keys(draft).forEach(function (key) {
        const match = /^kp-(\d+)$/.exec(key);
        if (match && draft[key] !== "") wanted = Math.max(wanted, parseInt(match[1], 10));
      });
      while (rows().length < Math.min(wanted, maxPoints)) addRow(null);
      while (rows().length > wanted) rows()[rows().length - 1].remove();
      renumber();
    },
    afterApply: function () { if (list) renumber(); },
    afterConflict: function () { if (cards.length) focusCard(Math.max(current, 0)); },
    resumeElement: function (element) {
      const card = element.closest(".t2-summary");
      if (card) setCurrent(cards.indexOf(card));
      return element;
    },
    resumeDefault: function () {
      if (list) {
        const empty = rows().find(function (row) { return !inputOf(row).value.trim(); }) || rows()[rows().length - 1];
        inputOf(empty).focus();
        return;
      }
      const open = cards.findIndex(function (card) {
        return !noneOf(card).checked && !ticksOf(card).some(function (box) { return box.checked; });
      });
      focusCard(open >= 0 ? open : 0);
    },
  });
  if (list) renumber();

  /* ---- Keyboard. ---- */
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") return; // the core submits
    if (event.isComposing) return;
    const row = list && target.closest && target.closest("li.key-point");
    if (row && target.type === "text") {
      if (event.key === "Enter") {
        event.preventDefault();
        const next = row.nextElementSibling || (target.value.trim() ? addRow(row) : null);
        if (next) inputOf(next).focus();
      } else if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        moveRow(row, event.key === "ArrowUp" ? -1 : 1);
      } else if (event.key === "Backspace" && !target.value && rows().length > 1) {
        event.preventDefault();
        const i = removeRow(row);
        inputOf(rows()[Math.max(0, i - 1)]).focus();
      }
      return;
    }
    if (!cards.length || core.isTyping(target)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    const inCard = !!target.closest && !!target.closest(".t2-summary");
    if (key === "j" || (key === "ArrowDown" && inCard)) {
      event.preventDefault();
      focusCard(current + 1);
    } else if (key === "k" || (key === "ArrowUp" && inCard)) {
      event.preventDefault();
      focusCard(current < 0 ? 0 : current - 1);
    } else if (/^[0-9]$/.test(key)) {
      if (current < 0) setCurrent(0);
      const card = cards[current];
      const box = key === "0" ? noneOf(card) : card.querySelector("input[data-k='" + key + "']");
      if (box) {
        event.preventDefault();
        toggle(box);
      }
    }
  });

  core.start();
})();
