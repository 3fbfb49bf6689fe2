"""Span marking in Chromium: one span selected with the mouse, one with the keyboard, each with its
evidence; the draft survives a reload; overlaps are refused; the submit records code-point offsets."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary
from annotation.protocols import setup
from annotation.protocols.models import Assignment, Judgment, Protocol
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEM = "secret-summarizer-kappa"
SAVED = re.compile(r"^Saved \d")
TURNS = [
    {"speaker": "Lena", "text": "Let's meet at half past four at the station."},
    {"speaker": "Tom", "text": "Fine. Can you bring the tickets?"},
    {"speaker": "Lena", "text": "Sure, I have them."},
]
# An astral emoji before both spans and a line break between them: UTF-16 offsets would be off.
TEXT = "Lena 🎉 and Tom will meet at 5 pm at the station.\nTom will bring the tickets."


@pytest.fixture
def assignment(project, annotator):
    document = Document.objects.create(
        project=project,
        external_id="dlg-1",
        kind="dialogue",
        turns=TURNS,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in TURNS),
    )
    Summary.objects.create(project=project, document=document, external_id="s-1", system=SYSTEM, text=TEXT)
    plan = setup.Plan(name="Spans", slug="spans", annotators=[annotator], protocol=Protocol.SPANS)
    campaign = setup.create_campaign(project=project, plan=plan)
    return Assignment.objects.get(item__campaign=campaign)


def drag_over(page, quoted: str, occurrence: int = 0):
    """Select `quoted` in the summary with a real mouse drag, from its first to its last character."""
    box = page.evaluate(
        """([quoted, occurrence]) => {
          const node = document.querySelector('#span-summary .seg').firstChild;
          let at = -1;
          for (let n = 0; n <= occurrence; n++) at = node.data.indexOf(quoted, at + 1);
          const rect = (a, b) => { const r = document.createRange(); r.setStart(node, a); r.setEnd(node, b); return r.getBoundingClientRect(); };
          const first = rect(at, at + 1), last = rect(at + quoted.length - 1, at + quoted.length);
          return {x1: first.left + 1, y1: first.top + first.height / 2, x2: last.right - 1, y2: last.top + last.height / 2};
        }""",
        [quoted, occurrence],
    )
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=8)
    page.mouse.up()


def card(page, n: int):
    return page.locator("#span-list > li").nth(n - 1)


def test_a_span_by_mouse_and_one_by_keyboard_with_evidence_survive_a_reload(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    page.goto(f"{base}/p/demo/assignments/{assignment.pk}/")
    page.wait_for_load_state("networkidle")
    assert SYSTEM not in page.content()
    assert page.get_attribute("#span-summary", "tabindex") == "0"

    # By mouse: "Tom will bring" in the second line, then evidence: turns 2 and 3.
    drag_over(page, "Tom will bring")
    expect(page.locator("#selection-status")).to_have_text("Selected: “Tom will bring”")
    page.click("#mark-span")
    first = card(page, 1)
    expect(first.locator("h4")).to_have_text("Span 1: Tom will bring")
    first.get_by_label("Referential Error").check()
    first.get_by_label("Intrinsic").check()
    first.get_by_role("button", name="Link evidence in the source").click()
    page.click(".evidence-unit[data-unit='1']")
    page.click(".evidence-unit[data-unit='2']")
    expect(first.locator(".evidence-list")).to_have_text("turns 2, 3.")

    # By keyboard: "at 5 pm" (the caret skips the emoji, which is no word).
    page.focus("#span-summary")
    page.keyboard.press("Home")
    for _ in range(5):  # to the end of Lena, and, Tom, will, meet
        page.keyboard.press("Control+ArrowRight")
    page.keyboard.press("ArrowRight")
    for _ in range(3):
        page.keyboard.press("Shift+Control+ArrowRight")
    expect(page.locator("#selection-status")).to_have_text("Selected: “at 5 pm”")
    page.keyboard.press("Enter")
    expect(card(page, 1).locator("h4")).to_have_text("Span 1: at 5 pm")  # cards follow the text
    assert page.evaluate("document.activeElement.value") == "circumstantial_inference"
    page.keyboard.press("ArrowDown")  # Logical Error
    page.keyboard.press("Tab")
    page.keyboard.press("Space")  # Intrinsic
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Link evidence: to the turns
    assert page.evaluate("document.activeElement.dataset.unit") == "0"
    page.keyboard.press("Space")
    page.keyboard.press("Escape")  # back to the span
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.type("Half past four, not 5 pm.")
    expect(card(page, 1).locator(".evidence-list")).to_have_text("turn 1.")

    # An overlapping selection is refused with a message.
    page.focus("#span-summary")
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")
    page.keyboard.press("Enter")
    expect(page.locator("#span-notice")).to_contain_text("Spans may not overlap")
    page.keyboard.press("Escape")
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)
    page.wait_for_timeout(800)  # the note's debounced save
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)

    page.reload()
    page.wait_for_load_state("networkidle")
    spans = page.locator("#span-list > li")
    expect(spans).to_have_count(2)
    expect(card(page, 1).locator("h4")).to_have_text("Span 1: at 5 pm")
    assert card(page, 1).get_by_label("Logical Error").is_checked()
    assert card(page, 1).get_by_label("Intrinsic").is_checked()
    expect(card(page, 1).locator("textarea")).to_have_value("Half past four, not 5 pm.")
    expect(card(page, 1).locator(".evidence-list")).to_have_text("turn 1.")
    expect(card(page, 2).locator(".evidence-list")).to_have_text("turns 2, 3.")
    assert card(page, 2).get_by_label("Referential Error").is_checked()
    expect(page.locator(".evidence-unit[data-unit='0']")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#span-summary .is-span")).to_have_count(2)
    assignment.refresh_from_db()
    saved = json.loads(assignment.draft["spans"])
    assert [(s["start"], s["end"], s["text"]) for s in saved] == [
        (TEXT.index("at 5 pm"), TEXT.index("at 5 pm") + 7, "at 5 pm"),
        (TEXT.rindex("Tom will bring"), TEXT.rindex("Tom will bring") + 14, "Tom will bring"),
    ]

    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/", timeout=10000)  # the queue is done: back home
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    found = {j.value["text"]: j for j in Judgment.objects.filter(assignment=assignment, dimension="span")}
    assert found["at 5 pm"].value["start"] == TEXT.index("at 5 pm") and found["at 5 pm"].value["evidence"]["turns"] == [
        0
    ]
    assert found["at 5 pm"].explanation == "Half past four, not 5 pm."
    assert found["Tom will bring"].value["category"] == "referential_error"
    assert found["Tom will bring"].value["evidence"]["turns"] == [1, 2]
    assert Judgment.objects.get(assignment=assignment, dimension="has_inconsistency").value is True
    assert page.console_errors == [], page.console_errors


def test_a_span_changed_then_deleted_and_a_summary_without_inconsistency(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    page.goto(f"{base}/p/demo/assignments/{assignment.pk}/")
    page.wait_for_load_state("networkidle")
    page.focus("#span-summary")
    page.keyboard.press("End")
    page.keyboard.press("Shift+Control+ArrowLeft")  # "tickets." -> minimal: the trailing stop stays in
    page.keyboard.press("Enter")
    expect(card(page, 1).locator("h4")).to_have_text("Span 1: tickets.")

    card(page, 1).get_by_role("button", name="Change extent").click()
    expect(page.locator("#mark-span")).to_have_text("Set extent of span 1")
    page.keyboard.press("Shift+Control+ArrowLeft")  # the selection now ends before "tickets."
    page.keyboard.press("Shift+Control+ArrowLeft")
    page.keyboard.press("Home")
    page.keyboard.press("Shift+Control+ArrowRight")
    page.keyboard.press("Enter")
    expect(card(page, 1).locator("h4")).to_have_text("Span 1: Lena")
    expect(page.locator("#span-list > li")).to_have_count(1)

    card(page, 1).get_by_role("button", name="Delete span 1").click()
    expect(page.locator("#span-list > li")).to_have_count(0)
    page.keyboard.press("Control+Enter")
    expect(page.locator("#error-no_inconsistency")).to_contain_text("confirm that this summary has no inconsistency")
    page.focus("#no_inconsistency")
    page.keyboard.press("Space")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/", timeout=10000)
    assert Judgment.objects.get(assignment=assignment, dimension="has_inconsistency").value is False
    assert not Judgment.objects.filter(assignment=assignment, dimension="span").exists()
    assert page.console_errors == [], page.console_errors
