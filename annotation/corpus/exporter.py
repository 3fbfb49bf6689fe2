"""Export a project as the platform's JSONL, one line per record, in a stable order.

Streams: rows are read in chunks, never all at once, so memory stays flat with the size of the
project. The caller runs it inside `snapshot()` so that every line comes from one consistent
state of the database even while annotators keep working.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import Prefetch

from annotation.corpus.models import Document, Summary, Topic
from annotation.projects.models import Project
from annotation.protocols.models import Adjudication, Campaign, Item, Judgment

CHUNK = 200
ADJUDICATIONS = Adjudication.objects.select_related("item__campaign", "sentence", "taxonomy")
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


def taxonomy_ref(taxonomy) -> dict | None:
    return {"slug": taxonomy.slug, "version": taxonomy.version} if taxonomy else None


class Exporter:
    def __init__(self, project: Project):
        self.project = project
        self.pseudonyms = dict(project.memberships.values_list("user_id", "pseudonym"))

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
            yield {
                "type": "campaign",
                "slug": c.slug,
                "name": c.name,
                "protocol": c.protocol,
                "guidelines": c.guidelines,
                "taxonomy": taxonomy_ref(c.taxonomy),
                "annotators_per_item": c.annotators_per_item,
                "double_share": c.double_share,
                "rounds": c.rounds,
                "status": c.status,
                "is_release": c.is_release,
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
        rows = Topic.objects.filter(document__project=self.project).select_related("document")
        for t in rows.order_by("document__external_id", "name").iterator(chunk_size=CHUNK):
            yield {
                "type": "topic",
                "document": t.document.external_id,
                "name": t.name,
                "origin": t.origin,
                "provenance": t.provenance,
            }

    def judgment_prefetch(self) -> Prefetch:
        queryset = Judgment.objects.select_related("assignment__item__campaign", "sentence", "taxonomy")
        return Prefetch("judgments", queryset=queryset.prefetch_related("revisions"))

    def summaries(self, *, edits: bool) -> Iterator[dict]:
        rows = (
            Summary.objects.filter(project=self.project, edit__isnull=not edits)
            .select_related("document", "topic", "seed", "edit__seed__summary")
            .prefetch_related("sentences", self.judgment_prefetch(), Prefetch("adjudications", queryset=ADJUDICATIONS))
            .order_by("external_id")
        )
        for s in rows.iterator(chunk_size=CHUNK):
            seed = getattr(s, "seed", None)
            edit = getattr(s, "edit", None)
            yield {
                "type": "summary",
                "id": s.external_id,
                "document": s.document.external_id,
                "topic": s.topic.name if s.topic else None,
                "system": s.system,
                "origin": s.origin,
                "text": s.text,
                "sentences": [
                    {"index": x.index, "start": x.start, "end": x.end, "text": x.text} for x in s.sentences.all()
                ],
                "provenance": s.provenance,
                "seed": {"domain": seed.domain, "query": seed.query} if seed else None,
                "edit_of": edit.seed.summary.external_id if edit else None,
                "judgments": self.judgments(s.judgments.all()),
                "adjudicated": self.adjudications(s.adjudications.all()),
            }

    def adjudications(self, rows) -> list[dict]:
        out = [
            {
                "campaign": a.item.campaign.slug,
                "item": a.item.key,
                "dimension": a.dimension,
                "unit": a.unit(),
                "value": a.value,
                "note": a.note,
                "taxonomy": taxonomy_ref(a.taxonomy),
                "decided_by": self.pseudonyms.get(a.decided_by_id),
                "decided_at": iso(a.decided_at),
                "version": a.version,
            }
            for a in rows
        ]
        return sorted(out, key=lambda a: (a["campaign"], a["item"], a["dimension"], a["unit"]))

    def judgments(self, rows) -> list[dict]:
        out = [
            {
                "campaign": j.assignment.item.campaign.slug,
                "item": j.assignment.item.key,
                "annotator": self.pseudonyms.get(j.assignment.annotator_id, "unknown"),
                "stage": j.assignment.stage,
                "dimension": j.dimension,
                "unit": j.unit(),
                "value": j.value,
                "explanation": j.explanation,
                "taxonomy": taxonomy_ref(j.taxonomy),
                "version": j.version,
                "created_at": iso(j.created_at),
                "updated_at": iso(j.updated_at),
                "history": [
                    {
                        "version": r.version,
                        "value": r.value,
                        "explanation": r.explanation,
                        "changed_at": iso(r.changed_at),
                        "changed_by": self.pseudonyms.get(r.changed_by_id),
                    }
                    for r in j.revisions.all()
                ],
            }
            for j in rows
        ]
        return sorted(
            out, key=lambda j: (j["campaign"], j["item"], j["annotator"], j["stage"], j["dimension"], j["unit"])
        )

    def items(self) -> Iterator[dict]:
        item_judgments = Judgment.objects.filter(summary__isnull=True).select_related(
            "assignment__item__campaign", "taxonomy"
        )
        rows = (
            Item.objects.filter(campaign__project=self.project)
            .select_related("campaign", "document", "topic", "sentence__summary")
            .prefetch_related(
                "summaries",
                "assignments",
                Prefetch(
                    "assignments__judgments",
                    queryset=item_judgments.prefetch_related("revisions"),
                    to_attr="item_judgments",
                ),
                Prefetch(
                    "adjudications", queryset=ADJUDICATIONS.filter(summary__isnull=True), to_attr="item_adjudications"
                ),
            )
            .order_by("campaign__slug", "key")
        )
        for i in rows.iterator(chunk_size=CHUNK):
            summary_ids = {s.pk: s.external_id for s in i.summaries.all()}
            assignments = sorted(i.assignments.all(), key=lambda a: (self.pseudonyms.get(a.annotator_id, ""), a.stage))
            yield {
                "type": "item",
                "campaign": i.campaign.slug,
                "key": i.key,
                "document": i.document.external_id if i.document else None,
                "topic": i.topic.name if i.topic else None,
                "sentence": {"summary": i.sentence.summary.external_id, "index": i.sentence.index}
                if i.sentence
                else None,
                "summaries": sorted(summary_ids.values()),
                "round": i.round,
                "gold": i.is_gold,
                "warmup": i.is_warmup,
                "assignments": [
                    {
                        "annotator": self.pseudonyms.get(a.annotator_id, "unknown"),
                        "stage": a.stage,
                        "status": a.status,
                        "shuffle_seed": a.shuffle_seed,
                        "summary_order": [summary_ids[pk] for pk in a.summary_order if pk in summary_ids],
                        "active_seconds": a.active_seconds,
                        "started_at": iso(a.started_at),
                        "submitted_at": iso(a.submitted_at),
                    }
                    for a in assignments
                ],
                "judgments": self.judgments([j for a in assignments for j in a.item_judgments]),
                "adjudicated": self.adjudications(i.item_adjudications),
            }


def export_lines(project: Project) -> Iterator[str]:
    return Exporter(project).lines()
