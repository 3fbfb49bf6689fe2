/* TofuEval task 1 screen: sentences, keyboard and the checks before submitting, on top of the
 * shared draft-form core (static/js/draftform.js: autosave, conflicts, active time, resume).
 * The form works without either file; everything here is an enhancement. */
(function () {
  "use strict";

  const form = document.getElementById("task1-form");
  if (!form || !window.Attest) return;

  const sentences = Array.from(form.querySelectorAll("fieldset.sentence"));
  let current = -1; // index of the current sentence

  /* ---- Sentences: explanation box, current sentence. ---- */
  function labelOf(fieldset) {
    const checked = fieldset.querySelector("input[type=radio]:checked");
    return checked ? checked.value : "";
  }

  function refreshSentence(fieldset) {
    fieldset.classList.toggle("is-inconsistent", labelOf(fieldset) === "inconsistent");
  }
  sentences.forEach(refreshSentence);

  function setCurrent(index) {
    if (index < 0 || index >= sentences.length) return;
    if (sentences[current]) sentences[current].classList.remove("is-current");
    current = index;
    sentences[current].classList.add("is-current");
  }

  function focusSentence(index) {
    if (!sentences.length) return;
    index = Math.max(0, Math.min(index, sentences.length - 1));
    setCurrent(index);
    const fieldset = sentences[index];
    const target = fieldset.querySelector("input[type=radio]:checked") || fieldset.querySelector("input[type=radio]");
    target.focus({ preventScroll: true });
    fieldset.scrollIntoView({ block: "nearest" });
  }

  function explanationOf(fieldset) {
    return fieldset.querySelector("textarea");
  }

  function mark(fieldset, value) {
    const radio = fieldset.querySelector("input[type=radio][value=" + value + "]");
    if (!radio.checked) {
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
    }
    return radio;
  }

  function summaryOf(element) {
    return element ? element.closest(".t1-summary") : null;
  }

  function currentSummary() {
    return summaryOf(document.activeElement) || summaryOf(sentences[current]);
  }

  form.addEventListener("change", function (event) {
    const fieldset = event.target.closest("fieldset.sentence");
    if (fieldset) refreshSentence(fieldset);
  });
  form.addEventListener("focusin", function (event) {
    const fieldset = event.target.closest("fieldset.sentence");
    if (fieldset) setCurrent(sentences.indexOf(fieldset));
  });

  /* ---- Validation in place (the server checks again). ---- */
  function problems() {
    const found = [];
    const topic = form.querySelector("#field-topic_category");
    if (topic && !form.querySelector("input[name=topic_category]:checked")) {
      found.push({ key: "topic_category", label: "Topic", message: "Choose whether the topic is main, marginal or irrelevant." });
    }
    form.querySelectorAll(".t1-summary").forEach(function (section) {
      const position = section.id.replace("summary-", "");
      section.querySelectorAll("fieldset.sentence").forEach(function (fieldset, n) {
        const pk = fieldset.dataset.sentence;
        const where = "Summary " + position + ", sentence " + (n + 1);
        const label = labelOf(fieldset);
        if (!label) {
          found.push({ key: "s-" + pk, label: where, message: "Label this sentence consistent or inconsistent." });
        } else if (label === "inconsistent" && !explanationOf(fieldset).value.trim()) {
          found.push({ key: "e-" + pk, label: where, message: "Explain why this sentence is inconsistent." });
        }
      });
      const pk = section.dataset.summary;
      const flagged = form.querySelector("input[name='n-" + pk + "']").checked;
      if (!flagged && !section.querySelector("input[name='r-" + pk + "']:checked")) {
        found.push({ key: "r-" + pk, label: "Summary " + position + ", relevance",
          message: "Rate the relevance of summary " + position + " (or mark it not a summary)." });
      }
    });
    return found;
  }

  function focusField(key) {
    const group = document.getElementById("field-" + key);
    if (!group) return;
    const control = key.indexOf("e-") === 0 ? document.getElementById(key)
      : group.querySelector("input:checked") || group.querySelector("input");
    (control || group).focus({ preventScroll: true });
    (control || group).scrollIntoView({ block: "center" });
  }

  const core = window.Attest.draftForm(form, {
    problems: problems,
    focusField: focusField,
    afterApply: function () { sentences.forEach(refreshSentence); },
    afterConflict: function () { focusSentence(Math.max(current, 0)); },
    // An explanation box that is hidden (its sentence is consistent) cannot take the focus.
    resumeElement: function (element) {
      if (element.closest(".explanation") && !element.closest(".is-inconsistent")) {
        element = element.closest("fieldset.sentence").querySelector("input[type=radio]");
      }
      const fieldset = element.closest("fieldset.sentence");
      if (fieldset) setCurrent(sentences.indexOf(fieldset));
      return element;
    },
    resumeDefault: function () {
      const open = sentences.findIndex(function (f) { return !labelOf(f); });
      if (open >= 0) {
        focusSentence(open);
        sentences[open].scrollIntoView({ block: "center" });
      }
    },
  });

  /* ---- Keyboard. ---- */
  const TOPIC_KEYS = { m: "main", g: "marginal", x: "irrelevant" };

  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") return; // the core submits
    if (core.isTyping(target)) {
      if (event.key === "Escape" && target.tagName === "TEXTAREA") {
        const fieldset = target.closest("fieldset.sentence");
        if (fieldset) {
          event.preventDefault();
          focusSentence(sentences.indexOf(fieldset));
        }
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const inSentence = !!target.closest && !!target.closest("fieldset.sentence");
    const key = event.key;

    if (key === "j" || (key === "ArrowDown" && inSentence)) {
      event.preventDefault();
      focusSentence(current + 1);
    } else if (key === "k" || (key === "ArrowUp" && inSentence)) {
      event.preventDefault();
      focusSentence(current < 0 ? 0 : current - 1);
    } else if ((key === "c" || key === "i" || key === "e") && sentences[current]) {
      event.preventDefault();
      const fieldset = sentences[current];
      if (key === "c") {
        mark(fieldset, "consistent").focus();
      } else if (key === "i") {
        mark(fieldset, "inconsistent");
        explanationOf(fieldset).focus();
      } else if (labelOf(fieldset) === "inconsistent") {
        explanationOf(fieldset).focus();
      }
    } else if (/^[1-5]$/.test(key)) {
      const section = currentSummary();
      const radio = section && section.querySelector("input[name^='r-'][value='" + key + "']");
      if (radio) {
        event.preventDefault();
        if (!radio.checked) {
          radio.checked = true;
          radio.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    } else if (key === "n") {
      const section = currentSummary();
      const box = section && section.querySelector("input[name^='n-']");
      if (box) {
        event.preventDefault();
        box.checked = !box.checked;
        box.dispatchEvent(new Event("change", { bubbles: true }));
      }
    } else if (TOPIC_KEYS[key]) {
      const radio = form.querySelector("input[name=topic_category][value=" + TOPIC_KEYS[key] + "]");
      if (radio) {
        event.preventDefault();
        if (!radio.checked) {
          radio.checked = true;
          radio.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    }
  });

  core.start();
})();
