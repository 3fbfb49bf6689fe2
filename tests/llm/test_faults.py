"""A job survives a worker killed with SIGKILL mid-job: real Celery workers (separate processes)
on the local Redis, PostgreSQL, and the fake OpenAI server. A new worker and the reconciler
finish the job, and every unit is written exactly once.

Needs PostgreSQL (the workers must see the test database) and Redis; CI has both. The tests
below also kill the workers three times, and restart Redis mid-job: on a redis-server of their
own, started on a free port and stopped afterwards, never the shared one.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from decimal import Decimal
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


# -- more faults, on a Redis of the test's own (never the shared one) ----------------------------
class OwnRedis:
    """A redis-server started for one test on a free port, without persistence: a restart loses
    every queued message and every rate-limit counter, the hard case."""

    def __init__(self, directory: Path):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.directory, self.process = directory, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.directory)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the test's own redis-server did not start"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.stop()


PRICE_IN, PRICE_OUT = Decimal("0.5"), Decimal("1.5")  # per 1k tokens: a cost counted twice shows


def summaries_job(project, server) -> Job:
    services.load_default_prompts()  # a transactional test may run after a flush
    for n in range(UNITS):
        document = Document.objects.create(project=project, external_id=f"d{n}", text=f"Ana: point {n}.")
        Topic.objects.create(document=document, name=f"topic {n}")
    endpoint = Endpoint.objects.create(
        name="fake",
        base_url=server.url,
        model="m",
        max_concurrency=3,
        requests_per_minute=100000,
        timeout_seconds=5,  # a killed worker's slots are reclaimed 10 s later
        price_input_per_1k=PRICE_IN,
        price_output_per_1k=PRICE_OUT,
    )
    job = Job.objects.create(
        project=project,
        kind=Job.Kind.SUMMARIES,
        endpoint=endpoint,
        prompt=Prompt.objects.get(slug="tofueval-summary", version=1),
    )
    Unit.objects.bulk_create(Unit(job=job, key=k, payload=p) for k, p in kinds.KINDS[job.kind].units(job))
    return job


def run_until(done, env, log_path: Path, seconds: float, what: str) -> None:
    """Wait for done(), running the reconciler every few seconds as beat would (every minute).
    The reconciler runs beside the polling, so a slow start of its process (a loaded machine)
    never hides how far the job got: the kills land where they are meant to."""
    deadline, next_reconcile, reconciler = time.monotonic() + seconds, time.monotonic() + 3.5, None
    script = "import django; django.setup(); from annotation.llm import services; services.reconcile()"
    try:
        while not done():
            assert time.monotonic() < deadline, (what, log_path.read_text()[-3000:])
            time.sleep(0.1)
            if time.monotonic() > next_reconcile and (reconciler is None or reconciler.poll() is not None):
                reconciler = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env)
                next_reconcile = time.monotonic() + 3.5
    finally:
        if reconciler is not None:
            reconciler.wait(timeout=60)


def assert_done_exactly_once(job, server) -> None:
    """Every unit done, one summary each, and its tokens and cost those of one call."""
    assert Job.objects.get(pk=job.pk).status == Job.Status.DONE
    assert counts(job)["done"] == UNITS
    made = Summary.objects.filter(project=job.project, external_id__startswith=f"llm-{job.pk}-")
    assert made.count() == UNITS and made.values("topic").distinct().count() == UNITS
    one_call = fake_openai.completion(server.requests[0], "A short summary.", 1.3)["usage"]
    tokens_in, tokens_out = one_call["prompt_tokens"], one_call["completion_tokens"]
    cost = job.endpoint.cost(tokens_in, tokens_out)
    assert set(Unit.objects.filter(job=job).values_list("input_tokens", "output_tokens", "cost")) == {
        (tokens_in, tokens_out, cost)
    }
    assert services.progress(job)["cost"] == UNITS * cost


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the workers need the test database: PostgreSQL")
def test_a_job_completes_exactly_once_though_its_workers_are_killed_three_times(project, tmp_path, own_redis):
    # 1 s a call, 3 at a time: on a loaded machine this process may look at the count a second
    # or two late, and the job must still be far from done when the third kill lands
    with fake_openai.FakeOpenAI(reply=lambda request: "A short summary.", latency=1.0) as server:
        job = summaries_job(project, server)
        env = worker_env() | {"REDIS_URL": own_redis.url}
        log_path = tmp_path / "workers.log"
        log = log_path.open("w")
        killed_at, done = [], Unit.objects.filter(job=job, status=Unit.Status.DONE)
        for n, step in enumerate((4, 8, 6)):  # early, in the middle, then again: each after some progress
            worker = start_worker(env, log)
            try:
                if n == 0:
                    manage(env, f"services.enqueue(job_id={job.pk})")
                target = done.count() + step
                run_until(lambda t=target: done.count() >= t, env, log_path, 120, f"kill {n + 1}")
            finally:
                os.killpg(worker.pid, signal.SIGKILL)  # the worker and its pool processes, mid-call
                worker.wait()
            killed_at.append(counts(job))
        assert all(c["done"] < UNITS for c in killed_at), killed_at
        last = start_worker(env, log)
        try:
            run_until(lambda: Job.objects.get(pk=job.pk).status == Job.Status.DONE, env, log_path, 180, "finish")
        finally:
            os.killpg(last.pid, signal.SIGTERM)
            last.wait(timeout=30)
        assert_done_exactly_once(job, server)
    print(f"killed with {killed_at}; {len(server.requests)} provider calls for {UNITS} units")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the workers need the test database: PostgreSQL")
def test_a_job_completes_exactly_once_across_a_restart_of_its_redis(project, tmp_path, own_redis):
    """The broker, the cache and the rate limiter all live in this Redis; restarted without
    persistence it loses the queue, and the reconciler sends what was pending again."""
    with fake_openai.FakeOpenAI(reply=lambda request: "A short summary.", latency=0.25) as server:
        job = summaries_job(project, server)
        env = worker_env() | {"REDIS_URL": own_redis.url}
        log_path = tmp_path / "workers.log"
        worker = start_worker(env, log_path.open("w"))
        try:
            manage(env, f"services.enqueue(job_id={job.pk})")
            done = Unit.objects.filter(job=job, status=Unit.Status.DONE)
            run_until(lambda: done.count() >= 10, env, log_path, 120, "before the restart")
            own_redis.stop()
            restarted_at = counts(job)
            time.sleep(2)  # an outage, not a blip
            own_redis.start()
            run_until(lambda: Job.objects.get(pk=job.pk).status == Job.Status.DONE, env, log_path, 180, "finish")
            assert worker.poll() is None, "the worker died with its broker instead of reconnecting"
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        assert restarted_at["done"] < UNITS, restarted_at
        assert_done_exactly_once(job, server)
    print(f"Redis restarted with {restarted_at}; {len(server.requests)} provider calls for {UNITS} units")
