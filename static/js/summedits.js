/* SummEdits screen on top of the shared draft-form core (static/js/draftform.js): step 1 by
 * Tab and arrows (Ctrl+Enter verifies); step 3 with single keys c / i / b that label the current
 * edit and move on to the next unlabelled one, j / k to move, a progress bar, Ctrl+Enter submits.
 * The form works without either file. */
(function () {
  "use strict";

  const form = document.getElementById("summedits-form");
  if (!form || !window.Attest) return;

  const edits = Array.from(form.querySelectorAll("fieldset.edit"));
  const progress = document.getElementById("label-progress");
  const count = document.getElementById("label-count");
  const KEYS = { c: "consistent", i: "inconsistent", b: "borderline" };
  let current = -1;

  function labelOf(fieldset) {
    const checked = fieldset.querySelector("input[type=radio]:checked");
    return checked ? checked.value : "";
  }

  function updateProgress() {
    if (!progress) return;
    const done = edits.filter(labelOf).length;
    progress.value = done;
    count.textContent = done + " of " + edits.length;
  }

  function setCurrent(index) {
    if (index < 0 || index >= edits.length) return;
    if (edits[current]) edits[current].classList.remove("is-current");
    current = index;
    edits[current].classList.add("is-current");
  }

  function focusEdit(index) {
    if (!edits.length) return;
    index = Math.max(0, Math.min(index, edits.length - 1));
    setCurrent(index);
    const fieldset = edits[index];
    const target = fieldset.querySelector("input:checked") || fieldset.querySelector("input");
    target.focus({ preventScroll: true });
    fieldset.scrollIntoView({ block: "nearest" });
  }

  function nextOpen(after) {
    for (let k = 1; k <= edits.length; k++) {
      const index = (after + k) % edits.length;
      if (!labelOf(edits[index])) return index;
    }
    return -1;
  }

  function problems() {
    const found = [];
    form.querySelectorAll("fieldset.choice-group[id^='field-']").forEach(function (group) {
      const name = group.id.replace("field-", "");
      if (!group.querySelector("input:checked")) {
        found.push({ key: name, label: group.querySelector("legend").textContent.trim(), message: "Answer this question." });
      }
    });
    edits.forEach(function (fieldset, n) {
      if (!labelOf(fieldset)) {
        found.push({ key: "l-" + fieldset.dataset.edit, label: "Edit " + (n + 1), message: "Label this edit." });
      }
    });
    return found;
  }

  form.addEventListener("change", updateProgress);
  form.addEventListener("focusin", function (event) {
    const fieldset = event.target.closest("fieldset.edit");
    if (fieldset) setCurrent(edits.indexOf(fieldset));
  });

  const core = window.Attest.draftForm(form, {
    problems: problems,
    afterApply: updateProgress,
    afterConflict: function () { focusEdit(Math.max(current, 0)); },
    resumeElement: function (element) {
      const fieldset = element.closest("fieldset.edit");
      if (fieldset) setCurrent(edits.indexOf(fieldset));
      return element;
    },
    resumeDefault: function () {
      if (edits.length) {
        const open = nextOpen(-1);
        focusEdit(open >= 0 ? open : 0);
        return;
      }
      const first = form.querySelector("fieldset.choice-group input");
      if (first) first.focus();
    },
  });

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") return; // the core submits
    if (!edits.length || core.isTyping(event.target)) return;
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const key = event.key;
    const inEdit = !!event.target.closest && !!event.target.closest("fieldset.edit");
    if (KEYS[key]) {
      event.preventDefault();
      if (current < 0) setCurrent(0);
      const radio = edits[current].querySelector("input[value=" + KEYS[key] + "]");
      if (!radio.checked) {
        radio.checked = true;
        radio.dispatchEvent(new Event("change", { bubbles: true }));
      }
      const open = nextOpen(current);
      focusEdit(open >= 0 ? open : current);
    } else if (key === "j" || (key === "ArrowDown" && inEdit)) {
      event.preventDefault();
      focusEdit(current + 1);
    } else if (key === "k" || (key === "ArrowUp" && inEdit)) {
      event.preventDefault();
      focusEdit(current < 0 ? 0 : current - 1);
    }
  });

  updateProgress();
  core.start();
})();
