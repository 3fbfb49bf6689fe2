"""LLM jobs through the API: the same service as the form and the command, for leads only."""

import pytest
from rest_framework.test import APIClient

from annotation.corpus.models import Document, Topic
from annotation.llm.models import Endpoint, Job

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def topic(project):
    document = Document.objects.create(project=project, external_id="d", text="Ana: The library opens in March.")
    return Topic.objects.create(document=document, name="library")


def test_a_lead_starts_a_job_and_polls_it(project, lead, topic, django_capture_on_commit_callbacks):
    Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(lead).post(
            f"/api/projects/{project.slug}/llm/jobs/", {"kind": "summaries", "endpoint": "base"}, format="json"
        )
    assert response.status_code == 202, response.content
    body = client_for(lead).get(f"/api/projects/{project.slug}/llm/jobs/{response.json()['id']}/").json()
    assert body["status"] == "done" and body["progress"]["done"] == 1 and body["endpoint"] == "base"


def test_bad_requests_are_400_with_reasons(project, lead, topic):
    Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    url = f"/api/projects/{project.slug}/llm/jobs/"
    assert "endpoint" in client_for(lead).post(url, {"kind": "summaries", "endpoint": "nope"}, format="json").json()
    refused = client_for(lead).post(url, {"kind": "judge", "endpoint": "base"}, format="json")
    assert refused.status_code == 400 and "not judge" in str(refused.json())
    assert client_for(lead).post(url, {"kind": "nonsense", "endpoint": "base"}, format="json").status_code == 400
    assert not Job.objects.exists()


def test_annotators_and_outsiders_get_404(project, annotator, outsider, topic):
    endpoint = Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    job = Job.objects.create(project=project, kind="summaries", endpoint=endpoint)
    for user in (annotator, outsider):
        client = client_for(user)
        url = f"/api/projects/{project.slug}/llm/jobs/"
        assert client.post(url, {"kind": "summaries", "endpoint": "base"}, format="json").status_code == 404
        assert client.get(f"{url}{job.pk}/").status_code == 404


def test_the_schema_generates_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    assert "/api/projects/{slug}/llm/jobs/" in (tmp_path / "schema.yml").read_text()
