"""TofuEval task 2 in Chromium from the keyboard alone: key points written, moved and removed,
kept across a reload, committed; then coverage ticked with digits, a reload half-way, a
validation message in place, and the submit storing completeness."""

import re

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary, Topic
from annotation.protocols import services
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, Protocol
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEMS = ("secret-summarizer-alpha", "secret-summarizer-beta")
TEXTS = ("Ana and Ben meet at 4 pm at the station.", "Ben will bring the tickets.")
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
    summaries = [
        Summary.objects.create(
            project=project, document=document, topic=topic, external_id=f"sum-{n}", system=system, text=text
        )
        for n, (text, system) in enumerate(zip(TEXTS, SYSTEMS, strict=True))
    ]
    campaign = Campaign.objects.create(project=project, slug="t2", name="Task 2", protocol=Protocol.TOFUEVAL_TASK2)
    item = Item.objects.create(campaign=campaign, key="dlg-1/meeting", document=document, topic=topic)
    item.summaries.set(summaries)
    return services.assign(item=item, annotator=annotator, seed=1)


def key_points(page):
    """The key points written so far (the server adds an empty box for one more)."""
    values = page.eval_on_selector_all("#key-points input[type=text]", "els => els.map(e => e.value)")
    return [v for v in values if v]


def focused_name(page):
    return page.evaluate("document.activeElement.name || ''")


def wait_saved(page):
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)


def test_task2_by_keyboard_with_reloads(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    page.goto(f"{base}/p/demo/assignments/{assignment.pk}/")
    html = page.content()
    assert all(text not in html for text in TEXTS) and all(system not in html for system in SYSTEMS)

    # Key points: type, Enter for the next one, Alt+Up to move, Backspace on an empty one to remove.
    assert focused_name(page) == "kp-1"
    page.keyboard.type("They meet at 4 pm")
    page.keyboard.press("Enter")
    page.keyboard.type("Ben brings the tickets")
    page.keyboard.press("Enter")
    page.keyboard.type("Friday")
    page.keyboard.press("Enter")
    assert focused_name(page) == "kp-4"
    page.keyboard.press("Backspace")  # the empty fourth box goes away
    assert focused_name(page) == "kp-3"
    page.keyboard.press("Alt+ArrowUp")
    assert key_points(page) == ["They meet at 4 pm", "Friday", "Ben brings the tickets"]
    assert focused_name(page) == "kp-2"
    wait_saved(page)

    page.reload()
    assert key_points(page) == ["They meet at 4 pm", "Friday", "Ben brings the tickets"]
    assert focused_name(page) == "kp-2"
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.press("Backspace")  # remove "Friday"
    assert key_points(page) == ["They meet at 4 pm", "Ben brings the tickets"]
    page.keyboard.press("Control+Enter")  # commit
    expect(page.locator(".t2-summary")).to_have_count(2)
    html = page.content()
    assert all(text in html for text in TEXTS) and all(system not in html for system in SYSTEMS)
    draft = Assignment.objects.get(pk=assignment.pk).draft
    assert (draft["kp-1"], draft["kp-2"], draft["committed"]) == ("They meet at 4 pm", "Ben brings the tickets", "on")

    # Coverage: digits tick key points of the current summary, 0 is "none of them".
    order = page.eval_on_selector_all(
        ".t2-summary", "els => els.map(s => s.querySelector('.summary-text').textContent)"
    )
    first_pk, second_pk = page.eval_on_selector_all(".t2-summary", "els => els.map(s => s.dataset.summary)")
    page.keyboard.press("1")
    page.keyboard.press("2")
    wait_saved(page)
    page.reload()
    assert page.is_checked(f"#c-{first_pk}-1") and page.is_checked(f"#c-{first_pk}-2")
    page.keyboard.press("Control+Enter")  # summary 2 is not done: a message in place, nothing sent
    expect(page.locator("#error-summary")).to_be_visible()
    expect(page.locator(f"#error-cov-{second_pk}")).to_contain_text("Tick the key points summary 2 covers")
    assert focused_name(page).startswith(f"c-{second_pk}-")
    page.keyboard.press("0")
    expect(page.locator(f"#error-cov-{second_pk}")).to_have_text("")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/")  # nothing left in the queue: home

    completeness = dict(
        Judgment.objects.filter(assignment=assignment, dimension="completeness").values_list("summary__text", "value")
    )
    expected_first = 1.0
    assert completeness == {order[0]: expected_first, order[1]: 0.0}
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED
