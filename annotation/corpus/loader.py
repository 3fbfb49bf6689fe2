"""Write records of the platform's JSONL shape into a project: all checks first, then one
transaction. Re-importing the same records creates nothing; a record that contradicts what
the project already holds is an error, never an overwrite.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from annotation.corpus import text as textlib
from annotation.corpus.formats.base import MAX_ISSUES, ImportFailed, Issue, Parsed, Source
from annotation.corpus.models import Document, EditedSummary, Origin, SeedSummary, Summary, SummarySentence, Topic
from annotation.projects import services as projects
from annotation.projects.models import Membership, Project
from annotation.protocols import services as protocols
from annotation.protocols.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Judgment,
    JudgmentRevision,
    Protocol,
    Taxonomy,
)

Progress = Callable[[str, int, int], None]

# Text that lands in a bounded column, by record type: field -> (model, column). PostgreSQL
# refuses a longer value, so the loader names the line instead (SQLite would keep it whole).
BOUNDED = {
    "campaign": {"name": (Campaign, "name")},
    "document": {"id": (Document, "external_id"), "dataset": (Document, "dataset"), "split": (Document, "split")},
    "topic": {"name": (Topic, "name"), "origin": (Topic, "origin")},
    "summary": {"id": (Summary, "external_id"), "system": (Summary, "system")},
    "item": {"key": (Item, "key"), "round": (Item, "round")},
}
PSEUDONYM = (Membership, "pseudonym")
LABEL_BOUNDED = {"dimension": (Judgment, "dimension"), "stage": (Assignment, "stage"), "annotator": PSEUDONYM}
# A label's unit suffix ends up in Judgment.target after "sentence:<pk>/": leave room for that.
MAX_UNIT_SUFFIX = Judgment._meta.get_field("target").max_length - 40


def _noop(phase: str, done: int, total: int) -> None:
    pass


@dataclass
class Plan:
    """What the records say, keyed by natural keys, with where each came from."""

    campaigns: dict = field(default_factory=dict)
    documents: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)
    summaries: dict = field(default_factory=dict)
    items: dict = field(default_factory=dict)
    judgments: list = field(default_factory=list)  # (record, owner kind, owner key, source)
    adjudications: list = field(default_factory=list)
    sources: dict = field(default_factory=dict)


class Loader:
    def __init__(self, project: Project, parsed: Parsed, progress: Progress = _noop):
        self.project = project
        self.parsed = parsed
        self.progress = progress
        self.issues: list[Issue] = []
        self.plan = Plan()
        self.counts: dict[str, int] = defaultdict(int)

    # -- checks -------------------------------------------------------------------------
    def fail(self, source: Source, field_name: str, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(Issue(source.file, source.line, field_name, message))

    def collect(self) -> None:
        keyers = {
            "campaign": ("campaigns", lambda r: r["slug"]),
            "document": ("documents", lambda r: r["id"]),
            "topic": ("topics", lambda r: (r["document"], r["name"])),
            "summary": ("summaries", lambda r: r["id"]),
            "item": ("items", lambda r: (r["campaign"], r["key"])),
        }
        total = len(self.parsed.records)
        for n, (record, source) in enumerate(self.parsed.records, 1):
            attr, keyer = keyers[record["type"]]
            key = keyer(record)
            bucket = getattr(self.plan, attr)
            if key in bucket:
                first = self.plan.sources[(attr, key)]
                self.fail(source, "id", f"duplicate {record['type']} {key!r}; first defined at line {first.line}")
                continue
            bucket[key] = record
            self.plan.sources[(attr, key)] = source
            self.check_sizes(record, source)
            for judgment in record.get("judgments", []):
                self.plan.judgments.append((judgment, record["type"], key, source))
            for adjudication in record.get("adjudicated", []):
                self.plan.adjudications.append((adjudication, record["type"], key, source))
            if n % 500 == 0:
                self.progress("checking", n, total)

    def check_sizes(self, record: dict, source: Source) -> None:
        """Values longer than their column, and empty pseudonyms, named before anything is written."""
        for name, (model, column) in BOUNDED[record["type"]].items():
            self.check_length(source, name, record[name], model, column)
        if record["type"] == "summary" and record["seed"] is not None:
            domain = str(record["seed"].get("domain", ""))
            self.check_length(source, "seed.domain", domain, SeedSummary, "domain")
        for i, assignment in enumerate(record.get("assignments", [])):
            for name in ("annotator", "stage"):
                self.check_length(source, f"assignments[{i}].{name}", assignment[name], *LABEL_BOUNDED[name])
        for list_name in ("judgments", "adjudicated"):
            for i, label in enumerate(record.get(list_name, [])):
                where = f"{list_name}[{i}]"
                for name, (model, column) in LABEL_BOUNDED.items():
                    if name in label:
                        self.check_length(source, f"{where}.{name}", label[name], model, column)
                if label.get("decided_by") is not None:
                    self.check_length(source, f"{where}.decided_by", label["decided_by"], *PSEUDONYM)
                for k, change in enumerate(label.get("history", [])):
                    if change["changed_by"] is not None:
                        self.check_length(source, f"{where}.history[{k}].changed_by", change["changed_by"], *PSEUDONYM)
                if len(label["unit"].partition("/")[2]) > MAX_UNIT_SUFFIX:
                    self.fail(
                        source, f"{where}.unit", f"the part after '/' is longer than {MAX_UNIT_SUFFIX} characters"
                    )

    def check_length(self, source: Source, field_name: str, value: str, model, column: str) -> None:
        limit = model._meta.get_field(column).max_length
        if len(value) > limit:
            self.fail(source, field_name, f"is {len(value)} characters long; at most {limit} fit")
        elif (model, column) == PSEUDONYM and not value:
            self.fail(source, field_name, "is empty; name the annotator")

    def load_existing(self) -> None:
        p = self.project
        self.taxonomies = {(t.slug, t.version): t for t in Taxonomy.objects.all()}
        self.db_campaigns, self.db_documents, self.db_topics, self.db_summaries, self.db_items = {}, {}, {}, {}, {}
        self.db_item_summaries = defaultdict(set)
        self.member_pseudonyms = set()
        if not p.pk:
            return
        self.member_pseudonyms = set(p.memberships.people().values_list("pseudonym", flat=True))
        self.db_campaigns = {c.slug: c for c in Campaign.objects.filter(project=p)}
        self.db_documents = {d.external_id: d for d in Document.objects.filter(project=p)}
        topics = Topic.objects.filter(document__project=p).select_related("document")
        self.db_topics = {(t.document.external_id, t.name): t for t in topics}
        summaries = Summary.objects.filter(project=p).select_related("seed", "document", "topic")
        self.db_summaries = {s.external_id: s for s in summaries.prefetch_related("sentences")}
        items = Item.objects.filter(campaign__project=p).select_related("campaign", "document", "topic")
        self.db_items = {(i.campaign.slug, i.key): i for i in items}
        links = Item.summaries.through.objects.filter(item__campaign__project=p)
        by_pk = {i.pk: key for key, i in self.db_items.items()}
        for item_id, summary in links.values_list("item_id", "summary__external_id"):
            self.db_item_summaries[by_pk[item_id]].add(summary)

    def check_references(self) -> None:
        plan = self.plan
        protocols = set(Protocol.values)
        for slug, record in plan.campaigns.items():
            source = plan.sources[("campaigns", slug)]
            if record["protocol"] not in protocols:
                self.fail(source, "protocol", f"unknown protocol {record['protocol']!r}")
            self.check_taxonomy(record["taxonomy"], source, "taxonomy")
            existing = self.db_campaigns.get(slug)
            if existing and existing.protocol != record["protocol"]:
                self.fail(source, "protocol", f"campaign {slug!r} exists with protocol {existing.protocol!r}")
        for key, record in plan.documents.items():
            self.check_document(key, record, plan.sources[("documents", key)])
        for key, record in plan.topics.items():
            if not self.document_known(record["document"]):
                self.fail(plan.sources[("topics", key)], "document", f"unknown document {record['document']!r}")
        for key, record in plan.summaries.items():
            self.check_summary(key, record, plan.sources[("summaries", key)])
        for key, record in plan.items.items():
            self.check_item(key, record, plan.sources[("items", key)])
        for judgment, owner_kind, owner_key, source in plan.judgments:
            self.check_label(judgment, owner_kind, owner_key, source, "judgments")
        for adjudication, owner_kind, owner_key, source in plan.adjudications:
            self.check_label(adjudication, owner_kind, owner_key, source, "adjudicated")

    def document_known(self, key: str) -> bool:
        return key in self.plan.documents or key in self.db_documents

    def topic_known(self, document: str, name: str) -> bool:
        return (document, name) in self.plan.topics or (document, name) in self.db_topics

    def summary_record(self, key: str) -> dict | None:
        return self.plan.summaries.get(key)

    def check_taxonomy(self, ref: dict | None, source: Source, field_name: str) -> None:
        if ref and (ref["slug"], ref["version"]) not in self.taxonomies:
            self.fail(source, field_name, f"unknown taxonomy {ref['slug']!r} version {ref['version']}")

    def check_document(self, key: str, record: dict, source: Source) -> None:
        if record["kind"] not in Document.Kind.values:
            self.fail(source, "kind", f"must be 'text' or 'dialogue'; got {record['kind']!r}")
        if record["kind"] == Document.Kind.DIALOGUE and record["turns"] and not record["text"]:
            record["text"] = textlib.turns_text(record["turns"])
        if not record["text"] and not record["text_missing"]:
            self.fail(source, "text", "is empty; give the text, or the turns of a dialogue, or text_missing: true")
        existing = self.db_documents.get(key)
        complete = existing and not existing.text_missing and not record["text_missing"]
        if complete and (existing.text != record["text"] or existing.turns != record["turns"]):
            self.fail(source, "text", f"document {key!r} already exists with a different text")

    def check_summary(self, key: str, record: dict, source: Source) -> None:
        if not self.document_known(record["document"]):
            self.fail(source, "document", f"unknown document {record['document']!r}")
        if record["topic"] is not None and not self.topic_known(record["document"], record["topic"]):
            self.fail(source, "topic", f"unknown topic {record['topic']!r} of document {record['document']!r}")
        if not record["text"].strip():
            self.fail(source, "text", "is empty")
            return
        if record["sentences"] is not None:
            self.check_sentences(record, source)
        if record["edit_of"] is not None:
            seed = self.summary_record(record["edit_of"])
            db_seed = self.db_summaries.get(record["edit_of"])
            if not ((seed and seed["seed"] is not None) or (db_seed and hasattr(db_seed, "seed"))):
                self.fail(source, "edit_of", f"{record['edit_of']!r} is not a seed summary")
        existing = self.db_summaries.get(key)
        if existing:
            self.check_unchanged(
                source,
                f"summary {key!r}",
                {
                    "text": (existing.text, record["text"]),
                    "document": (existing.document.external_id, record["document"]),
                    "topic": (existing.topic.name if existing.topic else None, record["topic"]),
                    "system": (existing.system, record["system"]),
                },
            )

    def check_unchanged(self, source: Source, what: str, pairs: dict) -> None:
        """A record may repeat what the project holds, never contradict it."""
        for field_name, (held, given) in pairs.items():
            if held != given:
                self.fail(source, field_name, f"{what} already exists with a different {field_name} ({held!r})")

    def check_sentences(self, record: dict, source: Source) -> None:
        text, cursor = record["text"], 0
        for i, sentence in enumerate(record["sentences"]):
            where = f"sentences[{i}]"
            if sentence["index"] != i:
                self.fail(source, where + ".index", f"must be {i}; sentences are numbered from 0 in order")
            if not (cursor <= sentence["start"] < sentence["end"] <= len(text)):
                self.fail(source, where, "offsets must be in order, non-empty and inside the text")
            elif text[sentence["start"] : sentence["end"]] != sentence["text"]:
                self.fail(source, where + ".text", "does not equal the summary text between start and end")
            cursor = max(cursor, sentence["end"])

    def check_item(self, key: tuple, record: dict, source: Source) -> None:
        campaign_slug = record["campaign"]
        if campaign_slug not in self.plan.campaigns and campaign_slug not in self.db_campaigns:
            self.fail(source, "campaign", f"unknown campaign {campaign_slug!r}")
        if record["document"] is not None and not self.document_known(record["document"]):
            self.fail(source, "document", f"unknown document {record['document']!r}")
        if record["topic"] is not None and not self.topic_known(record["document"] or "", record["topic"]):
            self.fail(source, "topic", f"unknown topic {record['topic']!r}")
        for i, summary in enumerate(record["summaries"]):
            if not isinstance(summary, str) or (
                summary not in self.plan.summaries and summary not in self.db_summaries
            ):
                self.fail(source, f"summaries[{i}]", f"unknown summary {summary!r}")
        for i, assignment in enumerate(record["assignments"]):
            self.check_not_member(source, f"assignments[{i}].annotator", assignment["annotator"])
        if record["sentence"] is not None and self.sentence_index_bad(record["sentence"]):
            self.fail(source, "sentence", f"unknown sentence {record['sentence']!r}")
        existing = self.db_items.get(key)
        if existing:
            self.check_unchanged(
                source,
                f"item {key[1]!r} of campaign {key[0]!r}",
                {
                    "document": (existing.document.external_id if existing.document else None, record["document"]),
                    "topic": (existing.topic.name if existing.topic else None, record["topic"]),
                },
            )

    def sentence_count(self, summary_key: str) -> int | None:
        record = self.plan.summaries.get(summary_key)
        if record is not None:
            if record["sentences"] is None:
                record["sentences"] = [s.__dict__ for s in textlib.split_sentences(record["text"])]
            return len(record["sentences"])
        existing = self.db_summaries.get(summary_key)
        return None if existing is None else len(existing.sentences.all())

    def sentence_index_bad(self, ref: dict) -> bool:
        count = self.sentence_count(ref["summary"])
        return count is None or not (0 <= ref["index"] < count)

    def check_label(self, label: dict, owner_kind: str, owner_key, source: Source, field_name: str) -> None:
        item_key = (label["campaign"], label["item"])
        if item_key not in self.plan.items and item_key not in self.db_items:
            self.fail(source, field_name, f"unknown item {label['item']!r} of campaign {label['campaign']!r}")
        elif owner_kind == "item" and item_key != owner_key:
            self.fail(source, field_name + ".item", "an item's labels must name that item and its campaign")
        elif owner_kind == "summary" and owner_key not in self.item_summaries(item_key):
            self.fail(source, field_name + ".item", f"item {label['item']!r} does not include summary {owner_key!r}")
        for role in ("annotator", "decided_by"):
            self.check_not_member(source, f"{field_name}.{role}", label.get(role))
        for change in label.get("history", []):
            self.check_not_member(source, f"{field_name}.history.changed_by", change["changed_by"])
        versions = [h["version"] for h in label.get("history", [])]
        if len(set(versions)) != len(versions) or any(v >= label["version"] for v in versions):
            self.fail(source, field_name + ".history", "versions must be distinct and lower than the label's version")
        self.check_taxonomy(label["taxonomy"], source, field_name + ".taxonomy")
        unit, _, suffix = label["unit"].partition("/")
        if owner_kind == "item":
            if unit != "item":
                self.fail(source, field_name + ".unit", f"an item's labels have unit 'item'; got {label['unit']!r}")
        elif unit == "summary":
            pass
        elif unit.startswith("sentence:") and unit[9:].isdigit():
            if self.sentence_index_bad({"summary": owner_key, "index": int(unit[9:])}):
                self.fail(source, field_name + ".unit", f"summary {owner_key!r} has no sentence {unit[9:]}")
        else:
            self.fail(source, field_name + ".unit", f"must be 'summary' or 'sentence:<index>'; got {label['unit']!r}")
        if "/" in label["unit"] and not suffix.strip():
            self.fail(source, field_name + ".unit", "has an empty part after '/'")

    def check_not_member(self, source: Source, field_name: str, name: str | None) -> None:
        if name in self.member_pseudonyms:
            self.fail(
                source,
                field_name,
                f"{name!r} is the pseudonym of a member of this project; "
                "rename it in the file (exports sign members as <prefix>:<pseudonym>)",
            )

    def item_summaries(self, item_key: tuple) -> set:
        record = self.plan.items.get(item_key)
        return self.db_item_summaries[item_key] | set(record["summaries"] if record else ())

    # -- writing --------------------------------------------------------------------------
    def run(self) -> dict:
        self.parsed.raise_if_failed()
        self.collect()
        try:
            with transaction.atomic():
                # Checks and writes in one transaction, the project row locked: two imports into
                # one project run one after the other, each checking what the other wrote.
                if self.project.pk:
                    Project.objects.select_for_update().filter(pk=self.project.pk).first()
                self.load_existing()
                self.check_references()
                if self.issues:
                    raise ImportFailed(self.issues)
                self.write()
                if self.issues:  # conflicts found while writing: undo everything
                    raise ImportFailed(self.issues)
        except (IntegrityError, DataError) as error:  # a check missed something: still a clear failure
            source = self.parsed.records[0][1].file if self.parsed.records else "-"
            message = (
                f"the database refused the import ({error}); nothing was written. "
                "If another import ran at the same time, try again."
            )
            raise ImportFailed([Issue(source, None, "", message)]) from error
        return {name: number for name, number in self.counts.items() if number}

    def write(self) -> None:
        if not self.project.pk:
            self.project.save()
            self.counts["projects"] += 1
        self.write_campaigns()
        self.write_documents()
        self.write_topics()
        self.write_summaries()
        self.write_items()
        self.write_labels()
        touched = {label["campaign"] for label, *_ in self.plan.judgments + self.plan.adjudications}
        if self.counts["judgments"] or self.counts["adjudications"]:
            protocols.labels_changed(campaign_ids=[self.db_campaigns[slug].pk for slug in touched])

    def write_campaigns(self) -> None:
        for slug, r in self.plan.campaigns.items():
            if slug in self.db_campaigns:
                continue
            taxonomy = self.taxonomies.get((r["taxonomy"]["slug"], r["taxonomy"]["version"])) if r["taxonomy"] else None
            self.db_campaigns[slug] = Campaign.objects.create(
                project=self.project,
                slug=slug,
                name=r["name"] or slug,
                protocol=r["protocol"],
                guidelines=r["guidelines"],
                taxonomy=taxonomy,
                annotators_per_item=r["annotators_per_item"],
                double_share=r["double_share"],
                rounds=r["rounds"],
                status=r["status"] if r["status"] in Campaign.Status.values else Campaign.Status.CLOSED,
                is_release=r["is_release"],
                settings=r["settings"],
                created_at=r["created_at"] or timezone.now(),
            )
            self.counts["campaigns"] += 1

    def write_documents(self) -> None:
        new = []
        for key, r in self.plan.documents.items():
            existing = self.db_documents.get(key)
            fields = {
                "dataset": r["dataset"],
                "split": r["split"],
                "kind": r["kind"],
                "text": r["text"],
                "turns": r["turns"],
                "text_missing": r["text_missing"],
                "meta": r["meta"],
            }
            if existing is None:
                new.append(Document(project=self.project, external_id=key, **fields))
            elif existing.text_missing and not r["text_missing"]:
                for name, value in fields.items():  # the text arrives for a placeholder
                    setattr(existing, name, value)
                existing.save()
                self.counts["documents_completed"] += 1
        for document in Document.objects.bulk_create(new, batch_size=500):
            self.db_documents[document.external_id] = document
        self.counts["documents"] += len(new)
        self.progress("writing documents", len(new), len(new))

    def write_topics(self) -> None:
        new = []
        for (doc_key, name), r in self.plan.topics.items():
            if (doc_key, name) not in self.db_topics:
                new.append(
                    Topic(
                        document=self.db_documents[doc_key], name=name, origin=r["origin"], provenance=r["provenance"]
                    )
                )
        for topic in Topic.objects.bulk_create(new, batch_size=500):
            self.db_topics[(topic.document.external_id, topic.name)] = topic
        self.counts["topics"] += len(new)

    def write_summaries(self) -> None:
        records = [(k, r) for k, r in self.plan.summaries.items() if k not in self.db_summaries]
        new = [
            Summary(
                project=self.project,
                document=self.db_documents[r["document"]],
                topic=self.db_topics[(r["document"], r["topic"])] if r["topic"] is not None else None,
                external_id=key,
                system=r["system"],
                origin=r["origin"] if r["origin"] in Origin.values else Origin.IMPORT,
                text=r["text"],
                provenance=r["provenance"],
            )
            for key, r in records
        ]
        created = Summary.objects.bulk_create(new, batch_size=500)
        sentences = []
        for summary, (key, r) in zip(created, records, strict=True):
            self.db_summaries[key] = summary
            summary.sentence_list = []
            if r["sentences"] is None:
                r["sentences"] = [s.__dict__ for s in textlib.split_sentences(r["text"])]
            for s in r["sentences"]:
                row = SummarySentence(summary=summary, index=s["index"], start=s["start"], end=s["end"], text=s["text"])
                summary.sentence_list.append(row)
                sentences.append(row)
        SummarySentence.objects.bulk_create(sentences, batch_size=1000)
        self.write_seeds_and_edits(records)
        self.counts["summaries"] += len(created)
        self.counts["sentences"] += len(sentences)
        self.progress("writing summaries", len(created), len(created))

    def write_seeds_and_edits(self, records: list) -> None:
        seeds = []
        for key, r in records:
            if r["seed"] is not None:
                seed = r["seed"]
                seeds.append(
                    SeedSummary(
                        summary=self.db_summaries[key],
                        domain=str(seed.get("domain", "")),
                        query=str(seed.get("query", "")),
                    )
                )
        for seed in SeedSummary.objects.bulk_create(seeds, batch_size=500):
            seed.summary.seed = seed
        edits = [
            EditedSummary(summary=self.db_summaries[key], seed=self.db_summaries[r["edit_of"]].seed)
            for key, r in records
            if r["edit_of"] is not None
        ]
        EditedSummary.objects.bulk_create(edits, batch_size=500)

    def sentence_row(self, summary: Summary, index: int) -> SummarySentence:
        rows = getattr(summary, "sentence_list", None)
        if rows is None:
            rows = summary.sentence_list = list(summary.sentences.all())
        return rows[index]

    def write_items(self) -> None:
        through = Item.summaries.through
        links = []
        for (slug, key), r in self.plan.items.items():
            item = self.db_items.get((slug, key))
            if item is None:
                sentence = None
                if r["sentence"] is not None:
                    summary = self.db_summaries[r["sentence"]["summary"]]
                    sentence = self.sentence_row(summary, r["sentence"]["index"])
                item = Item.objects.create(
                    campaign=self.db_campaigns[slug],
                    key=key,
                    document=self.db_documents[r["document"]] if r["document"] else None,
                    topic=self.db_topics[(r["document"], r["topic"])] if r["topic"] is not None else None,
                    sentence=sentence,
                    round=r["round"],
                    is_gold=r["gold"],
                    is_warmup=r["warmup"],
                )
                self.db_items[(slug, key)] = item
                self.counts["items"] += 1
            # Also for an existing item: a later import may bring more of its summaries (new edits).
            links += [through(item_id=item.pk, summary_id=self.db_summaries[s].pk) for s in r["summaries"]]
            for a in r["assignments"]:
                self.assignment(item, a["annotator"], a["stage"], a)
        through.objects.bulk_create(links, batch_size=1000, ignore_conflicts=True)

    def assignment(self, item: Item, pseudonym: str, stage: str, record: dict | None = None) -> Assignment:
        cache = self.existing_assignments()
        user = self.annotator(pseudonym)
        key = (item.pk, user.pk, stage)
        found = cache.get(key)
        if found is None:
            record = record or {}
            order = [
                self.db_summaries[s].pk
                for s in record.get("summary_order", [])
                if isinstance(s, str) and s in self.db_summaries
            ]
            found = Assignment.objects.create(
                item=item,
                annotator=user,
                stage=stage,
                status=record.get("status", Assignment.Status.SUBMITTED),
                shuffle_seed=record.get("shuffle_seed"),
                summary_order=order,
                active_seconds=record.get("active_seconds", 0.0),
                started_at=record.get("started_at"),
                submitted_at=record.get("submitted_at"),
            )
            self.counts["assignments"] += 1
        cache[key] = found
        return found

    def existing_assignments(self) -> dict:
        """The project's assignments by (item, annotator, stage), read once."""
        if "assignment_cache" not in self.__dict__:
            rows = Assignment.objects.filter(item__campaign__project=self.project) if self.project.pk else []
            self.assignment_cache = {(a.item_id, a.annotator_id, a.stage): a for a in rows}
        return self.assignment_cache

    def annotator(self, pseudonym: str):
        cache = self.__dict__.setdefault("annotator_cache", {})
        if pseudonym not in cache:
            cache[pseudonym] = projects.annotator_for(project=self.project, pseudonym=pseudonym)
        return cache[pseudonym]

    def unit(self, label: dict, owner_kind: str, owner_key) -> tuple[Summary | None, SummarySentence | None, str]:
        unit, _, suffix = label["unit"].partition("/")
        summary = sentence = None
        if owner_kind == "summary":
            summary = self.db_summaries[owner_key]
            if unit.startswith("sentence:"):
                sentence = self.sentence_row(summary, int(unit[9:]))
        return summary, sentence, Judgment.make_target(summary=summary, sentence=sentence, suffix=suffix)

    def write_labels(self) -> None:
        total = len(self.plan.judgments)
        existing = self.existing_judgments()
        new_judgments, revisions = [], []
        for n, (label, owner_kind, owner_key, source) in enumerate(self.plan.judgments, 1):
            item = self.db_items[(label["campaign"], label["item"])]
            assignment = self.assignment(item, label["annotator"], label["stage"])
            summary, sentence, target = self.unit(label, owner_kind, owner_key)
            found = existing.get((assignment.pk, label["dimension"], target))
            if found is not None:
                if found.value != label["value"] or found.explanation != label["explanation"]:
                    self.fail(
                        source,
                        "judgments",
                        f"{label['annotator']}'s {label['dimension']} for {label['unit']} "
                        f"already exists with a different value ({found.value!r}); not overwritten",
                    )
                continue
            judgment = Judgment(
                assignment=assignment,
                dimension=label["dimension"],
                target=target,
                summary=summary,
                sentence=sentence,
                value=label["value"],
                explanation=label["explanation"],
                taxonomy=self.taxonomy(label["taxonomy"]),
                version=label["version"],
                created_at=label["created_at"] or timezone.now(),
                updated_at=label["updated_at"] or timezone.now(),
            )
            existing[(assignment.pk, label["dimension"], target)] = judgment
            new_judgments.append((judgment, label["history"]))
            if n % 1000 == 0:
                self.progress("writing labels", n, total)
        Judgment.objects.bulk_create([j for j, _ in new_judgments], batch_size=1000)
        for judgment, history in new_judgments:
            revisions += [
                JudgmentRevision(
                    judgment=judgment,
                    version=h["version"],
                    value=h["value"],
                    explanation=h["explanation"],
                    changed_by=self.annotator(h["changed_by"]) if h["changed_by"] else None,
                    changed_at=h["changed_at"] or timezone.now(),
                )
                for h in history
            ]
        JudgmentRevision.objects.bulk_create(revisions, batch_size=1000)
        self.counts["judgments"] += len(new_judgments)
        self.progress("writing labels", total, total)
        self.write_adjudications()

    def existing_judgments(self) -> dict:
        if not self.project.pk:
            return {}
        rows = Judgment.objects.filter(assignment__item__campaign__project=self.project)
        return {(j.assignment_id, j.dimension, j.target): j for j in rows}

    def taxonomy(self, ref: dict | None) -> Taxonomy | None:
        return self.taxonomies[(ref["slug"], ref["version"])] if ref else None

    def write_adjudications(self) -> None:
        for label, owner_kind, owner_key, source in self.plan.adjudications:
            item = self.db_items[(label["campaign"], label["item"])]
            summary, sentence, target = self.unit(label, owner_kind, owner_key)
            found = Adjudication.objects.filter(item=item, dimension=label["dimension"], target=target).first()
            if found is not None:
                if found.value != label["value"] or found.note != label["note"]:
                    self.fail(
                        source,
                        "adjudicated",
                        f"the adjudicated {label['dimension']} for {label['unit']} "
                        f"already exists with a different value ({found.value!r}); not overwritten",
                    )
                continue
            Adjudication.objects.create(
                item=item,
                dimension=label["dimension"],
                target=target,
                summary=summary,
                sentence=sentence,
                value=label["value"],
                note=label["note"],
                taxonomy=self.taxonomy(label["taxonomy"]),
                decided_by=self.annotator(label["decided_by"]) if label["decided_by"] else None,
                decided_at=label["decided_at"] or timezone.now(),
                version=label["version"],
            )
            self.counts["adjudications"] += 1


def load(*, project: Project, parsed: Parsed, progress: Progress = _noop) -> dict:
    return Loader(project, parsed, progress).run()
