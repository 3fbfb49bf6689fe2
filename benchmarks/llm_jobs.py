"""An LLM job of N units against the fake OpenAI server (latency L) at several endpoint
concurrencies: wall time against the ideal N x L / concurrency, the peak number of requests in
flight (must not exceed the concurrency), and, in a rate-limited run, the most requests in any
60-second window (must not exceed requests per minute).

Real components: PostgreSQL, Redis as broker and limiter, and a Celery worker process (thread
pool of 16) started by this script.

    createdb -h 127.0.0.1 -U postgres attest_bench   # once
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/attest_bench REDIS_URL=redis://127.0.0.1:6379/13 \\
        .venv/bin/python benchmarks/llm_jobs.py [--units 1000] [--latency 0.2] [--concurrency 1 4 16]
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from annotation.corpus.models import Document, Topic  # noqa: E402
from annotation.llm import kinds, services  # noqa: E402
from annotation.llm.models import Endpoint, Job, Prompt, Unit  # noqa: E402
from annotation.projects.models import Project  # noqa: E402
from tests.llm import fake_openai  # noqa: E402

SLUG = "llm-bench"


def corpus(units: int) -> Project:
    Project.objects.filter(slug=SLUG).delete()
    project = Project.objects.create(slug=SLUG, name="LLM benchmark")
    documents = Document.objects.bulk_create(
        Document(project=project, external_id=f"d{n}", text=f"Speaker 0: item {n} of the agenda.") for n in range(units)
    )
    Topic.objects.bulk_create(Topic(document=d, name="the agenda") for d in documents)
    return project


def run(project, server, *, units: int, concurrency: int, rpm: int) -> dict:
    Job.objects.filter(project=project).delete()
    Endpoint.objects.filter(name__startswith="bench-").delete()
    endpoint = Endpoint.objects.create(
        name=f"bench-{concurrency}-{rpm}",
        base_url=server.url,
        model="fake",
        max_concurrency=concurrency,
        requests_per_minute=rpm,
        timeout_seconds=10,
    )
    job = Job.objects.create(
        project=project,
        kind=Job.Kind.SUMMARIES,
        endpoint=endpoint,
        prompt=Prompt.objects.filter(slug="tofueval-summary").order_by("-version").first(),
    )
    planned = kinds.KINDS[job.kind].units(job)[:units]
    Unit.objects.bulk_create(Unit(job=job, key=k, payload=p) for k, p in planned)
    server.requests.clear(), server.arrivals.clear()
    server.peak_in_flight = 0
    started = time.monotonic()
    services.enqueue(job_id=job.pk)
    while True:
        job.refresh_from_db()
        if not job.is_open():
            break
        time.sleep(0.2)
    wall = time.monotonic() - started
    arrivals = sorted(server.arrivals)
    window = max((sum(1 for t in arrivals[i:] if t - a < 60) for i, a in enumerate(arrivals)), default=0)
    progress = services.progress(job)
    ideal = units * server.latency / concurrency
    if rpm < units:  # the rate window, not concurrency, is the bound
        ideal = max(ideal, 60.0 * ((units - 1) // rpm))  # the limiter adds a 1 s guard per window
    return {
        "units": units,
        "concurrency": concurrency,
        "rpm": rpm,
        "latency_s": server.latency,
        "wall_s": round(wall, 1),
        "ideal_s": round(ideal, 1),
        "efficiency": round(ideal / wall, 2),
        "peak_in_flight": server.peak_in_flight,
        "max_requests_in_60s": window,
        "calls": len(server.requests),
        "done": progress["done"],
        "failed": progress["failed"],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--rate-units", type=int, default=400, help="units of the rate-limited run (0: skip)")
    parser.add_argument("--rpm", type=int, default=300, help="requests per minute of the rate-limited run")
    args = parser.parse_args()
    if not settings.REDIS_URL or "postgres" not in os.environ.get("DATABASE_URL", ""):
        sys.exit("Set DATABASE_URL (PostgreSQL) and REDIS_URL: this measures the production set-up.")
    call_command("migrate", verbosity=0)
    import redis

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    project = corpus(max(args.units, args.rate_units))
    env = os.environ | {"LLM_STUCK_AFTER_SECONDS": "600"}
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "annotation",
            "worker",
            "--pool=threads",
            "--concurrency=16",
            "--loglevel=warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    rows = []
    try:
        time.sleep(3)  # the worker connects
        with fake_openai.FakeOpenAI(reply=lambda request: "A summary of the agenda.", latency=args.latency) as server:
            for concurrency in args.concurrency:
                rows.append(run(project, server, units=args.units, concurrency=concurrency, rpm=100000))
                print(json.dumps(rows[-1]), flush=True)
            if args.rate_units:
                rows.append(run(project, server, units=args.rate_units, concurrency=16, rpm=args.rpm))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)
    print("\n| units | concurrency | rpm | wall | ideal | efficiency | peak in flight | max in 60 s | calls |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rpm = "—" if r["rpm"] >= 100000 else r["rpm"]
        print(
            f"| {r['units']} | {r['concurrency']} | {rpm} | {r['wall_s']} s | {r['ideal_s']} s | {r['efficiency']} "
            f"| {r['peak_in_flight']} | {r['max_requests_in_60s']} | {r['calls']} |"
        )


if __name__ == "__main__":
    main()
