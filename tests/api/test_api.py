import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.corpus.models import ImportJob, Summary
from annotation.projects import services as projects
from annotation.projects.models import Role
from tests.corpus.test_jsonl import records

pytestmark = pytest.mark.django_db


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def jsonl_upload(name="data.jsonl", rows=None) -> SimpleUploadedFile:
    body = "".join(json.dumps(r) + "\n" for r in (rows or records()))
    return SimpleUploadedFile(name, body.encode(), content_type="application/x-ndjson")


@pytest.fixture
def loaded(project, lead, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the task is queued on commit
        response = client_for(lead).post(
            f"/api/projects/{project.slug}/imports/", {"format": "jsonl", "files": [jsonl_upload()]}, format="multipart"
        )
    assert response.status_code == 202, response.content
    return project


def test_anonymous_is_refused(project):
    assert client_for().get("/api/projects/").status_code in (401, 403)


def test_projects_lists_only_my_projects(project, other_project, lead, outsider):
    slugs = [p["slug"] for p in client_for(lead).get("/api/projects/").json()["results"]]
    assert slugs == ["demo"]
    assert client_for(lead).get("/api/projects/demo/").json()["my_role"] == "lead"


@pytest.mark.parametrize(
    "url",
    [
        "/api/projects/demo/",
        "/api/projects/demo/members/",
        "/api/projects/demo/documents/",
        "/api/projects/demo/summaries/",
        "/api/projects/demo/export.jsonl",
        "/api/projects/demo/imports/1/",
    ],
)
def test_outsider_gets_404(project, outsider, url):
    assert client_for(outsider).get(url).status_code == 404


def test_import_through_the_api_runs_and_reports(loaded, lead):
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.DONE and job.counts["summaries"] == 1
    body = client_for(lead).get(f"/api/projects/demo/imports/{job.pk}/").json()
    assert body["status"] == "done" and body["progress"]["percent"] == 100
    assert Summary.objects.filter(project=loaded).count() == 1


def test_import_with_errors_reports_line_numbers_and_writes_nothing(project, lead, django_capture_on_commit_callbacks):
    bad = SimpleUploadedFile("bad.jsonl", b'{"type": "document", "id": "d1", "text": "x"}\n{oops\n')
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(lead).post(
            "/api/projects/demo/imports/", {"format": "jsonl", "files": [bad]}, format="multipart"
        )
    assert response.status_code == 202
    job = ImportJob.objects.get()
    assert job.status == "failed"
    assert job.errors[0]["line"] == 2 and job.errors[0]["file"] == "bad.jsonl"
    assert not project.documents.exists()


def test_import_needs_a_valid_format_and_files(project, lead):
    response = client_for(lead).post("/api/projects/demo/imports/", {"format": "nope"}, format="multipart")
    assert response.status_code == 400
    assert set(response.json()) == {"format", "files"}


def test_annotator_cannot_import_export_or_browse(project, annotator):
    client = client_for(annotator)
    assert client.post("/api/projects/demo/imports/", {"format": "jsonl"}, format="multipart").status_code == 404
    assert client.get("/api/projects/demo/export.jsonl").status_code == 404
    assert client.get("/api/projects/demo/documents/").status_code == 404
    assert client.get("/api/projects/demo/").status_code == 200


def test_viewer_exports_with_a_token(loaded, make_user):
    viewer = make_user("viewer")
    projects.add_member(project=loaded, user=viewer, role=Role.VIEWER)
    token = Token.objects.create(user=viewer)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get("/api/projects/demo/export.jsonl")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [r["type"] for r in lines] == ["campaign", "document", "topic", "summary", "item"]


def test_summaries_for_a_reviewer(loaded, make_user):
    reviewer = make_user("rev")
    projects.add_member(project=loaded, user=reviewer, role=Role.REVIEWER)
    body = client_for(reviewer).get("/api/projects/demo/summaries/").json()
    assert body["results"][0]["sentences"][1]["text"] == "Ben brings the tickets."


def test_schema_and_docs_are_served_offline(client, lead):
    client.force_login(lead)
    assert client.get("/api/schema/").status_code == 200
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower() and b"//cdn" not in docs.content.lower()


def test_api_refuses_two_files_with_one_name_and_a_stray_documents_file(project, lead):
    client = client_for(lead)
    twice = {"format": "jsonl", "files": [jsonl_upload(), jsonl_upload()]}
    response = client.post("/api/projects/demo/imports/", twice, format="multipart")
    assert response.status_code == 400 and "same name" in response.json()["files"][0]
    stray = {"format": "jsonl", "files": [jsonl_upload()], "documents": jsonl_upload("docs.jsonl")}
    response = client.post("/api/projects/demo/imports/", stray, format="multipart")
    assert response.status_code == 400 and "only read by the TofuEval" in response.json()["documents"][0]
    assert not ImportJob.objects.exists()


def test_an_unexpected_failure_marks_the_job_failed(project, lead, monkeypatch, django_capture_on_commit_callbacks):
    from annotation.corpus import services

    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(services, "import_data", explode)
    with django_capture_on_commit_callbacks(execute=True):  # the worker logs the error and goes on
        client_for(lead).post("/api/projects/demo/imports/", {"format": "jsonl", "files": [jsonl_upload()]})
    job = ImportJob.objects.get()
    assert job.status == "failed" and "internal error" in job.errors[0]["text"]


def test_only_leads_see_who_carries_which_pseudonym(project, lead, make_user):
    viewer = make_user("viewer")
    projects.add_member(project=project, user=viewer, role=Role.VIEWER)
    as_viewer = client_for(viewer).get("/api/projects/demo/members/").json()["results"]
    assert {m["pseudonym"] for m in as_viewer} == {None}
    as_lead = client_for(lead).get("/api/projects/demo/members/").json()["results"]
    assert {m["pseudonym"] for m in as_lead} == {"A1", "A2"}


def test_token_for_a_password_and_guessing_is_throttled(lead):
    from django.core.cache import cache

    cache.clear()
    client = APIClient()
    good = client.post("/api/token/", {"username": "lead", "password": "pw-correct-horse-9"})
    assert good.status_code == 200 and len(good.json()["token"]) == 40
    statuses = [
        client.post("/api/token/", {"username": "lead", "password": f"guess-{n}"}).status_code for n in range(5)
    ]
    assert statuses[:4] == [400] * 4 and statuses[4] == 429
    cache.clear()


def test_admin_signs_in_through_the_rate_limited_form(client):
    response = client.get("/admin/login/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_an_unknown_api_path_answers_json(client, lead):
    client.force_login(lead)
    response = client.get("/api/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
