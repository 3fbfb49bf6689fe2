import pytest

from annotation.corpus import services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_logs_in_and_opens_the_project_page(live_server, page, lead, project, tmp_path):
    from tests.corpus.test_jsonl import records, write

    services.import_data(project_slug=project.slug, format="jsonl", paths=[write(tmp_path, records())])
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=login]", "lead")
    page.fill("input[name=password]", "pw-correct-horse-9")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.get_by_role("link", name="Demo").first.click()
    page.wait_for_url(f"{live_server.url}/p/demo/")
    body = page.text_content("body")
    assert "Demo" in body and "lead" in body
    page.screenshot(path=str(tmp_path / "project.png"), full_page=True)
    assert page.console_errors == [], page.console_errors


def test_wrong_password_shows_an_error_in_the_form(live_server, page, lead):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=login]", "lead")
    page.fill("input[name=password]", "wrong-password")
    page.keyboard.press("Enter")
    page.wait_for_selector(".errorlist")
    assert "/accounts/login/" in page.url
    assert "not correct" in page.text_content("body")
