"""Expert review in Chromium: reviewer A keeps an inconsistent label from the keyboard, reviewer
B (a lead) confirms it and types its errors, and the results page counts the error type."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary, Topic
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services, taxonomy_data, tofueval
from annotation.protocols.models import (
    Adjudication,
    Campaign,
    Item,
    Judgment,
    Protocol,
    ReviewDecision,
    Taxonomy,
    TaxonomyLabel,
)
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEM = "secret-summarizer-gamma"
EXPLANATION = "The dialogue says 4 pm, not 5 pm."


@pytest.fixture
def flagged(project, annotator, lead, make_user):
    # Transactional tests before this one flushed what the migrations loaded.
    taxonomy_data.load(Taxonomy, TaxonomyLabel)
    taxonomy_data.load(Taxonomy, TaxonomyLabel, taxonomies=taxonomy_data.TAXONOMIES_V2, version=2)
    projects.add_member(project=project, user=make_user("rev-a"), role=Role.REVIEWER)
    turns = [
        {"speaker": "Ana", "text": "Shall we meet at 4 pm on Friday?"},
        {"speaker": "Ben", "text": "Yes, and I will bring the tickets."},
    ]
    document = Document.objects.create(
        project=project,
        external_id="dlg-1",
        kind="dialogue",
        turns=turns,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
    )
    topic = Topic.objects.create(document=document, name="Meeting for the trip")
    text = "They meet at 5 pm on Friday. Ben brings the tickets."
    summary = Summary.objects.create(
        project=project, document=document, topic=topic, external_id="sum-1", system=SYSTEM, text=text
    )
    first = summary.sentences.create(index=0, start=0, end=28, text="They meet at 5 pm on Friday.")
    second = summary.sentences.create(index=1, start=29, end=len(text), text="Ben brings the tickets.")
    campaign = Campaign.objects.create(
        project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1, rounds=["main"]
    )
    item = Item.objects.create(campaign=campaign, key="dlg-1/meeting", document=document, topic=topic)
    item.summaries.set([summary])
    assignment = services.assign(item=item, annotator=annotator, seed=1)
    draft = {
        "topic_category": "main",
        f"r-{summary.pk}": "4",
        f"s-{first.pk}": "inconsistent",
        f"e-{first.pk}": EXPLANATION,
        f"s-{second.pk}": "consistent",
    }
    tofueval.submit(assignment=assignment, draft=draft, client_token="t", user=annotator)
    return campaign, item, first


def screenshot(page, name: str, tmp_path: Path) -> None:
    """Kept in $REVIEW_SCREENSHOTS when set (to look at the pages), else in the test's tmp dir."""
    folder = Path(os.environ.get("REVIEW_SCREENSHOTS") or tmp_path)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_keep_by_keyboard_confirm_then_type_errors_shows_in_results(live_server, page, flagged, tmp_path):
    campaign, item, first = flagged
    base = live_server.url
    queue = f"{base}/p/demo/campaigns/{campaign.pk}/review/"

    # Reviewer A: from the home page to the sentence, keep the label by keyboard.
    sign_in(page, base, "rev-a")
    expect(page.get_by_text("Review: 1 to decide, 0 to check, 0 to type")).to_be_visible()
    page.get_by_role("link", name="Review Task 1").click()
    page.get_by_role("link", name="Start deciding").click()
    page.wait_for_load_state("networkidle")
    html = page.content()
    assert SYSTEM not in html and "ann1" not in html and EXPLANATION in html
    expect(page.locator("mark#under-review")).to_have_text("They meet at 5 pm on Friday.")
    screenshot(page, "review-unit", tmp_path)
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") == "decision-keep"
    assert page.is_checked("#decision-keep")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(queue)  # nothing left to decide: back to the queue
    expect(page.locator(".messages")).to_contain_text("Nothing left to decide")
    decision = ReviewDecision.objects.get()
    assert (decision.decision, decision.status, decision.reviewer.username) == ("keep", "proposed", "rev-a")

    # Reviewer B (the lead): confirm, then type the errors.
    page.context.clear_cookies()
    sign_in(page, base, "lead")
    page.goto(queue)
    screenshot(page, "review-queue", tmp_path)
    page.get_by_role("link", name="Start checking").click()
    page.wait_for_load_state("networkidle")
    screenshot(page, "review-check", tmp_path)
    page.keyboard.press("c")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(queue)
    assert Adjudication.objects.get().value == "inconsistent"

    page.get_by_role("link", name="Start typing errors").click()
    page.wait_for_load_state("networkidle")
    expect(page.get_by_text("Stating Opinion-as-Fact")).to_be_visible()
    page.keyboard.press("Control+Enter")  # nothing chosen yet: the form says so
    expect(page.locator("#error-codes")).to_have_text("Choose at least one error type.")
    page.wait_for_load_state("networkidle")  # the shortcuts script has run
    page.keyboard.press("1")  # Extrinsic Information
    assert page.is_checked("#code-extrinsic_information")
    expect(page.locator("#error-codes")).to_be_empty()  # a choice clears the message
    page.keyboard.press("7")
    page.keyboard.press("7")  # ticked and unticked again
    assert not page.is_checked("#code-nuanced_meaning_shift")
    screenshot(page, "review-typing", tmp_path)
    page.keyboard.press("Control+Enter")
    page.wait_for_url(queue)
    typed = Judgment.objects.get(dimension="error_types")
    assert (typed.value, typed.assignment.stage) == (["extrinsic_information"], "error_typing")

    page.goto(f"{base}/p/demo/campaigns/{campaign.pk}/results/")
    row = (
        page.locator("caption", has_text="Error types")
        .locator("xpath=..")
        .locator("tr", has_text="extrinsic_information")
    )
    expect(row.locator("td.num").first).to_have_text("1")
    # Chromium logs every 4xx answer; the one 400 is the empty error typing this test sent.
    unexpected = [e for e in page.console_errors if "400 (Bad Request)" not in e]
    assert len(page.console_errors) == 1 and unexpected == [], page.console_errors
