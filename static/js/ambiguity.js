/* Ambiguity screen (MADISSE) on top of the shared draft-form core (static/js/draftform.js):
 * y / n answer, t goes to the types, d to the description, checks in place before submitting.
 * The type and description are asked only after "yes". The form works without this file. */
(function () {
  "use strict";

  const form = document.getElementById("ambiguity-form");
  if (!form || !window.Attest) return;

  const details = document.getElementById("ambiguity-details");
  const description = document.getElementById("description");

  function answer() {
    const checked = form.querySelector("input[name=ambiguous]:checked");
    return checked ? checked.value : "";
  }

  function chosenType() {
    const checked = form.querySelector("input[name=type]:checked");
    return checked ? checked.value : "";
  }

  // With "no" the type and description do not apply: they stay in the draft (a change of mind
  // keeps them) but are out of the way and out of the tab order.
  function refresh() {
    const no = answer() === "no";
    details.hidden = no;
    details.querySelectorAll("input, textarea, summary").forEach(function (el) {
      if (no) el.setAttribute("tabindex", "-1");
      else el.removeAttribute("tabindex");
    });
  }

  function problems() {
    const found = [];
    const value = answer();
    if (!value) {
      found.push({ key: "ambiguous", label: "Ambiguity", message: "Say whether an ambiguity affects the evaluation of this sentence." });
    } else if (value === "yes") {
      if (!chosenType()) found.push({ key: "type", label: "Type", message: "Choose the type of ambiguity." });
      if (!description.value.trim()) {
        found.push({ key: "description", label: "Description", message: "Describe the ambiguity: which words, which readings." });
      }
    }
    return found;
  }

  function focusTypes() {
    const target = form.querySelector("input[name=type]:checked") || form.querySelector("input[name=type]");
    if (target) {
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "nearest" });
    }
  }

  function choose(value) {
    const radio = document.getElementById("ambiguous-" + value);
    if (!radio.checked) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }

  form.addEventListener("change", function (event) {
    if (event.target.name === "ambiguous") refresh();
  });

  const core = window.Attest.draftForm(form, {
    problems: problems,
    afterApply: refresh,
    focusField: function (key) {
      if (key === "type") return focusTypes();
      const target = key === "description" ? description : form.querySelector("input[name=ambiguous]:checked")
        || document.getElementById("ambiguous-yes");
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "center" });
    },
    resumeDefault: function () {
      if (!answer()) document.getElementById("ambiguous-yes").focus({ preventScroll: true });
      else if (answer() === "yes" && !chosenType()) focusTypes();
      else if (answer() === "yes") description.focus({ preventScroll: true });
    },
  });

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") return; // the core submits
    if (event.key === "Escape" && event.target === description) {
      event.preventDefault();
      focusTypes();
      return;
    }
    if (core.isTyping(event.target) || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (event.key === "y") {
      event.preventDefault();
      choose("yes");
      if (!chosenType()) focusTypes();
      else document.getElementById("ambiguous-yes").focus();
    } else if (event.key === "n") {
      event.preventDefault();
      choose("no");
      document.getElementById("ambiguous-no").focus();
    } else if (event.key === "t" && answer() !== "no") {
      event.preventDefault();
      focusTypes();
    } else if (event.key === "d" && answer() !== "no") {
      event.preventDefault();
      description.focus();
    }
  });

  refresh();
  core.start();
})();
