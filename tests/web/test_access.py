"""The scoping rule of every page, as a table: anonymous -> login, outsider -> 404, and each
role either gets the page or a 404 (never a 403 that would confirm the page exists)."""

import pytest
from django.urls import reverse

from annotation.corpus.models import ImportJob

pytestmark = pytest.mark.django_db

EVERYONE = {"lead", "annotator", "reviewer", "viewer"}
# view name -> roles that get the page (everyone else who is a member gets 404)
PAGES = {
    "projects:detail": EVERYONE,
    "projects:invite": {"lead"},
    "corpus:import": {"lead"},
    "corpus:import_job": {"lead"},
    "corpus:export": {"lead", "viewer"},
    "corpus:documents": {"lead", "reviewer"},
    "corpus:document": {"lead", "reviewer"},
}


@pytest.fixture
def urls(project, data, lead):
    job = ImportJob.objects.create(project=project, created_by=lead, format="jsonl", status=ImportJob.Status.DONE)
    args = {"corpus:import_job": [job.pk], "corpus:document": [data["text"].pk]}
    return {name: reverse(name, args=[project.slug, *args.get(name, [])]) for name in PAGES}


@pytest.mark.parametrize("name", [*PAGES, "home"])
def test_anonymous_user_is_sent_to_login(client_for, urls, name):
    url = reverse("home") if name == "home" else urls[name]
    response = client_for().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login") + "?next=")


@pytest.mark.parametrize("name", PAGES)
def test_outsider_gets_404(client_for, world, urls, name):
    assert client_for(world["outsider"]).get(urls[name]).status_code == 404


@pytest.mark.parametrize("name", PAGES)
def test_external_membership_gets_404_even_for_a_user_who_can_sign_in(client_for, world, urls, name):
    world["imported"].is_active = True
    world["imported"].save()
    assert client_for(world["imported"]).get(urls[name]).status_code == 404


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("role", sorted(EVERYONE))
def test_each_role_gets_its_pages_and_404_elsewhere(client_for, world, urls, name, role):
    expected = 200 if role in PAGES[name] else 404
    assert client_for(world[role]).get(urls[name]).status_code == expected


@pytest.mark.parametrize("name", ["projects:invite", "corpus:import"])
def test_anonymous_post_is_sent_to_login(client_for, urls, name):
    assert client_for().post(urls[name], {}).status_code == 302


@pytest.mark.parametrize("role", ["annotator", "reviewer", "viewer"])
def test_members_who_do_not_lead_cannot_post_invitations_or_imports(client_for, world, urls, role):
    client = client_for(world[role])
    assert client.post(urls["projects:invite"], {"email": "x@example.org", "role": "lead"}).status_code == 404
    assert client.post(urls["corpus:import"], {"format": "jsonl"}).status_code == 404


def test_unknown_project_is_404_like_a_foreign_one(client_for, world):
    assert client_for(world["lead"]).get("/p/no-such-project/").status_code == 404
