"""TofuEval task 1 in Chromium, entirely from the keyboard: autosave survives a reload, a missing
explanation is caught in place, the submit records judgments, and two tabs get a conflict."""

import re

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary, Topic
from annotation.protocols import services
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, Protocol
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEMS = ("secret-summarizer-alpha", "secret-summarizer-beta")
SAVED = re.compile(r"^Saved \d")


@pytest.fixture
def assignment(project, annotator):
    turns = [
        {"speaker": "Ana", "text": "Shall we meet at 4 pm on Friday?"},
        {"speaker": "Ben", "text": "Yes, and I will bring the tickets."},
        {"speaker": "Ana", "text": "Great, see you at the station."},
    ]
    document = Document.objects.create(
        project=project,
        external_id="dlg-1",
        kind="dialogue",
        turns=turns,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
    )
    topic = Topic.objects.create(document=document, name="Meeting for the trip")
    texts = ["They meet at 5 pm on Friday. Ben brings the tickets.", "Ana proposes a time. They meet at the station."]
    summaries = []
    for n, (text, system) in enumerate(zip(texts, SYSTEMS, strict=True)):
        summary = Summary.objects.create(
            project=project, document=document, topic=topic, external_id=f"sum-{n}", system=system, text=text
        )
        cut = text.index(". ") + 1
        summary.sentences.create(index=0, start=0, end=cut, text=text[:cut])
        summary.sentences.create(index=1, start=cut + 1, end=len(text), text=text[cut + 1 :])
        summaries.append(summary)
    campaign = Campaign.objects.create(project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1)
    item = Item.objects.create(campaign=campaign, key="dlg-1/meeting", document=document, topic=topic)
    item.summaries.set(summaries)
    return services.assign(item=item, annotator=annotator, seed=1)


def open_task(page, base, assignment):
    page.goto(f"{base}/p/demo/assignments/{assignment.pk}/")
    page.wait_for_load_state("networkidle")


def sentence_names(page):
    """The sentence radios' names in screen order (the summaries are shuffled per assignment)."""
    return page.eval_on_selector_all("fieldset.sentence", "els => els.map(f => 's-' + f.dataset.sentence)")


def summary_pks(page):
    return page.eval_on_selector_all(".t1-summary", "els => els.map(s => s.dataset.summary)")


def checked(page, name):
    return page.evaluate(f"document.querySelector(\"input[name='{name}']:checked\")?.value ?? null")


def wait_saved(page):
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)


def test_task1_by_keyboard_survives_a_reload_and_validates_before_submitting(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    open_task(page, base, assignment)
    html = page.content()
    assert all(system not in html for system in SYSTEMS)
    s1, s2, s3, s4 = sentence_names(page)
    r1, r2 = summary_pks(page)
    # Nothing labelled yet: the screen opens on the first sentence.
    assert page.evaluate("document.activeElement.name") == s1

    page.keyboard.press("m")  # the topic is a main topic
    page.keyboard.press("i")  # sentence 1.1 is inconsistent: the cursor goes into its explanation
    assert page.evaluate("document.activeElement.name") == "e" + s1[1:]
    page.keyboard.type("The dialogue says 4 pm, not 5 pm.")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.name") == s1
    page.keyboard.press("j")
    page.keyboard.press("c")  # 1.2 consistent
    page.keyboard.press("4")  # relevance of summary 1
    page.keyboard.press("j")
    page.keyboard.press("c")  # 2.1 consistent
    page.keyboard.press("k")  # back to 1.2, then forward again
    assert page.evaluate("document.activeElement.name") == s2
    assert page.locator("fieldset.sentence.is-current").get_attribute("data-sentence") == s2[2:]
    page.keyboard.press("j")
    wait_saved(page)

    page.reload()
    page.wait_for_load_state("networkidle")
    assert checked(page, "topic_category") == "main"
    assert [checked(page, name) for name in (s1, s2, s3, s4)] == ["inconsistent", "consistent", "consistent", None]
    assert page.locator(f"textarea[name='e{s1[1:]}']").input_value() == "The dialogue says 4 pm, not 5 pm."
    assert checked(page, f"r-{r1}") == "4"
    assert page.evaluate("document.activeElement.name") == s3  # resumed where the work stopped

    page.keyboard.press("j")
    page.keyboard.press("i")  # 2.2 inconsistent, but left unexplained
    page.keyboard.press("Escape")
    page.keyboard.press("2")  # relevance of summary 2
    page.keyboard.press("Control+Enter")
    message = page.locator(f"#error-e{s4[1:]}")
    expect(message).to_have_text("Explain why this sentence is inconsistent.")
    expect(page.locator("#error-summary")).to_be_visible()
    assert page.evaluate("document.activeElement.name") == "e" + s4[1:]  # the first problem has the focus
    page.wait_for_timeout(500)
    assignment.refresh_from_db()
    assert assignment.status != Assignment.Status.SUBMITTED

    page.keyboard.type("Nobody says they meet at the station.")
    expect(message).to_be_empty()
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/", timeout=10000)  # the queue is done: back home
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    judgments = {(j.dimension, j.target): j for j in Judgment.objects.filter(assignment=assignment)}
    assert judgments[("topic_category", "item")].value == "main"
    assert judgments[("consistency", f"sentence:{s1[2:]}")].value == "inconsistent"
    assert judgments[("consistency", f"sentence:{s1[2:]}")].explanation == "The dialogue says 4 pm, not 5 pm."
    assert judgments[("consistency", f"sentence:{s4[2:]}")].explanation == "Nobody says they meet at the station."
    assert judgments[("relevance", f"summary:{r1}")].value == 4
    assert judgments[("relevance", f"summary:{r2}")].value == 2
    assert assignment.active_seconds > 0
    assert page.console_errors == [], page.console_errors


def test_a_change_in_another_tab_is_a_conflict_not_an_overwrite(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    tab_a, tab_b = page, page.context.new_page()
    tab_b.console_errors = []
    tab_b.on("console", lambda msg: msg.type == "error" and tab_b.console_errors.append(msg.text))
    open_task(tab_a, base, assignment)
    open_task(tab_b, base, assignment)

    tab_a.keyboard.press("g")  # marginal, saved from tab A
    wait_saved(tab_a)
    tab_b.bring_to_front()
    tab_b.keyboard.press("x")  # irrelevant, in tab B, based on the old version
    banner = tab_b.locator("#conflict-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("changed in another tab or window")
    assignment.refresh_from_db()
    assert assignment.draft["topic_category"] == "marginal"  # B did not overwrite A

    tab_b.get_by_role("button", name="Load the other version").click()
    expect(banner).to_be_hidden()
    assert checked(tab_b, "topic_category") == "marginal"
    tab_b.keyboard.press("c")  # B carries on from A's version without another conflict
    wait_saved(tab_b)
    assignment.refresh_from_db()
    assert assignment.draft["topic_category"] == "marginal"
    assert assignment.draft[sentence_names(tab_b)[0]] == "consistent"
    # Chromium logs every 4xx answer; the one 409 is the conflict this test is about.
    unexpected = [e for e in tab_b.console_errors if "409 (Conflict)" not in e]
    assert page.console_errors == [] and unexpected == [], (page.console_errors, tab_b.console_errors)
