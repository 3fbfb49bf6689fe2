"""Export a project as the platform's JSONL, one line per record, in a stable order.

Streams: rows are read in chunks of CHUNK summaries (or items) with plain `.values()` queries,
a fixed number per chunk, so memory stays flat and time linear with the size of the project.
The caller runs it inside `snapshot()` so that every line comes from one consistent state of
the database even while annotators keep working.
"""

import json
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import F

from annotation.corpus.models import Document, Summary, SummarySentence, Topic
from annotation.projects.models import Project
from annotation.protocols.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Judgment,
    JudgmentRevision,
    unit_name,
)

CHUNK = 500
FORMAT_VERSION = 1


@contextmanager
def snapshot():
    """A read-only transaction whose reads all see one moment (REPEATABLE READ on PostgreSQL;
    SQLite's single read transaction gives the same)."""
    outermost = not connection.in_atomic_block  # inside a caller's transaction, its snapshot holds
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def iso(value) -> str | None:
    return value.isoformat() if value else None


def taxonomy_ref(row: dict) -> dict | None:
    return {"slug": row["tax_slug"], "version": row["tax_version"]} if row["tax_slug"] else None


def unit(row: dict) -> str:
    return unit_name(sentence_index=row["sentence_index"], has_summary=bool(row["summary_id"]), target=row["target"])


def chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def label_fields(item_path: str) -> dict:
    """Columns shared by judgments and adjudications; `item_path` leads from the row to its item."""
    return {
        "campaign": F(f"{item_path}__campaign__slug"),
        "item_key": F(f"{item_path}__key"),
        "sentence_index": F("sentence__index"),
        "tax_slug": F("taxonomy__slug"),
        "tax_version": F("taxonomy__version"),
    }


class Exporter:
    def __init__(self, project: Project):
        self.project = project
        memberships = project.memberships.select_related("project")
        self.pseudonyms = {m.user_id: m.exported_pseudonym() for m in memberships}

    def lines(self) -> Iterator[str]:
        for record in self.records():
            yield json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"

    def records(self) -> Iterator[dict]:
        yield from self.campaigns()
        yield from self.documents()
        yield from self.topics()
        yield from self.summaries(edits=False)
        yield from self.summaries(edits=True)
        yield from self.items()

    def campaigns(self) -> Iterator[dict]:
        for c in Campaign.objects.filter(project=self.project).select_related("taxonomy").order_by("slug"):
            taxonomy = {"slug": c.taxonomy.slug, "version": c.taxonomy.version} if c.taxonomy else None
            yield {
                "type": "campaign",
                "slug": c.slug,
                "name": c.name,
                "protocol": c.protocol,
                "guidelines": c.guidelines,
                "taxonomy": taxonomy,
                "annotators_per_item": c.annotators_per_item,
                "double_share": c.double_share,
                "rounds": c.rounds,
                "status": c.status,
                "is_release": c.is_release,
                "settings": c.settings,
                "created_at": iso(c.created_at),
            }

    def documents(self) -> Iterator[dict]:
        rows = Document.objects.filter(project=self.project).order_by("external_id")
        for d in rows.iterator(chunk_size=CHUNK):
            yield {
                "type": "document",
                "id": d.external_id,
                "dataset": d.dataset,
                "split": d.split,
                "kind": d.kind,
                "text": d.text,
                "turns": d.turns,
                "text_missing": d.text_missing,
                "meta": d.meta,
            }

    def topics(self) -> Iterator[dict]:
        rows = Topic.objects.filter(document__project=self.project).values("name", "origin", "provenance")
        rows = rows.annotate(document_key=F("document__external_id")).order_by("document__external_id", "name")
        for t in rows.iterator(chunk_size=CHUNK):
            yield {
                "type": "topic",
                "document": t["document_key"],
                "name": t["name"],
                "origin": t["origin"],
                "provenance": t["provenance"],
            }

    # -- summaries ---------------------------------------------------------------------------
    def summaries(self, *, edits: bool) -> Iterator[dict]:
        rows = Summary.objects.filter(project=self.project, edit__isnull=not edits).order_by("external_id")
        for ids in chunks(list(rows.values_list("pk", flat=True))):
            yield from self.summary_chunk(ids)

    def summary_chunk(self, ids: list[int]) -> Iterator[dict]:
        rows = (
            Summary.objects.filter(pk__in=ids)
            .order_by("external_id")
            .values(
                "pk",
                "external_id",
                "system",
                "origin",
                "text",
                "provenance",
                document_key=F("document__external_id"),
                topic_name=F("topic__name"),
                seed_domain=F("seed__domain"),
                seed_query=F("seed__query"),
                seed_pk=F("seed__pk"),
                edit_of=F("edit__seed__summary__external_id"),
            )
        )
        sentences = defaultdict(list)
        for s in (
            SummarySentence.objects.filter(summary_id__in=ids)
            .order_by("summary_id", "index")
            .values("summary_id", "index", "start", "end", "text")
        ):
            sentences[s.pop("summary_id")].append(s)
        judgments = self.judgments(Judgment.objects.filter(summary_id__in=ids), key="summary_id")
        adjudications = self.adjudications(Adjudication.objects.filter(summary_id__in=ids), key="summary_id")
        for s in rows:
            yield {
                "type": "summary",
                "id": s["external_id"],
                "document": s["document_key"],
                "topic": s["topic_name"],
                "system": s["system"],
                "origin": s["origin"],
                "text": s["text"],
                "sentences": sentences[s["pk"]],
                "provenance": s["provenance"],
                "seed": {"domain": s["seed_domain"], "query": s["seed_query"]} if s["seed_pk"] else None,
                "edit_of": s["edit_of"],
                "judgments": judgments[s["pk"]],
                "adjudicated": adjudications[s["pk"]],
            }

    # -- labels, grouped by the line they belong to --------------------------------------------
    def judgments(self, queryset, *, key: str) -> dict[int, list[dict]]:
        rows = list(
            queryset.values(
                "pk",
                "summary_id",
                "target",
                "dimension",
                "value",
                "explanation",
                "version",
                "created_at",
                "updated_at",
                annotator_id=F("assignment__annotator_id"),
                stage=F("assignment__stage"),
                group=F(key),
                **label_fields("assignment__item"),
            )
        )
        history = defaultdict(list)
        revisions = JudgmentRevision.objects.filter(judgment_id__in=[r["pk"] for r in rows]).order_by("version")
        for r in revisions.values("judgment_id", "version", "value", "explanation", "changed_at", "changed_by_id"):
            history[r["judgment_id"]].append(
                {
                    "version": r["version"],
                    "value": r["value"],
                    "explanation": r["explanation"],
                    "changed_at": iso(r["changed_at"]),
                    "changed_by": self.pseudonyms.get(r["changed_by_id"]),
                }
            )
        grouped = defaultdict(list)
        for j in rows:
            grouped[j["group"]].append(
                {
                    "campaign": j["campaign"],
                    "item": j["item_key"],
                    "annotator": self.pseudonyms.get(j["annotator_id"], "unknown"),
                    "stage": j["stage"],
                    "dimension": j["dimension"],
                    "unit": unit(j),
                    "value": j["value"],
                    "explanation": j["explanation"],
                    "taxonomy": taxonomy_ref(j),
                    "version": j["version"],
                    "created_at": iso(j["created_at"]),
                    "updated_at": iso(j["updated_at"]),
                    "history": history[j["pk"]],
                }
            )
        order = ("campaign", "item", "annotator", "stage", "dimension", "unit")
        return defaultdict(list, {g: sorted(v, key=lambda j: tuple(j[k] for k in order)) for g, v in grouped.items()})

    def adjudications(self, queryset, *, key: str) -> dict[int, list[dict]]:
        rows = queryset.values(
            "summary_id",
            "target",
            "dimension",
            "value",
            "note",
            "decided_by_id",
            "decided_at",
            "version",
            group=F(key),
            **label_fields("item"),
        )
        grouped = defaultdict(list)
        for a in rows:
            grouped[a["group"]].append(
                {
                    "campaign": a["campaign"],
                    "item": a["item_key"],
                    "dimension": a["dimension"],
                    "unit": unit(a),
                    "value": a["value"],
                    "note": a["note"],
                    "taxonomy": taxonomy_ref(a),
                    "decided_by": self.pseudonyms.get(a["decided_by_id"]),
                    "decided_at": iso(a["decided_at"]),
                    "version": a["version"],
                }
            )
        order = ("campaign", "item", "dimension", "unit")
        return defaultdict(list, {g: sorted(v, key=lambda a: tuple(a[k] for k in order)) for g, v in grouped.items()})

    # -- items -----------------------------------------------------------------------------------
    def items(self) -> Iterator[dict]:
        rows = Item.objects.filter(campaign__project=self.project).order_by("campaign__slug", "key")
        for ids in chunks(list(rows.values_list("pk", flat=True))):
            yield from self.item_chunk(ids)

    def item_chunk(self, ids: list[int]) -> Iterator[dict]:
        rows = (
            Item.objects.filter(pk__in=ids)
            .order_by("campaign__slug", "key")
            .values(
                "pk",
                "key",
                "round",
                "is_gold",
                "is_warmup",
                campaign_slug=F("campaign__slug"),
                document_key=F("document__external_id"),
                topic_name=F("topic__name"),
                sentence_summary=F("sentence__summary__external_id"),
                sentence_index=F("sentence__index"),
            )
        )
        links = Item.summaries.through.objects.filter(item_id__in=ids)
        summaries = defaultdict(dict)
        for link in links.values("item_id", "summary_id", external_id=F("summary__external_id")):
            summaries[link["item_id"]][link["summary_id"]] = link["external_id"]
        assignments = defaultdict(list)
        for a in Assignment.objects.filter(item_id__in=ids).values():
            assignments[a["item_id"]].append(a)
        item_level = Judgment.objects.filter(assignment__item_id__in=ids, summary__isnull=True)
        judgments = self.judgments(item_level, key="assignment__item_id")
        adjudications = self.adjudications(
            Adjudication.objects.filter(item_id__in=ids, summary__isnull=True), key="item_id"
        )
        for i in rows:
            names = summaries[i["pk"]]
            yield {
                "type": "item",
                "campaign": i["campaign_slug"],
                "key": i["key"],
                "document": i["document_key"],
                "topic": i["topic_name"],
                "sentence": {"summary": i["sentence_summary"], "index": i["sentence_index"]}
                if i["sentence_summary"]
                else None,
                "summaries": sorted(names.values()),
                "round": i["round"],
                "gold": i["is_gold"],
                "warmup": i["is_warmup"],
                "assignments": self.assignments(assignments[i["pk"]], names),
                "judgments": judgments[i["pk"]],
                "adjudicated": adjudications[i["pk"]],
            }

    def assignments(self, rows: list[dict], names: dict[int, str]) -> list[dict]:
        out = [
            {
                "annotator": self.pseudonyms.get(a["annotator_id"], "unknown"),
                "stage": a["stage"],
                "status": a["status"],
                "shuffle_seed": a["shuffle_seed"],
                "summary_order": [names[pk] for pk in a["summary_order"] if pk in names],
                "active_seconds": a["active_seconds"],
                "started_at": iso(a["started_at"]),
                "submitted_at": iso(a["submitted_at"]),
            }
            for a in rows
        ]
        return sorted(out, key=lambda a: (a["annotator"], a["stage"]))


def export_lines(project: Project) -> Iterator[str]:
    return Exporter(project).lines()
