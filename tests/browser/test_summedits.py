"""SummEdits in Chromium from the keyboard alone: verify a seed (its edits are generated on
verification), label its 40-odd edits with single keys (automatic advance), reload half-way and
find everything there, then submit."""

import re

import pytest
from playwright.sync_api import expect

from annotation.corpus import services as corpus
from annotation.corpus.models import SeedSummary, Summary
from annotation.protocols import summedits
from annotation.protocols.models import Assignment, Judgment
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SAVED = re.compile(r"^Saved \d")


@pytest.fixture
def assignment(data, project, annotator):
    corpus.import_data(
        project_slug=project.slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    campaign = summedits.create_campaign(
        project=project,
        name="Sales",
        slug="sales",
        domain="sales_call",
        annotators=[annotator],
        double_share=0,
        generation="on_verify",  # the offline rules add edits when the seed passes
        edits_per_seed=8,
    )
    seed = SeedSummary.objects.get(summary__external_id="sales_call_0_og")
    return Assignment.objects.get(item__campaign=campaign, item__summaries=seed.summary)


def labelled(page) -> int:
    return page.eval_on_selector_all("fieldset.edit", "els => els.filter(f => f.querySelector('input:checked')).length")


def test_verify_then_label_every_edit_by_keyboard_with_a_reload(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    page.goto(f"{base}/p/demo/assignments/{assignment.pk}/")
    expect(page.locator("h1")).to_have_text("Check the summary")
    assert page.locator("fieldset.edit").count() == 0  # no edit before the seed is verified
    # Step 1: "Any flaws?" No (arrow to the second answer); "Consistent?" Yes (Tab, Space).
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Control+Enter")
    expect(page.locator("h1")).to_have_text("Label the edits")
    total = page.locator("fieldset.edit").count()
    seed = SeedSummary.objects.get(summary__external_id="sales_call_0_og")
    generated = Summary.objects.filter(edit__seed=seed, origin="baseline").count()
    assert generated > 0 and total == 34 + generated  # the release's edits and the generated ones
    keys = "cibc" * 20
    for key in keys[:15]:
        page.keyboard.press(key)
    assert labelled(page) == 15
    expect(page.locator("#label-count")).to_have_text(f"15 of {total}")
    expect(page.locator("#save-status")).to_have_text(SAVED, timeout=10000)

    page.reload()
    assert labelled(page) == 15
    current = page.evaluate("document.activeElement.name")
    assert current == page.eval_on_selector_all("fieldset.edit", "els => els[15].querySelector('input').name")
    for key in (keys * 2)[15:total]:
        page.keyboard.press(key)
    assert labelled(page) == total
    here = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda url: url != here)  # on to the next seed
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    labels = Judgment.objects.filter(assignment=assignment, dimension="edit_label")
    assert labels.count() == total and set(labels.values_list("value", flat=True)) == {
        "consistent",
        "inconsistent",
        "borderline",
    }
    assert page.console_errors == []
