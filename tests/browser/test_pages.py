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
