"""Agreement over N judgments: full recompute (every figure, 1,000 bootstrap samples) and the
dashboard page with a warm snapshot.

    DEBUG=1 ATTEST_VAR_DIR=$(mktemp -d) .venv/bin/python benchmarks/agreement.py --items 10000 --annotators 10
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/attest_bench DEBUG=1 .venv/bin/python benchmarks/agreement.py
    .venv/bin/python benchmarks/agreement.py --quick

The default, 5,000 items x 10 annotators x 2 dimensions, is 100,000 judgments.

The labels (one nominal dimension with 3 labels and one ordinal 1-5 dimension, each item
rated by every annotator) are imported with the `labels` format first.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from annotation.agreement import services  # noqa: E402
from annotation.agreement.models import AgreementSnapshot  # noqa: E402
from annotation.corpus import services as corpus  # noqa: E402
from annotation.projects import services as projects  # noqa: E402
from annotation.protocols.models import Campaign  # noqa: E402


def labels(path: Path, items: int, annotators: int) -> int:
    rng = random.Random(1)
    n = 0
    with path.open("w") as out:
        for i in range(items):
            truth, score = rng.choice("abc"), rng.randint(1, 5)
            for a in range(annotators):
                label = truth if rng.random() > 0.25 else rng.choice("abc")
                out.write(
                    json.dumps(
                        {
                            "item": f"i{i}",
                            "annotator": f"ann{a}",
                            "dimension": "label",
                            "value": label,
                            "round": "pilot" if i % 10 == 0 else "main",
                        }
                    )
                    + "\n"
                )
                near = min(5, max(1, score + rng.choice([-1, 0, 0, 1])))
                out.write(
                    json.dumps(
                        {
                            "item": f"i{i}",
                            "annotator": f"ann{a}",
                            "dimension": "score",
                            "level": "ordinal",
                            "value": near,
                        }
                    )
                    + "\n"
                )
                n += 2
    return n


def timed(label: str, fn, memory: bool = False):
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    line = f"{label:<34} {time.perf_counter() - start:8.2f} s"
    if memory:
        line += f"   peak {tracemalloc.get_traced_memory()[1] / 2**20:7.1f} MiB"
        tracemalloc.stop()
    print(line)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--renders", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="200 items x 5 annotators, 5 renders")
    args = parser.parse_args()
    if args.quick:
        args.items, args.annotators, args.renders = 200, 5, 5
    call_command("migrate", verbosity=0)
    slug = f"agree-{int(time.time())}"
    source = Path(tempfile.mkdtemp()) / "labels.jsonl"
    n = labels(source, args.items, args.annotators)
    print(
        f"database: {connection.vendor}; {n} judgments ({args.items} items x {args.annotators} annotators x 2 dimensions);"
        f" load average {os.getloadavg()}"
    )
    timed("import (labels format)", lambda: corpus.import_data(project_slug=slug, format="labels", paths=[source]))
    campaign = Campaign.objects.get(project__slug=slug)
    snapshot = services.dashboard(campaign)  # creates the snapshot; the job is queued on commit (none here)
    timed("full recompute", lambda: services.recompute(snapshot_id=snapshot.pk))
    timed("full recompute, traced memory", lambda: services.recompute(snapshot_id=snapshot.pk), memory=True)
    print(f"  {len(AgreementSnapshot.objects.get(pk=snapshot.pk).results['metrics'])} figures")
    render(campaign, args.renders)
    print(f"load average after: {os.getloadavg()}")


def render(campaign: Campaign, renders: int) -> None:
    user = get_user_model().objects.create_user(f"lead-{campaign.project.slug}", password="x-bench-password-1")
    projects.add_member(project=campaign.project, user=user, role="lead")
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    url = f"/p/{campaign.project.slug}/campaigns/{campaign.pk}/agreement/"
    client.get(url)
    times = []
    for _ in range(renders):
        start = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200
    print(
        f"dashboard, warm snapshot: median {statistics.median(times) * 1000:.0f} ms over {renders} renders, "
        f"{len(queries.captured_queries)} queries, {len(response.content) / 1024:.0f} KiB"
    )


if __name__ == "__main__":
    main()
