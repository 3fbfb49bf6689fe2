"""The TofuEval task 1 annotation page: server time and SQL queries, and whether the query count
grows with the number of summary sentences.

For each sentences-per-summary count it builds one item (a dialogue of --words words, --summaries
summaries of that many sentences) and one annotator's assignment, then renders the page with
Django's test client --requests times with an empty draft and again with a complete one (every
field filled: the template looks each field up in the draft). Also counts the queries of one
autosave and of the submit of that complete draft.

    DEBUG=1 ATTEST_VAR_DIR=$(mktemp -d) .venv/bin/python benchmarks/task1_page.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_perf DEBUG=1 .venv/bin/python benchmarks/task1_page.py
    .venv/bin/python benchmarks/task1_page.py --quick

It creates the tables it needs (migrate) and a project named t1page-<timestamp>.
"""

import argparse
import json
import os
import statistics
import sys
import time
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
from django.urls import reverse  # noqa: E402

from annotation.corpus.models import Document, Summary, Topic  # noqa: E402
from annotation.projects import services as projects  # noqa: E402
from annotation.projects.models import Project, Role  # noqa: E402
from annotation.protocols import services, tofueval  # noqa: E402
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, Protocol  # noqa: E402

WORDS = ["the", "council", "member", "said", "the", "budget", "for", "next", "year", "needs", "review"]
SENTENCE = "Speaker {n} said the budget for the {n}th program would grow by {n} percent next year."


def dialogue(words: int, per_turn: int = 20) -> list[dict]:
    turns = []
    for t in range(max(1, words // per_turn)):
        text = " ".join(WORDS[(t + w) % len(WORDS)] for w in range(per_turn))
        turns.append({"speaker": f"Speaker {t % 3}", "text": text.capitalize() + "."})
    return turns


def make_item(campaign: Campaign, key: str, *, words: int, summaries: int, sentences: int) -> Item:
    """One (document, topic) with `summaries` summaries of `sentences` sentences each."""
    turns = dialogue(words)
    document = Document.objects.create(
        project=campaign.project,
        external_id=key,
        kind="dialogue",
        turns=turns,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
    )
    topic = Topic.objects.create(document=document, name="Budget")
    made = []
    for s in range(summaries):
        parts = [SENTENCE.format(n=n + 1) for n in range(sentences)]
        summary = Summary.objects.create(
            project=campaign.project,
            document=document,
            topic=topic,
            external_id=f"{key}-s{s}",
            system=f"model-{s}",
            text=" ".join(parts),
        )
        start = 0
        for index, text in enumerate(parts):
            summary.sentences.create(index=index, start=start, end=start + len(text), text=text)
            start += len(text) + 1
        made.append(summary)
    item = Item.objects.create(campaign=campaign, key=key, document=document, topic=topic)
    item.summaries.set(made)
    return item


def complete_draft(assignment: Assignment) -> dict:
    """Every field of the screen filled; every fourth sentence inconsistent with an explanation."""
    draft = {"topic_category": "main"}
    for summary in tofueval.summaries_in_order(assignment):
        draft[f"r-{summary.pk}"] = "4"
        for n, sentence in enumerate(summary.sentence_list):
            draft[f"s-{sentence.pk}"] = "inconsistent" if n % 4 == 3 else "consistent"
            if n % 4 == 3:
                draft[f"e-{sentence.pk}"] = "The dialogue gives a different figure."
    return draft


def render(client: Client, url: str, requests: int) -> dict:
    client.get(url)  # warm: templates compiled, session cached
    times, cpu = [], []
    for _ in range(requests):
        with CaptureQueriesContext(connection) as queries:
            start, start_cpu = time.perf_counter(), time.process_time()
            response = client.get(url)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        assert response.status_code == 200, response.status_code
    times.sort()
    return {
        "queries": len(queries.captured_queries),
        "median": statistics.median(times) * 1000,
        "p95": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] * 1000,
        "cpu": statistics.median(cpu) * 1000,
        "kib": len(response.content) / 1024,
    }


def measure(project, user, client, campaign, args, sentences: int) -> dict:
    key = f"n{sentences}"
    item = make_item(campaign, key, words=args.words, summaries=args.summaries, sentences=sentences)
    assignment = services.assign(item=item, annotator=user, seed=sentences)
    url = reverse("protocols:assignment", args=[project.slug, assignment.pk])
    empty = render(client, url, args.requests)
    draft = complete_draft(assignment)
    body = json.dumps({"version": 0, "draft": draft, "active_seconds_delta": 5})
    with CaptureQueriesContext(connection) as autosave:
        response = client.post(url + "draft/", body, content_type="application/json")
    assert response.status_code == 200, response.content
    full = render(client, url, args.requests)
    form = {**draft, "client_token": f"bench-{key}", "draft_version": "1", "active_seconds": "5"}
    with CaptureQueriesContext(connection) as submit:
        start = time.perf_counter()
        response = client.post(url + "submit/", form)
        submit_ms = (time.perf_counter() - start) * 1000
    assert response.status_code == 302, response.status_code
    stored = Judgment.objects.filter(assignment=assignment).count()
    return {
        "sentences": sentences,
        "total": sentences * args.summaries,
        "empty": empty,
        "full": full,
        "autosave_q": len(autosave.captured_queries),
        "submit_q": len(submit.captured_queries),
        "submit_ms": submit_ms,
        "judgments": stored,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, default=1200, help="words in the dialogue (default 1200)")
    parser.add_argument("--summaries", type=int, default=5, help="summaries per item (default 5)")
    parser.add_argument("--sentences", type=int, nargs="+", default=[2, 5, 10, 20], help="sentences per summary")
    parser.add_argument("--requests", type=int, default=50, help="page renders per measurement (default 50)")
    parser.add_argument("--quick", action="store_true", help="10 renders, 2 and 5 sentences")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.sentences = 10, [2, 5]
    call_command("migrate", verbosity=0)
    slug = f"t1page-{int(time.time())}"
    project = Project.objects.create(slug=slug, name="Task 1 page benchmark")
    user = get_user_model().objects.create_user(f"{slug}-ann", password="x-bench-password-1")
    projects.add_member(project=project, user=user, role=Role.ANNOTATOR)
    campaign = Campaign.objects.create(project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1)
    client = Client(SERVER_NAME="localhost")
    client.force_login(user)
    print(
        f"database: {connection.vendor}; DEBUG={int(django.conf.settings.DEBUG)}; dialogue of {args.words} words, "
        f"{args.summaries} summaries; {args.requests} renders each; load average {os.getloadavg()}"
    )
    print(
        "| sentences / summary | sentences | page queries (empty / full draft) | empty draft: median / p95 ms | CPU ms "
        "| full draft: median / p95 ms | CPU ms | KiB | autosave queries | submit queries | submit ms | judgments |"
    )
    print("|---" * 12 + "|")
    for n in args.sentences:
        r = measure(project, user, client, campaign, args, n)
        e, f = r["empty"], r["full"]
        print(
            f"| {n} | {r['total']} | {e['queries']} / {f['queries']} | {e['median']:.0f} / {e['p95']:.0f} "
            f"| {e['cpu']:.0f} | {f['median']:.0f} / {f['p95']:.0f} | {f['cpu']:.0f} | {f['kib']:.0f} "
            f"| {r['autosave_q']} | {r['submit_q']} | {r['submit_ms']:.0f} | {r['judgments']} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
