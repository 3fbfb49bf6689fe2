"""`Idempotency-Key` on the POSTs that start work: a resent request replays the first answer.
The concurrent case (ten twins at once) is in tests/reliability/test_double_submit.py."""

import pytest

from annotation.api.models import IdempotencyKey
from annotation.corpus.models import Document, ImportJob, Topic
from annotation.llm.models import Endpoint, Job
from annotation.projects import services as projects
from annotation.projects.models import Role
from tests.api.test_api import client_for, jsonl_upload

pytestmark = pytest.mark.django_db
BODY = {"kind": "summaries", "endpoint": "base"}


@pytest.fixture
def url(project):
    Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    document = Document.objects.create(project=project, external_id="d", text="Ana: The library opens in March.")
    Topic.objects.create(document=document, name="library")
    return f"/api/projects/{project.slug}/llm/jobs/"


def post(user, url, body=BODY, key="k-1"):
    return client_for(user).post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_the_same_key_replays_the_first_answer(lead, url):
    first, again = post(lead, url), post(lead, url)
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json() == first.json() and Job.objects.count() == 1
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers


def test_the_same_key_on_another_request_is_refused(lead, url):
    assert post(lead, url).status_code == 202
    other = post(lead, url, body=BODY | {"params": {"temperature": 0.2}})
    assert other.status_code == 422 and "Idempotency-Key" in other.json()
    assert Job.objects.count() == 1


def test_a_refused_request_does_not_use_up_its_key(lead, url):
    refused = post(lead, url, body=BODY | {"endpoint": "nowhere"})
    assert refused.status_code == 400 and not IdempotencyKey.objects.exists()
    assert post(lead, url).status_code == 202 and Job.objects.count() == 1


def test_keys_belong_to_their_user(project, lead, make_user, url):
    second = make_user("second-lead")
    projects.add_member(project=project, user=second, role=Role.LEAD)
    assert post(lead, url).status_code == post(second, url).status_code == 202
    assert Job.objects.count() == 2


@pytest.mark.parametrize("key", ["", "has space", "x" * 65, "semi;colon"])
def test_a_malformed_key_is_refused(lead, url, key):
    response = post(lead, url, key=key)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()
    assert not Job.objects.exists()


def test_an_outsider_learns_nothing_from_a_key(outsider, lead, url):
    assert post(lead, url).status_code == 202
    assert post(outsider, url).status_code == 404


def test_an_import_resent_with_its_key_is_one_job(project, lead):
    url = f"/api/projects/{project.slug}/imports/"

    def send(rows=None):
        body = {"format": "jsonl", "files": [jsonl_upload(rows=rows)]}
        return client_for(lead).post(url, body, format="multipart", HTTP_IDEMPOTENCY_KEY="imp-1")

    first, again = send(), send()
    assert (first.status_code, again.status_code) == (202, 202) and again.json()["id"] == first.json()["id"]
    assert ImportJob.objects.count() == 1
    assert send(rows=[{"type": "document", "id": "other", "text": "Other."}]).status_code == 422
