"""Every main page renders in Chromium under the strict CSP with no console error."""

import pytest

from annotation.corpus import services
from annotation.corpus.models import Document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, base, username):
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", username)
    page.fill("input[name=password]", "pw-correct-horse-9")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/")


def test_main_pages_have_no_console_errors(live_server, page, lead, project, tmp_path):
    from tests.corpus.test_jsonl import records, write

    services.import_data(project_slug=project.slug, format="jsonl", paths=[write(tmp_path, records())])
    document = Document.objects.get(project=project)
    sign_in(page, live_server.url, "lead")
    paths = [
        "/",
        "/p/demo/",
        "/p/demo/documents/",
        f"/p/demo/documents/{document.pk}/",
        "/p/demo/import/",
        "/p/demo/invite/",
        "/api/docs/",
        "/accounts/password/change/",
    ]
    for path in paths:
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
        if path == "/api/docs/":  # Swagger UI, served from the app, drew the schema
            page.get_by_text("/api/projects/{slug}/export.jsonl").wait_for()
    assert page.console_errors == [], page.console_errors


def test_keyboard_reaches_the_main_content_first(live_server, page, lead, project):
    sign_in(page, live_server.url, "lead")
    page.goto(f"{live_server.url}/p/demo/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_agreement_dashboard_computes_then_shows_figures_and_charts(live_server, page, lead, project, tmp_path):
    import json

    from annotation.protocols.models import Campaign

    lines = [
        {
            "item": f"q{i}",
            "annotator": a,
            "dimension": "faithful",
            "value": "yes" if (i + len(a) * (i % 3 == 0)) % 2 else "no",
        }
        for i in range(12)
        for a in ("ann-a", "ann-bb")
    ]
    path = tmp_path / "study.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    services.import_data(project_slug=project.slug, format="labels", paths=[path])
    campaign = Campaign.objects.get(slug="labels-study")
    sign_in(page, live_server.url, "lead")
    page.goto(f"{live_server.url}/p/demo/")
    page.get_by_role("link", name="Agreement").click()
    page.get_by_text("As of").wait_for(timeout=20000)  # the recompute ran and htmx swapped the figures in
    assert page.get_by_role("heading", name="Agreement by round").count() == 1
    images = page.locator("img.chart")
    assert images.count() >= 1
    for n in range(images.count()):
        assert page.evaluate("(img) => img.complete && img.naturalWidth > 0", images.nth(n).element_handle())
    page.get_by_label("Round:").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "dataset"
    assert page.console_errors == [], page.console_errors
    assert campaign.agreement_snapshots.get().status == "ready"
