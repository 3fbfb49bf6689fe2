"""Import N summaries (with sentence labels) from the platform's JSONL, then export them.

Prints the wall time of each phase; with --memory, the peak of Python allocations
(tracemalloc) instead, which slows the run about twice. Each summary has --sentences sentences,
each labelled by --annotators annotators: 10,000 x 5 x 2 = 100,000 judgments to export. Run it
against an empty database of your choice, e.g.

    DEBUG=1 ATTEST_VAR_DIR=$(mktemp -d) .venv/bin/python benchmarks/import_export.py --summaries 10000
    DEBUG=1 ATTEST_VAR_DIR=$(mktemp -d) .venv/bin/python benchmarks/import_export.py --summaries 10000 --sentences 5
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/attest_bench DEBUG=1 .venv/bin/python benchmarks/import_export.py
    .venv/bin/python benchmarks/import_export.py --quick

It creates the tables it needs (migrate) and a project named bench-<timestamp>.
"""

import argparse
import json
import os
import resource
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

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.corpus import services  # noqa: E402
from annotation.projects.models import Project  # noqa: E402

SENTENCES = [
    "The council discussed the budget for the next fiscal year.",
    "A resident asked for printed copies of the draft report.",
    "The motion to postpone the election was rejected.",
    "The mayor promised a decision on the park before June.",
    "Two members left the meeting before the final vote.",
]
ANNOTATORS = ["A1", "A22", "A333", "A4444", "A55555"]


def synthetic(path: Path, summaries: int, per_document: int = 10, sentences: int = 3, annotators: int = 2) -> int:
    """Write a JSONL file with summaries of `sentences` sentences, each labelled by `annotators` annotators."""
    judgments = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "campaign", "slug": "bench", "protocol": "tofueval_task1"}) + "\n")
        for d in range(summaries // per_document):
            turns = [{"speaker": f"Speaker {t % 3}", "text": f"Turn {t} of document {d}. " * 8} for t in range(40)]
            out.write(json.dumps({"type": "document", "id": f"d{d}", "kind": "dialogue", "turns": turns}) + "\n")
            out.write(json.dumps({"type": "topic", "document": f"d{d}", "name": "Budget"}) + "\n")
            ids = [f"d{d}-s{s}" for s in range(per_document)]
            for sid in ids:
                labels = [
                    {
                        "campaign": "bench",
                        "item": f"d{d}",
                        "annotator": a,
                        "dimension": "consistency",
                        "unit": f"sentence:{i}",
                        "value": "consistent" if (i + len(a)) % 2 else "inconsistent",
                        "explanation": "" if (i + len(a)) % 2 else "not in the source",
                    }
                    for a in ANNOTATORS[:annotators]
                    for i in range(sentences)
                ]
                judgments += len(labels)
                record = {
                    "type": "summary",
                    "id": sid,
                    "document": f"d{d}",
                    "topic": "Budget",
                    "system": f"model_{sid[-1]}",
                    "text": " ".join(SENTENCES[:sentences]),
                    "judgments": labels,
                }
                out.write(json.dumps(record) + "\n")
            item = {
                "type": "item",
                "campaign": "bench",
                "key": f"d{d}",
                "document": f"d{d}",
                "topic": "Budget",
                "summaries": ids,
            }
            out.write(json.dumps(item) + "\n")
    return judgments


TRACE_MEMORY = False


def measure(label: str, fn):
    """Wall time; with --memory also the peak of Python allocations (tracemalloc slows it ~2x)."""
    if TRACE_MEMORY:
        tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    memory = ""
    if TRACE_MEMORY:
        memory = f"   peak {tracemalloc.get_traced_memory()[1] / 2**20:8.1f} MiB"
        tracemalloc.stop()
    print(f"{label:<28} {seconds:8.2f} s{memory}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summaries", type=int, default=10000)
    parser.add_argument("--sentences", type=int, default=3, choices=range(1, len(SENTENCES) + 1), help="per summary")
    parser.add_argument("--annotators", type=int, default=2, choices=range(1, len(ANNOTATORS) + 1), help="per summary")
    parser.add_argument("--memory", action="store_true", help="trace peak memory (slower)")
    parser.add_argument("--quick", action="store_true", help="500 summaries")
    args = parser.parse_args()
    if args.quick:
        args.summaries = 500
    global TRACE_MEMORY
    TRACE_MEMORY = args.memory
    call_command("migrate", verbosity=0)
    slug = f"bench-{int(time.time())}"
    folder = Path(tempfile.mkdtemp())
    source = folder / "in.jsonl"
    judgments = synthetic(source, args.summaries, sentences=args.sentences, annotators=args.annotators)
    size = source.stat().st_size / 2**20
    print(
        f"database: {connection.vendor}; {args.summaries} summaries, {judgments} judgments, {size:.1f} MiB JSONL; "
        f"load average {os.getloadavg()}"
    )
    counts, _ = measure("import", lambda: services.import_data(project_slug=slug, format="jsonl", paths=[source]))
    print("  rows:", ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    project = Project.objects.get(slug=slug)

    def export() -> int:
        lines = 0
        with (folder / "out.jsonl").open("w", encoding="utf-8") as out:
            for line in services.export_lines(project=project):
                out.write(line)
                lines += 1
        return lines

    lines = measure("export", export)
    print(f"  {lines} lines, {(folder / 'out.jsonl').stat().st_size / 2**20:.1f} MiB")
    measure("re-import (nothing new)", lambda: services.import_data(project_slug=slug, format="jsonl", paths=[source]))
    print(f"peak RSS of the process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
