// Review screens (templates/protocols/review_unit.html): single-key shortcuts for the one form
// of the page. A key named in an input's data-key chooses that radio or ticks that checkbox
// (data-then moves on to the named field, e.g. the note an overturn needs); Esc leaves a note;
// Ctrl+Enter (Cmd+Enter) submits. The forms work the same without this script.
(function () {
  "use strict";

  const form = document.querySelector("form[data-shortcuts]");
  if (!form) return;

  function isTyping(el) {
    if (!el) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(el.type);
  }

  function home() {
    return form.querySelector("input[data-key]:checked") || form.querySelector("input[data-key]");
  }

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (event.key === "Escape" && isTyping(event.target) && form.contains(event.target)) {
      const back = home();
      if (back) back.focus();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    const input = Array.from(form.querySelectorAll("input[data-key]")).find((el) => el.dataset.key === event.key);
    if (!input) return;
    event.preventDefault();
    input.checked = input.type === "checkbox" ? !input.checked : true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    const next = input.dataset.then && document.getElementById(input.dataset.then);
    (next || input).focus();
  });

  // A new choice answers the message of its group.
  form.addEventListener("change", function (event) {
    const group = event.target.closest("fieldset[aria-describedby]");
    const message = group && document.getElementById(group.getAttribute("aria-describedby"));
    if (message && event.target.matches("input[data-key]")) message.textContent = "";
  });

  // After a failed submit, start where the first problem is.
  const summary = document.getElementById("error-summary");
  if (summary) summary.focus();
})();
