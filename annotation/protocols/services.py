"""Operations on campaigns that span models."""

import random

from django.db import transaction
from django.utils import timezone

from annotation.protocols.models import Assignment, Campaign, Item, Judgment, JudgmentRevision


@transaction.atomic
def assign(*, item: Item, annotator, stage: str = "annotate", seed: int | None = None) -> Assignment:
    """Give an item to an annotator (once per stage), with its summaries in a seeded, recorded
    shuffled order so that no summarizer is always seen first."""
    existing = Assignment.objects.filter(item=item, annotator=annotator, stage=stage).first()
    if existing:
        return existing
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    order = sorted(item.summaries.values_list("pk", flat=True))
    random.Random(seed).shuffle(order)
    return Assignment.objects.create(
        item=item, annotator=annotator, stage=stage, shuffle_seed=seed, summary_order=order
    )


def labels_changed(*, campaign_ids) -> None:
    """Every service that writes judgments or adjudications calls this in the same transaction:
    it is what tells agreement snapshots that they are stale."""
    Campaign.objects.filter(pk__in=list(campaign_ids)).update(labels_changed_at=timezone.now())


class DraftConflict(Exception):
    """The draft changed elsewhere (another tab) since the version the client saw."""

    def __init__(self, assignment: Assignment):
        self.version, self.draft = assignment.draft_version, assignment.draft
        super().__init__(f"draft is at version {assignment.draft_version}")


MAX_ACTIVE_DELTA = 300.0  # seconds one save may add: a tab left open does not count as work


@transaction.atomic
def save_draft(*, assignment_id: int, draft: dict, version: int, active_seconds_delta: float = 0.0) -> Assignment:
    """Store an annotator's work in progress; refuses (DraftConflict) a save based on an older
    version, so two tabs never silently overwrite each other."""
    assignment = Assignment.objects.select_for_update().get(pk=assignment_id)
    if version != assignment.draft_version:
        raise DraftConflict(assignment)
    assignment.draft = draft
    assignment.draft_version += 1
    assignment.active_seconds += min(max(float(active_seconds_delta or 0), 0.0), MAX_ACTIVE_DELTA)
    if assignment.status == Assignment.Status.PENDING:
        assignment.status = Assignment.Status.IN_PROGRESS
        assignment.started_at = timezone.now()
    assignment.save(update_fields=["draft", "draft_version", "active_seconds", "status", "started_at"])
    return assignment


def record_judgment(
    *,
    assignment: Assignment,
    dimension: str,
    value,
    explanation: str = "",
    summary=None,
    sentence=None,
    user=None,
    suffix: str = "",
    taxonomy=None,
) -> Judgment | None:
    """Create or update one label; a changed label keeps its earlier value as a revision.

    `suffix` names a sub-unit (e.g. "span:3"); `taxonomy` is the version the value's codes come from."""
    target = Judgment.make_target(summary=summary, sentence=sentence, suffix=suffix)
    writer = JudgmentWriter(assignment, user, Judgment.objects.filter(dimension=dimension, target=target))
    judgment = writer.record(
        dimension=dimension,
        value=value,
        explanation=explanation,
        summary=summary,
        sentence=sentence,
        suffix=suffix,
        taxonomy=taxonomy,
    )
    writer.flush()
    return judgment


def update_judgment(existing: Judgment, *, value, explanation: str, user, taxonomy=None) -> Judgment:
    """A label given again: unchanged, or changed with its earlier value kept as a revision."""
    if taxonomy is not None and existing.taxonomy_id != taxonomy.pk:
        existing.taxonomy = taxonomy
        existing.save(update_fields=["taxonomy"])
    if existing.value == value and existing.explanation == explanation:
        return existing
    JudgmentRevision.objects.create(
        judgment=existing,
        version=existing.version,
        value=existing.value,
        explanation=existing.explanation,
        changed_by=user,
    )
    existing.value, existing.explanation = value, explanation
    existing.version += 1
    existing.updated_at = timezone.now()
    existing.save(update_fields=["value", "explanation", "version", "updated_at"])
    return existing


class JudgmentWriter:
    """record_judgment for all the labels of one submission: the assignment's judgments are read
    once and the new ones inserted together by flush(), so a submit costs a few queries whatever
    its number of labels (benchmarks/task1_page.py). The caller holds the assignment's row lock."""

    def __init__(self, assignment: Assignment, user=None, judgments=None):
        """`judgments` narrows what is read beforehand (record_judgment reads its one unit)."""
        self.assignment, self.user, self.new = assignment, user, []
        judgments = (Judgment.objects.all() if judgments is None else judgments).filter(assignment=assignment)
        self.existing = {(j.dimension, j.target): j for j in judgments}

    def has(self, dimension: str, *, summary=None, sentence=None, suffix: str = "") -> bool:
        return (dimension, Judgment.make_target(summary=summary, sentence=sentence, suffix=suffix)) in self.existing

    def record(
        self, *, dimension: str, value, explanation: str = "", summary=None, sentence=None, suffix="", taxonomy=None
    ):
        target = Judgment.make_target(summary=summary, sentence=sentence, suffix=suffix)
        existing = self.existing.get((dimension, target))
        if existing is not None:
            return update_judgment(existing, value=value, explanation=explanation, user=self.user, taxonomy=taxonomy)
        judgment = Judgment(
            assignment=self.assignment,
            dimension=dimension,
            target=target,
            summary=summary,
            sentence=sentence,
            value=value,
            explanation=explanation,
            taxonomy=taxonomy,
        )
        self.new.append(judgment)
        return judgment

    def flush(self) -> None:
        Judgment.objects.bulk_create(self.new, batch_size=500)
        self.new = []


def next_open(*, campaign, user) -> Assignment | None:
    queue = Assignment.objects.open_for(user).filter(item__campaign=campaign, stage="annotate")
    return queue.order_by("-item__is_warmup", "status", "item__key").first()  # warm-up first
