"""LLM pages: who may configure endpoints and prompts, prompt versions with conflicts, jobs
started from the browser with progress, and bad input answered in the form."""

import pytest

from annotation.corpus.models import Document, Topic
from annotation.llm.models import Endpoint, Job, Prompt

pytestmark = pytest.mark.django_db


@pytest.fixture
def documents(project):
    text = "Ana: The council approved the library budget.\nBen: The library opens in March."
    document = Document.objects.create(project=project, external_id="d1", kind="dialogue", text=text)
    Topic.objects.create(document=document, name="library budget")
    return [document]


def test_only_leads_and_staff_configure_endpoints_and_prompts(client, annotator, lead, make_user, project):
    from annotation.projects import services as projects
    from annotation.projects.models import Role

    viewer, reviewer, nobody = make_user("viewer"), make_user("reviewer"), make_user("nobody")
    projects.add_member(project=project, user=viewer, role=Role.VIEWER)
    projects.add_member(project=project, user=reviewer, role=Role.REVIEWER)
    for user in (annotator, viewer, reviewer, nobody):
        client.force_login(user)
        for url in ("/llm/endpoints/", "/llm/prompts/", "/llm/prompts/tofueval-summary/"):
            assert client.get(url).status_code == 404
        assert client.post("/llm/endpoints/", {"name": "x"}).status_code == 404
    client.force_login(lead)
    assert client.get("/llm/endpoints/").status_code == 200
    assert client.get("/llm/prompts/tofueval-summary/").status_code == 200


def test_an_endpoint_names_its_key_variable_and_never_shows_a_key(client, lead, monkeypatch):
    monkeypatch.setenv("ATTEST_FAKE_KEY", "sk-do-not-show")
    client.force_login(lead)
    post = {
        "name": "gpt",
        "kind": "openai",
        "base_url": "https://user:pw@example.test/v1",
        "model": "m",
        "key_env": "lower-case",
        "timeout_seconds": "30",
        "max_concurrency": "4",
        "requests_per_minute": "60",
        "price_input_per_1k": "0.1",
        "price_output_per_1k": "0.2",
        "is_active": "on",
    }
    response = client.post("/llm/endpoints/", post)
    assert response.status_code == 400
    page = response.content.decode()
    assert "no user:password@" in page and "An environment variable name" in page
    post |= {"base_url": "http://127.0.0.1:8001/v1", "key_env": "ATTEST_FAKE_KEY"}
    assert client.post("/llm/endpoints/", post).status_code == 302
    page = client.get("/llm/endpoints/").content.decode()
    assert "ATTEST_FAKE_KEY" in page and "sk-do-not-show" not in page


def test_editing_a_prompt_saves_a_new_version_and_refuses_a_stale_edit(client, lead, project, documents):
    client.force_login(lead)
    url = "/llm/prompts/tofueval-summary/"
    page = client.get(url).content.decode()
    assert "The council approved the library budget" in page  # the preview on a real item
    post = {"name": "Shorter", "system": "", "template": "Summarise {{ document }} on {{ topic }}.", "note": "shorter"}
    assert client.post(url, post | {"based_on": "1"}).status_code == 302
    assert Prompt.objects.get(slug="tofueval-summary", version=2).created_by == lead
    stale = client.post(url, post | {"based_on": "1", "template": "Other {{ document }}"})
    assert stale.status_code == 400 and "Version 2 was saved after the version 1" in stale.content.decode()
    unknown = client.post(url, post | {"based_on": "2", "template": "{{ document }} {{ secret }}"})
    assert unknown.status_code == 400 and "Unknown placeholder" in unknown.content.decode()


def test_a_lead_starts_an_offline_job_and_watches_it_finish(
    client, lead, project, documents, django_capture_on_commit_callbacks
):
    offline = Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/p/{project.slug}/llm/jobs/", {"kind": "summaries", "endpoints": [offline.pk], "n": "3"}
        )
    job = Job.objects.get()
    assert response.status_code == 302 and response.url == f"/p/{project.slug}/llm/jobs/{job.pk}/"
    page = client.get(response.url).content.decode()
    assert "offline baseline" in page and "1 done" in page
    partial = client.get(response.url, HTTP_HX_REQUEST="true")
    assert partial.status_code == 286  # htmx stops polling: the job is over


def test_a_job_that_cannot_run_is_refused_in_the_form(client, lead, project, documents):
    offline = Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)
    client.force_login(lead)
    response = client.post(f"/p/{project.slug}/llm/jobs/", {"kind": "judge", "endpoints": [offline.pk], "n": "3"})
    assert response.status_code == 400 and "not judge" in response.content.decode()
    assert not Job.objects.exists()


def test_a_form_sent_twice_starts_its_jobs_once(client, lead, project, documents):
    offline = Endpoint.objects.create(name="offline", kind=Endpoint.Kind.OFFLINE)
    client.force_login(lead)
    page = client.get(f"/p/{project.slug}/llm/jobs/").content.decode()
    key = page.split('name="request_key" value="', 1)[1].split('"', 1)[0]
    form = {"kind": "summaries", "endpoints": [offline.pk], "request_key": key}
    first = client.post(f"/p/{project.slug}/llm/jobs/", form)
    again = client.post(f"/p/{project.slug}/llm/jobs/", form, follow=True)
    assert first.status_code == 302 and Job.objects.count() == 1
    assert "already sent" in again.content.decode()
    fresh = client.get(f"/p/{project.slug}/llm/jobs/").content.decode()
    assert key not in fresh  # a new rendering, a new key: the next job is a new one


def test_annotators_and_outsiders_get_404_on_jobs(client, annotator, outsider, project, documents):
    offline = Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)
    job = Job.objects.create(project=project, kind="topics", endpoint=offline)
    for user in (annotator, outsider):
        client.force_login(user)
        assert client.get(f"/p/{project.slug}/llm/jobs/").status_code == 404
        assert client.get(f"/p/{project.slug}/llm/jobs/{job.pk}/").status_code == 404
        assert client.post(f"/p/{project.slug}/llm/jobs/{job.pk}/cancel/").status_code == 404
