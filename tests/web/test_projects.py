import pytest
from django.core import mail
from django.urls import reverse

from annotation.accounts.models import Invitation

pytestmark = pytest.mark.django_db


def test_annotator_with_open_work_sees_their_queue(client_for, world, data):
    response = client_for(world["annotator2"]).get(reverse("home"))
    assert response.status_code == 200
    assert response.context["queue_members"][0].queue[0]["open"] == 1
    assert "My queues" in response.text and "Pilot" in response.text


def test_annotator_with_nothing_open_sees_the_queue_done(client_for, world, data):
    response = client_for(world["annotator"]).get(reverse("home"))
    row = response.context["queue_members"][0].queue[0]
    assert (row["done"], row["total"], row["open"]) == (1, 1, 0)
    assert ">Start<" not in response.text and ">done<" in response.text


def test_annotator_without_assignments_sees_the_empty_state(client_for, world):
    response = client_for(world["annotator"]).get(reverse("home"))
    assert "no assignments" in response.text


def test_lead_sees_their_projects_with_counts(client_for, world, data):
    response = client_for(world["lead"]).get(reverse("home"))
    counts = response.context["overview_members"][0].counts
    assert (counts["documents"], counts["summaries"], counts["judgments"]) == (3, 2, 2)
    assert "My projects" in response.text and "My queues" not in response.text


def test_home_lists_only_the_users_own_projects(client_for, world, data):
    response = client_for(world["outsider"]).get(reverse("home"))
    assert "Demo" not in response.text and "Other" in response.text


def test_project_page_shows_counts_members_and_campaigns(client_for, world, data, project):
    response = client_for(world["lead"]).get(reverse("projects:detail", args=[project.slug]))
    counts = response.context["counts"]
    assert counts == {
        "documents": 3,
        "text_missing": 1,
        "topics": 1,
        "summaries": 2,
        "edited": 1,
        "sentences": 2,
        "campaigns": 1,
        "judgments": 2,
    }
    campaign = response.context["campaigns"][0]
    assert (campaign.item_count, campaign.submitted_count) == (1, 1)
    assert [m.user.username for m in response.context["external"]] == [world["imported"].username]
    assert "release-7 · imported" in response.text
    assert "Invite someone" in response.text and "Import data" in response.text


def test_viewer_sees_export_but_no_forms(client_for, world, project):
    response = client_for(world["viewer"]).get(reverse("projects:detail", args=[project.slug]))
    assert reverse("corpus:export", args=[project.slug]) in response.text
    assert "Invite someone" not in response.text and "Browse documents" not in response.text


def test_annotator_sees_neither_export_nor_forms(client_for, world, project):
    response = client_for(world["annotator"]).get(reverse("projects:detail", args=[project.slug]))
    assert "Export JSONL" not in response.text and "Invite someone" not in response.text


def test_project_page_query_count_does_not_grow_with_data(client_for, world, data, project, django_assert_num_queries):
    client = client_for(world["lead"])
    url = reverse("projects:detail", args=[project.slug])
    # session, user, membership, nav, 6 counts, members, campaigns, import jobs
    with django_assert_num_queries(13):
        client.get(url)


def test_lead_invites_by_email(client_for, world, project):
    url = reverse("projects:invite", args=[project.slug])
    response = client_for(world["lead"]).post(url, {"email": "new@Example.ORG", "role": "reviewer"})
    assert response.status_code == 302 and response["Location"] == reverse("projects:detail", args=[project.slug])
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role) == ("new@example.org", "reviewer")
    assert mail.outbox[0].to == ["new@example.org"]
    assert f"http://testserver/invitations/{invitation.token}/" in mail.outbox[0].body


def test_invite_page_shows_the_form(client_for, world, project):
    response = client_for(world["lead"]).get(reverse("projects:invite", args=[project.slug]))
    assert response.status_code == 200 and 'name="email"' in response.text


def test_bad_invite_email_shows_the_error_in_the_form(client_for, world, project):
    url = reverse("projects:invite", args=[project.slug])
    response = client_for(world["lead"]).post(url, {"email": "not-an-address", "role": "annotator"})
    assert response.status_code == 400
    assert "Enter a valid email address." in response.text
    assert not Invitation.objects.exists() and not mail.outbox


def test_unknown_role_is_refused(client_for, world, project):
    url = reverse("projects:invite", args=[project.slug])
    response = client_for(world["lead"]).post(url, {"email": "a@example.org", "role": "owner"})
    assert response.status_code == 400 and "Select a valid choice" in response.text


def test_inviting_a_member_again_is_refused(client_for, world, project):
    url = reverse("projects:invite", args=[project.slug])
    response = client_for(world["lead"]).post(url, {"email": "ANN1@example.org", "role": "lead"})
    assert response.status_code == 400
    assert "already belongs to a member" in response.text
    assert not mail.outbox


def test_only_leads_see_pseudonyms_on_the_project_page(client_for, project, lead, viewer, annotator):
    lead_page = client_for(lead).get(f"/p/{project.slug}/").content.decode()
    viewer_page = client_for(viewer).get(f"/p/{project.slug}/").content.decode()
    assert '<th scope="col">Pseudonym</th>' in lead_page
    assert '<th scope="col">Pseudonym</th>' not in viewer_page
