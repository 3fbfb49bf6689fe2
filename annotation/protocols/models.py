"""Campaigns and the labels people give in them.

Campaign -> Item -> Assignment (item x annotator x stage) -> Judgment (one per labelled unit
and dimension). A changed judgment keeps its earlier values as JudgmentRevision rows; the
final, adjudicated value of a unit is an Adjudication, separate from everyone's raw labels.
Labels are never deleted with the data they are about: those foreign keys PROTECT.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.corpus.models import Document, Summary, SummarySentence, Topic
from annotation.projects.models import Project


class Taxonomy(models.Model):
    """A versioned label set (error types, ambiguity types, ...): old judgments keep the
    version they were made with, so a later edit of the definitions cannot change their meaning."""

    slug = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["slug", "-version"]
        verbose_name_plural = "taxonomies"
        constraints = [models.UniqueConstraint(fields=["slug", "version"], name="taxonomy_version_unique")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class TaxonomyLabel(models.Model):
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.CASCADE, related_name="labels")
    code = models.CharField(max_length=100)
    name = models.CharField(max_length=200)
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    definition = models.TextField(blank=True)
    examples = models.JSONField(default=list, blank=True)  # [{"kind": "ambiguous"|..., "text": str}]
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["taxonomy", "order"]
        constraints = [models.UniqueConstraint(fields=["taxonomy", "code"], name="taxonomy_label_code_unique")]

    def __str__(self) -> str:
        return self.name


class Protocol(models.TextChoices):
    TOFUEVAL_TASK1 = "tofueval_task1", "TofuEval task 1: consistency and relevance"
    TOFUEVAL_TASK2 = "tofueval_task2", "TofuEval task 2: completeness"
    TOFUEVAL_REVIEW = "tofueval_review", "TofuEval expert review"
    TOFUEVAL_ERROR_TYPING = "tofueval_error_typing", "TofuEval error typing"
    SUMMEDITS = "summedits", "SummEdits"
    AMBIGUITY = "ambiguity", "Ambiguity (MADISSE)"
    SPANS = "spans", "Span-level inconsistencies (Ramprasad et al.)"
    LABELS = "labels", "Labels collected elsewhere"
    EXPLANATION_RATING = "explanation_rating", "Rating of LLM judges' explanations"


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        CLOSED = "closed", "Closed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="campaigns")
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=200)
    protocol = models.CharField(max_length=32, choices=Protocol.choices)
    guidelines = models.TextField(blank=True)
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    annotators_per_item = models.PositiveSmallIntegerField(default=1)
    double_share = models.FloatField(default=0.0, help_text="Share of items given to a second annotator.")
    rounds = models.JSONField(default=list, blank=True)  # e.g. ["pilot-1", "pilot-2", "main"]
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    is_release = models.BooleanField(default=False, help_text="Holds labels imported from a public release.")
    settings = models.JSONField(
        default=dict, blank=True, help_text='Protocol settings, e.g. {"levels": {"dimension": "ordinal"}}.'
    )
    labels_changed_at = models.DateTimeField(
        null=True, blank=True, help_text="Set by every service that writes labels: what makes agreement stale."
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="campaign_slug_unique"),
            models.CheckConstraint(
                condition=Q(double_share__gte=0) & Q(double_share__lte=1), name="campaign_double_share_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Item(models.Model):
    """One unit of work of a campaign: a (document, topic) with its summaries, a seed with its
    edits, one summary sentence, or an id from labels collected elsewhere."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=500)
    document = models.ForeignKey(Document, on_delete=models.RESTRICT, null=True, blank=True, related_name="+")
    topic = models.ForeignKey(Topic, on_delete=models.RESTRICT, null=True, blank=True, related_name="+")
    sentence = models.ForeignKey(SummarySentence, on_delete=models.RESTRICT, null=True, blank=True, related_name="+")
    summaries = models.ManyToManyField(Summary, blank=True, related_name="items")
    round = models.CharField(max_length=50, default="main")
    is_gold = models.BooleanField(default=False)
    is_warmup = models.BooleanField(default=False)

    class Meta:
        ordering = ["campaign", "key"]
        constraints = [models.UniqueConstraint(fields=["campaign", "key"], name="item_key_unique")]

    def __str__(self) -> str:
        return self.key


class AssignmentQuerySet(models.QuerySet):
    def open_for(self, user):
        return self.filter(annotator=user, status__in=[Assignment.Status.PENDING, Assignment.Status.IN_PROGRESS])


class Assignment(models.Model):
    """An item given to one annotator for one stage; never twice to the same person."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        IN_PROGRESS = "in_progress", "In progress"
        SUBMITTED = "submitted", "Submitted"

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    stage = models.CharField(max_length=32, default="annotate")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    shuffle_seed = models.BigIntegerField(null=True, blank=True)
    summary_order = models.JSONField(default=list, blank=True)
    draft = models.JSONField(default=dict, blank=True)
    draft_version = models.PositiveIntegerField(default=0)
    client_token = models.CharField(max_length=64, blank=True)
    active_seconds = models.FloatField(default=0.0)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["item", "annotator_id", "stage"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator", "stage"], name="assignment_once_per_annotator"),
        ]

    def __str__(self) -> str:
        return f"{self.item} -> {self.annotator} ({self.stage})"


class Judgment(models.Model):
    """One submitted label: an assignment's value for one dimension of one unit.

    `target` is the unit's canonical key within the item ("item", "summary:<pk>",
    "sentence:<pk>", optionally followed by "/span:<key>"): unique per assignment and dimension.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="judgments")
    dimension = models.CharField(max_length=64)
    target = models.CharField(max_length=200)
    summary = models.ForeignKey(Summary, on_delete=models.PROTECT, null=True, blank=True, related_name="judgments")
    sentence = models.ForeignKey(
        SummarySentence, on_delete=models.PROTECT, null=True, blank=True, related_name="judgments"
    )
    value = models.JSONField(null=True, blank=True)
    explanation = models.TextField(blank=True)
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["assignment", "dimension", "target"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "dimension", "target"], name="judgment_unit_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.dimension}={self.value!r}"

    @staticmethod
    def make_target(*, summary=None, sentence=None, suffix: str = "") -> str:
        base = f"sentence:{sentence.pk}" if sentence else f"summary:{summary.pk}" if summary else "item"
        return f"{base}/{suffix}" if suffix else base

    def unit(self) -> str:
        """The unit as the JSONL format names it, relative to its summary or item line."""
        return unit_of(self)


class JudgmentRevision(models.Model):
    """An earlier value of a submitted judgment, kept when it changed."""

    judgment = models.ForeignKey(Judgment, on_delete=models.PROTECT, related_name="revisions")
    version = models.PositiveIntegerField()
    value = models.JSONField(null=True, blank=True)
    explanation = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["judgment", "version"]
        constraints = [
            models.UniqueConstraint(fields=["judgment", "version"], name="revision_version_unique"),
        ]

    def __str__(self) -> str:
        return f"v{self.version}: {self.value!r}"


class Adjudication(models.Model):
    """The final value of a unit, decided by an expert (or imported as such)."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="adjudications")
    dimension = models.CharField(max_length=64)
    target = models.CharField(max_length=200)
    summary = models.ForeignKey(Summary, on_delete=models.PROTECT, null=True, blank=True, related_name="adjudications")
    sentence = models.ForeignKey(SummarySentence, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    value = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    taxonomy = models.ForeignKey(Taxonomy, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(default=timezone.now)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["item", "dimension", "target"]
        constraints = [
            models.UniqueConstraint(fields=["item", "dimension", "target"], name="adjudication_unit_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.dimension}={self.value!r} (adjudicated)"

    def unit(self) -> str:
        return unit_of(self)


def unit_of(label) -> str:
    sentence_index = label.sentence.index if label.sentence_id else None
    return unit_name(sentence_index=sentence_index, has_summary=bool(label.summary_id), target=label.target)


def unit_name(*, sentence_index: int | None, has_summary: bool, target: str) -> str:
    """'item', 'summary' or 'sentence:<index>', plus any '/<suffix>' the target carries: the unit
    as the JSONL format names it, relative to its summary or item line."""
    base = f"sentence:{sentence_index}" if sentence_index is not None else "summary" if has_summary else "item"
    suffix = target.partition("/")[2]
    return f"{base}/{suffix}" if suffix else base


class ReviewDecisionQuerySet(models.QuerySet):
    def live(self):
        """Decisions that hold the unit: proposed (waiting for a check) or confirmed."""
        return self.filter(status__in=ReviewDecision.LIVE)


class ReviewDecision(models.Model):
    """An expert's decision on an inconsistent-labelled sentence (TofuEval App. F.4): keep the
    label or overturn it as a false positive; a second reviewer confirms it or sends it back.

    One live (proposed or confirmed) decision per unit; a sent-back decision stays as history
    and the unit returns to the queue. A confirmed decision becomes the unit's Adjudication;
    the annotators' own judgments are never touched.
    """

    class Decision(models.TextChoices):
        KEEP = "keep", "Keep: the sentence is inconsistent"
        OVERTURN = "overturn", "Overturn: the sentence is consistent"

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Waiting for a second reviewer"
        CONFIRMED = "confirmed", "Confirmed"
        SENT_BACK = "sent_back", "Sent back"

    LIVE = (Status.PROPOSED, Status.CONFIRMED)

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="review_decisions")
    summary = models.ForeignKey(Summary, on_delete=models.PROTECT, related_name="+")
    sentence = models.ForeignKey(SummarySentence, on_delete=models.PROTECT, related_name="+")
    target = models.CharField(max_length=200)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    note = models.TextField(blank=True)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    checked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    check_note = models.TextField(blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)

    objects = ReviewDecisionQuerySet.as_manager()

    class Meta:
        ordering = ["item", "target", "decided_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "target"],
                condition=Q(status__in=["proposed", "confirmed"]),
                name="review_one_live_decision",
            ),
            models.CheckConstraint(
                condition=Q(checked_by__isnull=True) | ~Q(checked_by=models.F("reviewer")),
                name="review_checker_differs",
            ),
            models.CheckConstraint(
                condition=Q(status="proposed", checked_by__isnull=True)
                | (~Q(status="proposed") & Q(checked_by__isnull=False)),
                name="review_checked_unless_proposed",
            ),
            models.CheckConstraint(condition=Q(decision="keep") | ~Q(note=""), name="review_overturn_has_note"),
        ]

    def __str__(self) -> str:
        return f"{self.decision} {self.target} ({self.status})"

    def final_value(self) -> str:
        """The consistency label this decision stands for."""
        return "inconsistent" if self.decision == self.Decision.KEEP else "consistent"
