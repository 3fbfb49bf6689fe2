"""Ambiguity labelling in Chromium: a judgment with a taxonomy choice made from the keyboard,
a definition read inline, a check in place, a reload that keeps the work, the submit; then a
second annotator and the expert's adjudication of their disagreement."""

import re
import time

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import setup
from annotation.protocols.models import Adjudication, Assignment, Judgment, Protocol
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SAVED = re.compile(r"^Saved \d")
TEXT = "The council will meet soon. It approved the budget unanimously."


@pytest.fixture
def campaign(project, annotator, make_user):
    turns = [
        {"speaker": "Chair", "text": "We will take this up again at a later meeting."},
        {"speaker": "Clerk", "text": "The budget passed five to zero."},
    ]
    document = Document.objects.create(
        project=project,
        external_id="council-1",
        kind="dialogue",
        turns=turns,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
    )
    summary = Summary.objects.create(
        project=project, document=document, external_id="s-1", system="secret-summarizer-gamma", text=TEXT
    )
    summary.sentences.create(index=0, start=0, end=27, text=TEXT[:27])
    summary.sentences.create(index=1, start=28, end=len(TEXT), text=TEXT[28:])
    second = make_user("ann2")
    projects.add_member(project=project, user=second, role=Role.ANNOTATOR)
    projects.add_member(project=project, user=make_user("expert"), role=Role.REVIEWER)
    plan = setup.Plan(
        name="Ambiguity", slug="amb", annotators=[annotator, second], per_item=2, protocol=Protocol.AMBIGUITY
    )
    return setup.create_campaign(project=project, plan=plan)


def wait_draft(assignment, key, value, timeout=10.0):
    """Until the server's draft holds `value` at `key` (autosave waits for a pause in typing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assignment.refresh_from_db()
        if assignment.draft.get(key) == value:
            return
        time.sleep(0.1)
    raise AssertionError(f"the draft never got {key!r}: {assignment.draft}")


def wait_saved(page):
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)


def test_ambiguity_judgment_from_the_keyboard_then_adjudication(live_server, page, campaign, annotator):
    base = live_server.url
    item = campaign.items.get(sentence__index=0)
    mine = Assignment.objects.get(item=item, annotator=annotator)
    sign_in(page, base, "ann1")
    page.goto(f"{base}/p/demo/assignments/{mine.pk}/")
    expect(page.locator("#judged-sentence")).to_have_text("The council will meet soon.")
    expect(page.locator(".in-summary")).to_contain_text("It approved the budget unanimously.")
    assert "secret-summarizer" not in page.content()

    # "y" answers yes and goes to the types; submitting now shows what is missing, in place.
    page.locator("body").press("y")
    expect(page.locator("#ambiguous-yes")).to_be_checked()
    page.keyboard.press("Control+Enter")
    expect(page.locator("#error-summary")).to_be_visible()
    expect(page.locator("#error-type")).to_have_text("Choose the type of ambiguity.")

    # The definition and examples of Vagueness open inline, from the keyboard.
    vagueness = page.locator("li.type-option", has=page.locator("#type-meaning\\.vagueness"))
    vagueness.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(vagueness.locator("details")).to_have_attribute("open", "")
    expect(vagueness.locator("dl")).to_contain_text("Not ambiguous")
    page.locator("#type-meaning\\.vagueness").focus()
    page.keyboard.press("Space")
    expect(page.locator("#type-meaning\\.vagueness")).to_be_checked()
    expect(page.locator("#error-type")).to_have_text("")
    page.locator("body").press("d")
    description = "'soon' gives no date: the chair only says 'a later meeting'."
    page.keyboard.type(description)
    wait_draft(mine, "description", description)
    wait_saved(page)

    page.reload()
    expect(page.locator("#ambiguous-yes")).to_be_checked()
    expect(page.locator("#type-meaning\\.vagueness")).to_be_checked()
    expect(page.locator("#description")).to_have_value(re.compile("gives no date"))
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    rows = {j.dimension: j.value for j in Judgment.objects.filter(assignment=mine)}
    assert rows == {"ambiguous": True, "ambiguity_types": ["meaning.vagueness"]}

    # The second annotator says no, by key.
    other = Assignment.objects.get(item=item, annotator__username="ann2")
    page.context.clear_cookies()
    sign_in(page, base, "ann2")
    page.goto(f"{base}/p/demo/assignments/{other.pk}/")
    page.locator("body").press("n")
    expect(page.locator("#ambiguity-details")).to_be_hidden()
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert Judgment.objects.get(assignment=other, dimension="ambiguous").value is False

    # The expert sees both answers side by side and records the final label with a note.
    page.context.clear_cookies()
    sign_in(page, base, "expert")
    page.goto(f"{base}/p/demo/campaigns/{campaign.pk}/adjudicate/")
    expect(page.locator(".answer-card")).to_have_count(2)
    expect(page.locator(".answers")).to_contain_text("gives no date")
    page.locator("#final-yes").check()
    page.locator("#final-type-meaning\\.vagueness").check()
    page.locator("#note").fill("Vague time reference; the first annotator is right.")
    page.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messages")).to_contain_text("Adjudicated")
    decided = Adjudication.objects.get(item=item, dimension="ambiguous")
    assert decided.value is True and decided.note.startswith("Vague time")
    assert page.console_errors == []
