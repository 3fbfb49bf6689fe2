"""LLM jobs end to end in-process (Celery eager) against the fake OpenAI server over real HTTP:
artefacts with provenance, strict parsing, retries, budget, cancel / resume, reconciling."""

import os
import time
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.corpus import text as textlib
from annotation.corpus.models import Document, Origin, Summary, SummarySentence, Topic
from annotation.llm import ratelimit, services
from annotation.llm.models import Endpoint, Job, Prompt, Unit
from tests.llm import fake_openai

pytestmark = pytest.mark.django_db
DIALOGUE = (
    "Ana: The council approved the library budget on Monday.\n"
    "Ben: Parking permits will cost twenty dollars next year.\n"
    "Ana: The new bus line opens in March."
)


@pytest.fixture
def corpus(project):
    documents = []
    for n in range(3):
        document = Document.objects.create(project=project, external_id=f"d{n}", kind="dialogue", text=DIALOGUE)
        Topic.objects.create(document=document, name="library budget", origin="release")
        documents.append(document)
    text = "The council approved the budget. Parking will be free."
    summary = Summary.objects.create(
        project=project, document=documents[0], topic=documents[0].topics.first(), external_id="s1", text=text
    )
    SummarySentence.objects.bulk_create(
        SummarySentence(summary=summary, index=s.index, start=s.start, end=s.end, text=s.text)
        for s in textlib.split_sentences(text)
    )
    return documents


@pytest.fixture
def server():
    with fake_openai.FakeOpenAI(reply=lambda request: "1. library budget\n2. parking permits\n3. bus line") as fake:
        yield fake


def endpoint_for(server, **extra):
    values = {"name": "fake", "base_url": server.url, "model": "fake-model", "timeout_seconds": 2} | extra
    return Endpoint.objects.create(**values)


def run(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        job = services.create_job(**kwargs)
    job.refresh_from_db()
    return job


def test_a_topics_job_writes_topics_with_their_provenance_once(
    project, corpus, server, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(server, price_input_per_1k=Decimal("0.5"), price_output_per_1k=Decimal("1.5"))
    job = run(django_capture_on_commit_callbacks, project=project, kind=Job.Kind.TOPICS, endpoint=endpoint)
    progress = services.progress(job)
    assert (job.status, progress["done"], progress["failed"], progress["total"]) == ("done", 3, 0, 3)
    assert progress["input_tokens"] > 0 and progress["cost"] > 0
    generated = Topic.objects.filter(origin=Origin.LLM)
    assert generated.count() == 6  # "library budget" already existed on each document
    provenance = generated.first().provenance
    assert provenance["prompt"] == "tofueval-topics v1" and provenance["model"] == "fake-model"
    assert provenance["raw"].startswith("1. library budget")
    # The prompt that was sent is the rendered default, with the document in it.
    assert "The council approved the library budget" in server.requests[0]["messages"][-1]["content"]
    # A unit delivered again writes nothing.
    unit = job.units.first()
    assert services.run_unit(unit_id=unit.pk) == "skipped"
    assert Topic.objects.filter(origin=Origin.LLM).count() == 6 and len(server.requests) == 3


def test_invalid_output_is_kept_shown_and_counted_as_failed(
    project, corpus, server, django_capture_on_commit_callbacks
):
    server.reply = lambda request: "Sure! Here are some topics: budget, parking"
    job = run(django_capture_on_commit_callbacks, project=project, kind=Job.Kind.TOPICS, endpoint=endpoint_for(server))
    assert services.progress(job)["failed"] == 3 and job.status == "done"
    unit = job.units.first()
    assert unit.raw_output == "Sure! Here are some topics: budget, parking"
    assert unit.error.startswith("Invalid output: expected numbered lines")
    assert not Topic.objects.filter(origin=Origin.LLM).exists()


def test_a_429_and_a_500_are_retried_then_succeed(project, corpus, server, django_capture_on_commit_callbacks):
    server.script = [fake_openai.status(429, "slow down"), fake_openai.status(500, "oops")]
    endpoint = endpoint_for(server)
    job = run(
        django_capture_on_commit_callbacks,
        project=project,
        kind=Job.Kind.TOPICS,
        endpoint=endpoint,
        params={"documents": [corpus[0].pk]},
    )
    unit = job.units.get()
    assert (unit.status, unit.attempts) == ("done", 3)
    assert len(server.requests) == 3


def test_a_unit_gives_up_after_its_attempts_with_the_providers_message(
    project, corpus, server, django_capture_on_commit_callbacks
):
    server.reply = lambda request: fake_openai.status(503, "model overloaded")
    job = run(
        django_capture_on_commit_callbacks,
        project=project,
        kind=Job.Kind.TOPICS,
        endpoint=endpoint_for(server),
        params={"documents": [corpus[0].pk]},
    )
    unit = job.units.get()
    assert unit.status == "failed" and unit.attempts == services.MAX_ATTEMPTS
    assert "model overloaded" in unit.error and "Gave up after 5 attempts" in unit.error


def test_a_4xx_is_not_retried(project, corpus, server, django_capture_on_commit_callbacks):
    server.reply = lambda request: fake_openai.status(400, "context too long")
    job = run(
        django_capture_on_commit_callbacks,
        project=project,
        kind=Job.Kind.TOPICS,
        endpoint=endpoint_for(server),
        params={"documents": [corpus[0].pk]},
    )
    unit = job.units.get()
    assert (unit.status, unit.attempts, len(server.requests)) == ("failed", 1, 1)
    assert "HTTP 400: context too long" in unit.error


def test_the_budget_stops_the_job(project, corpus, server, django_capture_on_commit_callbacks):
    endpoint = endpoint_for(server, price_input_per_1k=Decimal("1000"))
    job = run(
        django_capture_on_commit_callbacks,
        project=project,
        kind=Job.Kind.TOPICS,
        endpoint=endpoint,
        budget_usd=Decimal("1"),
    )
    progress = services.progress(job)
    assert job.status == Job.Status.BUDGET_STOPPED
    assert (progress["done"], progress["cancelled"]) == (1, 2)
    with pytest.raises(ValidationError, match="raise the budget"):
        services.resume(job=job)
    with django_capture_on_commit_callbacks(execute=True):
        services.resume(job=job, budget_usd=Decimal("1000000"))
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and services.progress(job)["done"] == 3


def test_cancel_then_resume(project, corpus, server, django_capture_on_commit_callbacks):
    endpoint = endpoint_for(server)
    job = services.create_job(project=project, kind=Job.Kind.TOPICS, endpoint=endpoint)  # not enqueued
    services.cancel(job=job)
    assert services.run_unit(unit_id=job.units.first().pk) == "skipped"
    assert set(job.units.values_list("status", flat=True)) == {"cancelled"}
    with django_capture_on_commit_callbacks(execute=True):
        services.resume(job=job)
    job.refresh_from_db()
    assert job.status == "done" and services.progress(job)["done"] == 3


def test_the_reconciler_reenqueues_stuck_units(project, corpus, server, django_capture_on_commit_callbacks):
    job = services.create_job(project=project, kind=Job.Kind.TOPICS, endpoint=endpoint_for(server))
    long_ago = timezone.now() - timedelta(hours=1)
    Unit.objects.filter(job=job).update(status=Unit.Status.RUNNING, started_at=long_ago)  # a worker died
    assert services.reconcile() == 3
    job.refresh_from_db()
    assert job.status == "done" and services.progress(job)["done"] == 3


def test_summaries_from_the_offline_baseline_are_labelled_as_such(project, corpus, django_capture_on_commit_callbacks):
    offline = Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)
    job = run(django_capture_on_commit_callbacks, project=project, kind=Job.Kind.SUMMARIES, endpoint=offline)
    assert services.progress(job)["done"] == 3
    made = Summary.objects.filter(origin=Origin.BASELINE)
    assert made.count() == 3 and {s.system for s in made} == {"offline-baseline"}
    assert all(s.sentences.exists() and len(s.text.split()) <= 50 for s in made)
    assert made.first().provenance["baseline"] is True


def test_a_sentence_judge_labels_each_sentence(project, corpus, server, django_capture_on_commit_callbacks):
    server.reply = lambda request: "no" if "free" in request["messages"][-1]["content"].split("Claim:")[1] else "yes"
    prompt = Prompt.objects.get(slug="tofueval-judge-sentence", version=1)
    job = run(
        django_capture_on_commit_callbacks,
        project=project,
        kind=Job.Kind.JUDGE,
        endpoint=endpoint_for(server),
        prompt=prompt,
    )
    labels = sorted((u.key, u.result["label"]) for u in job.units.all())
    sentences = list(SummarySentence.objects.order_by("index").values_list("pk", flat=True))
    assert labels == [(f"sentence:{sentences[0]}", "consistent"), (f"sentence:{sentences[1]}", "inconsistent")]


def test_jobs_that_cannot_run_are_refused_with_a_reason(project, corpus):
    offline = Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)
    with pytest.raises(ValidationError, match="not judge"):
        services.create_job(project=project, kind=Job.Kind.JUDGE, endpoint=offline)
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValidationError, match="cannot drive"):
        services.create_job(
            project=project, kind=Job.Kind.TOPICS, endpoint=endpoint, prompt=Prompt.objects.get(slug="tofueval-summary")
        )
    with pytest.raises(ValidationError, match="Nothing to do"):
        services.create_job(project=project, kind=Job.Kind.TOPICS, endpoint=endpoint, params={"documents": [0]})


def test_the_local_limiter_holds_concurrency_and_rate():
    limiter = ratelimit.LocalLimiter()
    limits = ratelimit.Limits(key="k", max_concurrency=2, requests_per_minute=3, slot_seconds=30)
    first, _ = limiter.acquire(limits)
    second, _ = limiter.acquire(limits)
    third, wait = limiter.acquire(limits)
    assert first and second and third is None and 0 < wait <= 1
    limiter.release(limits, first)
    fourth, _ = limiter.acquire(limits)
    assert fourth
    limiter.release(limits, second)
    fifth, wait = limiter.acquire(limits)  # a free slot, but 3 requests this minute already
    assert fifth is None and 55 < wait <= ratelimit.WINDOW


REDIS = os.environ.get("REDIS_URL") or (
    "redis://127.0.0.1:6379/15" if os.environ.get("ATTEST_REQUIRE_SERVICES") else ""
)


@pytest.mark.skipif(not REDIS, reason="needs Redis (REDIS_URL)")
def test_the_redis_limiter_holds_across_clients():
    """Two limiter objects (two workers) share one endpoint's slots and rate window."""
    one, two = ratelimit.RedisLimiter(REDIS), ratelimit.RedisLimiter(REDIS)
    key = f"attest:test:{uuid.uuid4().hex}"
    limits = ratelimit.Limits(key=key, max_concurrency=2, requests_per_minute=3, slot_seconds=30)
    first, _ = one.acquire(limits)
    second, _ = two.acquire(limits)
    third, wait = one.acquire(limits)
    assert first and second and third is None and 0 < wait <= 1
    two.release(limits, first)
    assert one.acquire(limits)[0]
    one.release(limits, second)
    fifth, wait = two.acquire(limits)
    assert fifth is None and 55 < wait <= ratelimit.WINDOW
    expired = ratelimit.Limits(key=key + "x", max_concurrency=1, requests_per_minute=100, slot_seconds=0.2)
    assert one.acquire(expired)[0] and one.acquire(expired)[0] is None
    time.sleep(0.3)  # a crashed worker's slot expires by itself
    assert two.acquire(expired)[0]
