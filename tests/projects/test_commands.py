import pytest
from django.core.management import CommandError, call_command

from annotation.projects.models import Membership, Project

pytestmark = pytest.mark.django_db


def test_add_member_creates_the_project_and_its_first_lead(capsys):
    call_command("add_member", project="lab", username="maria", role="lead", email="maria@example.org")
    out = capsys.readouterr().out
    assert "created project lab" in out and "with password" in out
    membership = Membership.objects.get(project__slug="lab", user__username="maria")
    assert membership.role == "lead" and membership.pseudonym == "A1"


def test_add_member_needs_an_email_for_a_new_user():
    with pytest.raises(CommandError, match="give --email"):
        call_command("add_member", project="lab", username="nobody", role="lead")
    assert not Project.objects.exists()


def test_add_member_refuses_a_bad_slug():
    with pytest.raises(CommandError, match="lower-case"):
        call_command("add_member", project="Bad Slug", username="x", role="lead", email="x@example.org")
