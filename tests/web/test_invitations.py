import re
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotation.accounts import services
from annotation.accounts.models import Invitation
from annotation.projects.models import Membership

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "a-long-and-unusual-passphrase-42"


def invite(project, lead, email="new@example.org", role="reviewer"):
    return services.invite(project=project, email=email, role=role, invited_by=lead)


def accept_form(username="newbie", password=NEW_PASSWORD, confirm=None):
    return {"username": username, "password": password, "password_confirm": confirm or password}


def test_invited_person_accepts_signs_in_and_is_a_member(client_for, world, project):
    url = reverse("projects:invite", args=[project.slug])
    client_for(world["lead"]).post(url, {"email": "new@example.org", "role": "reviewer"})
    link = re.search(r"http://testserver(/invitations/\S+/)", mail.outbox[0].body).group(1)

    browser = client_for()
    assert "Join Demo" in browser.get(link).text
    response = browser.post(link, accept_form())
    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert browser.get(reverse("home")).context["user"].username == "newbie"

    user = get_user_model().objects.get(username="newbie")
    assert Membership.objects.get(project=project, user=user).role == "reviewer"
    assert EmailAddress.objects.filter(user=user, email="new@example.org", verified=True, primary=True).exists()
    assert Invitation.objects.get().accepted_by == user

    for login in ("newbie", "new@example.org"):
        fresh = client_for()
        response = fresh.post(reverse("account_login"), {"login": login, "password": NEW_PASSWORD})
        assert response.status_code == 302, login


def test_a_used_link_is_404(client_for, world, project):
    invitation = invite(project, world["lead"])
    url = reverse("accounts:accept", args=[invitation.token])
    client_for().post(url, accept_form())
    response = client_for().get(url)
    assert response.status_code == 404 and "does not work" in response.text
    assert client_for().post(url, accept_form("second")).status_code == 404
    assert not get_user_model().objects.filter(username="second").exists()


def test_an_expired_link_is_404(client_for, world, project):
    invitation = invite(project, world["lead"])
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client_for().get(reverse("accounts:accept", args=[invitation.token])).status_code == 404


def test_an_unknown_link_is_404(client_for, db):
    assert client_for().get(reverse("accounts:accept", args=["nope"])).status_code == 404


def test_mismatched_passwords_show_an_error(client_for, world, project):
    invitation = invite(project, world["lead"])
    response = client_for().post(
        reverse("accounts:accept", args=[invitation.token]), accept_form(confirm="other-one-12345")
    )
    assert response.status_code == 200 and "The two passwords differ." in response.text
    assert Invitation.objects.get().accepted_at is None


def test_weak_password_is_refused_by_the_validators(client_for, world, project):
    invitation = invite(project, world["lead"])
    response = client_for().post(reverse("accounts:accept", args=[invitation.token]), accept_form(password="12345678"))
    assert response.status_code == 400 and "too short" in response.text
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_taken_user_name_is_refused(client_for, world, project):
    invitation = invite(project, world["lead"])
    response = client_for().post(reverse("accounts:accept", args=[invitation.token]), accept_form(username="LEAD"))
    assert response.status_code == 400 and "This user name is taken" in response.text


def test_signed_in_person_with_the_invited_email_just_joins(client_for, world, project):
    invitation = invite(project, world["lead"], email="outsider@example.org", role="viewer")
    client = client_for(world["outsider"])
    url = reverse("accounts:accept", args=[invitation.token])
    assert "You are signed in as outsider" in client.get(url).text
    assert client.post(url).status_code == 302
    assert Membership.objects.get(project=project, user=world["outsider"]).role == "viewer"


def test_signed_in_person_with_another_email_cannot_take_the_invitation(client_for, world, project):
    invitation = invite(project, world["lead"], email="someone@example.org")
    response = client_for(world["outsider"]).post(reverse("accounts:accept", args=[invitation.token]))
    assert response.status_code == 400 and "not for your account" in response.text
    assert not Membership.objects.filter(project=project, user=world["outsider"]).exists()


def test_existing_account_must_sign_in_to_accept(client_for, world, project):
    invitation = invite(project, world["lead"], email="outsider@example.org")
    response = client_for().post(reverse("accounts:accept", args=[invitation.token]), accept_form())
    assert response.status_code == 400 and "sign in, then open the link again" in response.text


def test_service_refuses_a_bad_email(world, project):
    with pytest.raises(ValidationError):
        invite(project, world["lead"], email="bad@")


def test_open_sign_up_stays_closed(client_for, db):
    response = client_for().post(
        reverse("account_signup"),
        {"username": "x", "email": "x@example.org", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert not get_user_model().objects.filter(username="x").exists()
    assert response.status_code in (200, 403)
