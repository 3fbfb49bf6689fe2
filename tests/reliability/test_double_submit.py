"""Double submits under real concurrency: ten identical requests at once, each on its own
thread and database connection, against PostgreSQL (SQLite serialises writers, so it could
not show a race). What must hold: one set of labels, no revisions, no server error."""

import threading
from collections import Counter

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from annotation.corpus.models import Document, ImportJob, Summary, Topic
from annotation.llm.models import Endpoint, Job
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services, tofueval
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, JudgmentRevision, Protocol
from tests.api.test_api import jsonl_upload

THREADS = 10
TOKEN = "c0ffee" * 5
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a real race needs PostgreSQL's row locks"),
]


@pytest.fixture
def task(project, annotator):
    """A TofuEval task 1 item with two summaries of two sentences, assigned to the annotator."""
    document = Document.objects.create(
        project=project, external_id="d1", kind="dialogue", text="Ana: We meet at 4 pm.\nBen: I bring the tickets."
    )
    topic = Topic.objects.create(document=document, name="Meeting")
    summaries = []
    for n, text in enumerate(["They meet at 5 pm. Ben brings tickets.", "Ana sets a time. Ben has the tickets."]):
        summary = Summary.objects.create(
            project=project, document=document, topic=topic, external_id=f"s{n}", text=text
        )
        first, second = text.split(". ", 1)
        summary.sentences.create(index=0, start=0, end=len(first) + 1, text=first + ".")
        summary.sentences.create(index=1, start=len(first) + 2, end=len(text), text=second)
        summaries.append(summary)
    campaign = Campaign.objects.create(project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1)
    item = Item.objects.create(campaign=campaign, key="i1", document=document, topic=topic)
    item.summaries.set(summaries)
    return services.assign(item=item, annotator=annotator, seed=1)


def complete_form(assignment: Assignment) -> dict:
    form = {"topic_category": "main", "client_token": TOKEN, "draft_version": str(assignment.draft_version)}
    for summary in assignment.item.summaries.all():
        form[f"r-{summary.pk}"] = "4"
        for sentence in summary.sentences.all():
            form[f"s-{sentence.pk}"] = "consistent"
    return form


def at_once(clients: list, send) -> list:
    """send(client) on one thread per client, released together; the responses in order."""
    start, responses = threading.Barrier(len(clients)), [None] * len(clients)

    def run(n, client):
        try:
            start.wait()
            responses[n] = send(client)
        except Exception as error:  # noqa: BLE001 -- reported below as this request's outcome
            responses[n] = error
        finally:
            connection.close()  # each thread's own connection, or the test database cannot be dropped

    threads = [threading.Thread(target=run, args=(n, c)) for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a request hung (a lock never released?)"
    errors = [r for r in responses if isinstance(r, Exception)]
    assert not errors, errors
    return responses


def logged_in(user) -> list[Client]:
    clients = [Client(raise_request_exception=False) for _ in range(THREADS)]
    for client in clients:
        client.force_login(user)
    return clients


def expected_judgments(assignment) -> int:
    """Topic category; per summary: each sentence, not-a-summary and relevance."""
    return 1 + sum(s.sentences.count() + 2 for s in assignment.item.summaries.all())


def test_ten_identical_submits_at_once_record_one_set_of_labels(task, annotator):
    url = f"/p/{task.item.campaign.project.slug}/assignments/{task.pk}/submit/"
    form = complete_form(task)
    responses = at_once(logged_in(annotator), lambda client: client.post(url, form))
    statuses = Counter(r.status_code for r in responses)
    # each twin either saves the draft or finds the very same draft saved: no conflict to show
    assert statuses == {302: THREADS}, statuses
    task.refresh_from_db()
    assert (task.status, task.client_token, task.draft_version) == ("submitted", TOKEN, 1)
    assert Judgment.objects.filter(assignment=task).count() == expected_judgments(task)
    assert not JudgmentRevision.objects.exists()


def test_ten_identical_autosaves_at_once_accept_one_and_refuse_the_rest(task, annotator):
    url = f"/p/{task.item.campaign.project.slug}/assignments/{task.pk}/draft/"
    body = {"version": 0, "draft": {"topic_category": "main"}, "active_seconds_delta": 10}
    responses = at_once(logged_in(annotator), lambda client: client.post(url, body, content_type="application/json"))
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: THREADS - 1}, statuses
    assert all(r.json()["version"] == 1 for r in responses)  # the refused ones learn the version that won
    task.refresh_from_db()
    assert (task.draft_version, task.active_seconds, task.draft) == (1, 10.0, {"topic_category": "main"})
    assert not Judgment.objects.exists()


def test_a_submit_racing_its_twin_is_not_shown_a_conflict(task, annotator):
    """The interleaving the threads above hit by chance, made certain: the twin has saved the
    draft (version 0 -> 1) but not yet recorded it when this request saves."""
    form = complete_form(task)
    draft = tofueval.clean_draft(form, tofueval.summaries_in_order(task))
    services.save_draft(assignment_id=task.pk, draft=draft, version=0)  # the twin, half-way through
    response = logged_in(annotator)[0].post(f"/p/{task.item.campaign.project.slug}/assignments/{task.pk}/submit/", form)
    assert response.status_code == 302


# -- the API: what a double POST does --------------------------------------------------------------
@pytest.fixture
def api_lead(project, make_user):
    user = make_user("api-lead")
    projects.add_member(project=project, user=user, role=Role.LEAD)
    return user


def api_clients(user) -> list[APIClient]:
    clients = [APIClient() for _ in range(THREADS)]
    for client in clients:
        client.force_authenticate(user)
    return clients


def test_ten_identical_import_posts_import_the_rows_once(project, api_lead):
    """Each POST is its own job (the API has no idempotency key), but the imports serialise on the
    project row and the later ones find everything present: one set of rows, nine empty jobs."""
    url = f"/api/projects/{project.slug}/imports/"
    responses = at_once(
        api_clients(api_lead),
        lambda client: client.post(url, {"format": "jsonl", "files": [jsonl_upload()]}, format="multipart"),
    )
    assert Counter(r.status_code for r in responses) == {202: THREADS}
    jobs = ImportJob.objects.filter(project=project)
    assert jobs.count() == THREADS and set(jobs.values_list("status", flat=True)) == {"done"}
    assert sorted(bool(job.counts) for job in jobs) == [False] * (THREADS - 1) + [True]
    assert Summary.objects.filter(project=project).count() == 1 and Judgment.objects.count() == 3


@pytest.fixture
def summaries_job(project):
    Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    document = Document.objects.create(project=project, external_id="d", text="Ana: The library opens in March.")
    Topic.objects.create(document=document, name="library")
    return f"/api/projects/{project.slug}/llm/jobs/"


def test_ten_identical_llm_job_posts_without_a_key_start_ten_jobs(project, api_lead, summaries_job):
    """Without an Idempotency-Key each POST is a new request: the API cannot tell a double POST
    from two jobs wanted on purpose."""
    responses = at_once(
        api_clients(api_lead),
        lambda client: client.post(summaries_job, {"kind": "summaries", "endpoint": "base"}, format="json"),
    )
    assert Counter(r.status_code for r in responses) == {202: THREADS}
    assert Job.objects.filter(project=project).count() == THREADS


def test_ten_identical_llm_job_posts_with_one_key_start_one_job(project, api_lead, summaries_job):
    body, key = {"kind": "summaries", "endpoint": "base"}, "retry-7f3a"
    responses = at_once(
        api_clients(api_lead),
        lambda client: client.post(summaries_job, body, format="json", HTTP_IDEMPOTENCY_KEY=key),
    )
    assert Counter(r.status_code for r in responses) == {202: THREADS}
    assert Job.objects.filter(project=project).count() == 1
    assert {r.json()["id"] for r in responses} == {Job.objects.get().pk}
    assert sum(r.headers.get("Idempotent-Replayed") == "true" for r in responses) == THREADS - 1


def test_ten_identical_import_posts_with_one_key_make_one_job(project, api_lead):
    url = f"/api/projects/{project.slug}/imports/"
    responses = at_once(
        api_clients(api_lead),
        lambda client: client.post(
            url, {"format": "jsonl", "files": [jsonl_upload()]}, format="multipart", HTTP_IDEMPOTENCY_KEY="imp-1"
        ),
    )
    assert Counter(r.status_code for r in responses) == {202: THREADS}
    assert ImportJob.objects.filter(project=project).count() == 1
