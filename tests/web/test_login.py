import pytest
from django.core.cache import cache

from tests.web.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_limits():
    cache.clear()  # the limits live in the cache; start each test with none spent
    yield
    cache.clear()


def login(client, login, password):
    return client.post("/accounts/login/", {"login": login, "password": password})


@pytest.mark.parametrize("identifier", ["lead", "lead@example.org"])
def test_login_by_user_name_or_email(client, lead, identifier):
    response = login(client, identifier, PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/"


def test_repeated_failed_logins_lock_the_account_for_a_while(client, lead):
    for _ in range(5):
        assert "not correct" in login(client, "lead", "wrong-password").content.decode()
    response = login(client, "lead", PASSWORD)
    assert response.status_code in (200, 429)
    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_open_sign_up_is_closed(client, django_user_model):
    assert "Sign Up Closed" in client.get("/accounts/signup/").content.decode()
    data = {"email": "x@example.org", "username": "x", "password1": "a-long-pass-99", "password2": "a-long-pass-99"}
    client.post("/accounts/signup/", data)
    assert not django_user_model.objects.filter(username="x").exists()


def test_password_reset_by_email_link(client, lead, mailoutbox):
    import re

    response = client.post("/accounts/password/reset/", {"email": "lead@example.org"})
    assert response.status_code == 302
    assert len(mailoutbox) == 1
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+)", mailoutbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    action = form_page.redirect_chain[-1][0] if form_page.redirect_chain else link
    done = client.post(action, {"password1": "a-brand-new-pass-42", "password2": "a-brand-new-pass-42"})
    assert done.status_code == 302
    lead.refresh_from_db()
    assert lead.check_password("a-brand-new-pass-42")
