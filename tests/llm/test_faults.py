"""A job survives a worker killed with SIGKILL mid-job: real Celery workers (separate processes)
on the local Redis, PostgreSQL, and the fake OpenAI server. A new worker and the reconciler
finish the job, and every unit is written exactly once.

Needs PostgreSQL (the workers must see the test database) and Redis; CI has both.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from annotation.corpus.models import Document, Summary, Topic
from annotation.llm import kinds, services
from annotation.llm.models import Endpoint, Job, Prompt, Unit
from tests.llm import fake_openai

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/14"
UNITS = 40
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def worker_env() -> dict:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_TASK_ALWAYS_EAGER", "DJANGO_SETTINGS_MODULE")}
    extra = {"DJANGO_SETTINGS_MODULE": "annotation.settings", "DEBUG": "1", "LLM_STUCK_AFTER_SECONDS": "3"}
    return env | extra | {"DATABASE_URL": url, "REDIS_URL": REDIS}


def start_worker(env, log):
    command = [sys.executable, "-m", "celery", "-A", "annotation", "worker", "--concurrency=3", "--loglevel=info"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def manage(env, code: str) -> None:
    script = f"import django; django.setup(); from annotation.llm import services; {code}"
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, timeout=60)


def counts(job) -> dict[str, int]:
    return {status: Unit.objects.filter(job=job, status=status).count() for status in Unit.Status.values}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the workers need the test database: PostgreSQL")
def test_a_job_completes_exactly_once_after_its_worker_is_killed(project, tmp_path):
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    services.load_default_prompts()  # a transactional test may run after a flush
    for n in range(UNITS):
        document = Document.objects.create(project=project, external_id=f"d{n}", text=f"Ana: point {n}.")
        Topic.objects.create(document=document, name=f"topic {n}")
    with fake_openai.FakeOpenAI(reply=lambda request: "A short summary.", latency=0.25) as server:
        endpoint = Endpoint.objects.create(
            name="fake",
            base_url=server.url,
            model="m",
            max_concurrency=3,
            requests_per_minute=100000,
            timeout_seconds=5,  # a killed worker's slots are reclaimed 10 s later
        )
        job = Job.objects.create(
            project=project,
            kind=Job.Kind.SUMMARIES,
            endpoint=endpoint,
            prompt=Prompt.objects.get(slug="tofueval-summary", version=1),
        )
        Unit.objects.bulk_create(Unit(job=job, key=k, payload=p) for k, p in kinds.KINDS[job.kind].units(job))
        env = worker_env()
        log = (tmp_path / "workers.log").open("w")
        first = start_worker(env, log)
        try:
            manage(env, f"services.enqueue(job_id={job.pk})")
            deadline = time.monotonic() + 60
            while Unit.objects.filter(job=job, status=Unit.Status.DONE).count() < 8:
                assert time.monotonic() < deadline, (tmp_path / "workers.log").read_text()[-3000:]
                time.sleep(0.1)
        finally:
            os.killpg(first.pid, signal.SIGKILL)  # the worker and its pool processes, mid-job
            first.wait()
        killed_at = counts(job)
        assert killed_at["done"] < UNITS
        second = start_worker(env, log)
        try:
            deadline = time.monotonic() + 120
            while Job.objects.get(pk=job.pk).status != Job.Status.DONE:
                assert time.monotonic() < deadline, (counts(job), (tmp_path / "workers.log").read_text()[-3000:])
                time.sleep(3.5)
                manage(env, "services.reconcile()")  # what beat does every minute
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=30)
    assert counts(job)["done"] == UNITS
    made = Summary.objects.filter(project=project, external_id__startswith=f"llm-{job.pk}-")
    assert made.count() == UNITS and made.values("topic").distinct().count() == UNITS
    tokens = sum(Unit.objects.filter(job=job).values_list("output_tokens", flat=True))
    assert (
        tokens
        == UNITS * fake_openai.completion({"messages": []}, "A short summary.", 1.3)["usage"]["completion_tokens"]
    )
    print(f"killed with {killed_at}; {len(server.requests)} provider calls for {UNITS} units")
