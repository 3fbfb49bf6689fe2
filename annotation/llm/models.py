"""LLM endpoints, prompts as versioned data, and jobs made of units.

An Endpoint says where a model answers (an OpenAI-compatible base URL, or the offline baseline)
and how hard it may be pushed; its key is never stored, only the *name* of the environment
variable that holds it. A Prompt is versioned like a taxonomy: an edit is a new version, and
every artefact records the version that produced it. A Job is one run over many units; each
unit is one Celery task whose result row is unique per (job, unit), so a retried or re-enqueued
task never writes twice.
"""

import os
import re
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.projects.models import Project, Role

ENV_NAME = RegexValidator(r"^[A-Z_][A-Z0-9_]{0,99}$", "An environment variable name: capitals, digits and _.")


def check_base_url(value: str) -> None:
    """http(s) with a host; no credentials in the URL (keys live in the environment)."""
    if not re.match(r"^https?://[^/@\s]+(/\S*)?$", value or ""):
        raise ValidationError("A base URL such as http://127.0.0.1:8001/v1 (http or https, no user:password@).")


class EndpointQuerySet(models.QuerySet):
    def usable_by(self, project):
        """What a project's jobs may run on: the shared endpoints and the project's own."""
        return self.filter(Q(project__isnull=True) | Q(project=project))

    def visible_to(self, user):
        """Staff see every endpoint; a lead sees the shared ones and those of projects they lead."""
        if user.is_staff:
            return self
        led = Project.objects.filter(
            memberships__user=user, memberships__role=Role.LEAD, memberships__is_external=False
        )
        return self.filter(Q(project__isnull=True) | Q(project__in=led))


class Endpoint(models.Model):
    """Where a model answers. A shared endpoint (no project) serves every project and only staff
    or the command line change it; a project's endpoint serves that project's jobs only and its
    leads change it. Either way the base URL is set by a lead, staff or an operator, never by an
    annotator, an import file or a model's output."""

    class Kind(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible HTTP API"
        OFFLINE = "offline", "Offline baseline (rule-based, no model)"

    name = models.SlugField(max_length=80, unique=True)
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="llm_endpoints",
        help_text="Only this project's jobs use it and only its leads change it. Empty: shared by every project "
        "(changed by staff or on the command line only).",
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OPENAI)
    base_url = models.CharField(max_length=500, blank=True, validators=[check_base_url])
    model = models.CharField(max_length=200, blank=True)
    key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[ENV_NAME],
        help_text="Name of the environment variable that holds the API key (the key itself is never stored).",
    )
    timeout_seconds = models.FloatField(default=60.0)
    max_concurrency = models.PositiveSmallIntegerField(default=4)
    requests_per_minute = models.PositiveIntegerField(default=60)
    price_input_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    price_output_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    is_active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = EndpointQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="endpoint_timeout_positive"),
            models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_positive"),
            models.CheckConstraint(condition=Q(requests_per_minute__gte=1), name="endpoint_rpm_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.kind == self.Kind.OPENAI and not (self.base_url and self.model):
            raise ValidationError("An OpenAI-compatible endpoint needs a base URL and a model.")

    def is_baseline(self) -> bool:
        return self.kind == self.Kind.OFFLINE

    def can_be_changed_by(self, user) -> bool:
        if user.is_staff:
            return True
        if self.project_id is None:
            return False
        return self.project.memberships.filter(user=user, role=Role.LEAD, is_external=False).exists()

    def is_usable_by(self, project) -> bool:
        return self.project_id is None or self.project_id == project.pk

    def api_key(self) -> str:
        """The key from the environment; local servers (vLLM, Ollama, llama.cpp) accept any."""
        return os.environ.get(self.key_env, "") if self.key_env else "not-needed"

    def has_key(self) -> bool:
        return not self.key_env or bool(os.environ.get(self.key_env))

    def cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        return (self.price_input_per_1k * input_tokens + self.price_output_per_1k * output_tokens) / 1000


class PromptKind(models.TextChoices):
    TOPICS = "topics", "Topics for a document (TofuEval C.1)"
    SUMMARY = "summary", "Topic-focused summary (TofuEval C.2)"
    JUDGE_SENTENCE = "judge_sentence", "Sentence-level consistency judge (TofuEval C.3)"
    JUDGE_SUMMARY = "judge_summary", "Summary-level consistency judge (TofuEval C.3)"
    EDIT_CONSISTENT = "edit_consistent", "Consistent edits of a seed (SummEdits)"
    EDIT_INCONSISTENT = "edit_inconsistent", "Inconsistent edits of a seed (SummEdits)"
    EDIT_TYPES = "edit_types", "Edit-type tagging over an <ins>/<del> diff (SummEdits)"
    SUMMEDITS_JUDGE = "summedits_judge", "Zero-shot consistency judge (SummEdits)"
    DEBATE_AGENT = "debate_agent", "Debate agent (MADISSE)"
    DEBATE_ADJUDICATOR = "debate_adjudicator", "Debate adjudicator (MADISSE)"
    AMBIGUITY = "ambiguity", "Ambiguity detection (MADISSE)"
    AMBIGUITY_FROM_DEBATE = "ambiguity_from_debate", "Ambiguity from debate arguments (MADISSE)"


PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class Prompt(models.Model):
    """One version of a prompt. Placeholders are `{{ name }}` and nothing else: a template is
    data that leads edit, so it cannot reach attributes or code."""

    slug = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=32, choices=PromptKind.choices)
    name = models.CharField(max_length=200)
    system = models.TextField(blank=True)
    template = models.TextField()
    source = models.CharField(max_length=300, blank=True, help_text="Where the wording comes from.")
    note = models.TextField(blank=True, help_text="What changed in this version.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug", "-version"]
        constraints = [models.UniqueConstraint(fields=["slug", "version"], name="prompt_version_unique")]

    def __str__(self) -> str:
        return f"{self.slug} v{self.version}"

    def placeholders(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.system)) | set(PLACEHOLDER.findall(self.template))


class Job(models.Model):
    class Kind(models.TextChoices):
        TOPICS = "topics", "Topics for documents"
        SUMMARIES = "summaries", "Topic-focused summaries"
        EDITS = "edits", "SummEdits edits of verified seeds"
        EDIT_TYPES = "edit_types", "Edit-type tagging"
        JUDGE = "judge", "LLM judge"
        DEBATE = "debate", "MADISSE debates"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"
        BUDGET_STOPPED = "budget_stopped", "Stopped: budget reached"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="llm_jobs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.PROTECT, related_name="jobs")
    prompt = models.ForeignKey(Prompt, on_delete=models.PROTECT, null=True, blank=True, related_name="jobs")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    budget_usd = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"

    def is_open(self) -> bool:
        return self.status in {self.Status.QUEUED, self.Status.RUNNING}


class Unit(models.Model):
    """One call's worth of work in a job (a document, a (document, topic) pair, a seed, a
    sentence...). The raw output is kept even when parsing refuses it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="units")
    key = models.CharField(max_length=200)
    payload = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    raw_output = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    latency_ms = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "key"]
        constraints = [models.UniqueConstraint(fields=["job", "key"], name="llm_unit_key_unique")]
        indexes = [models.Index(fields=["job", "status"], name="llm_unit_job_status")]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.key}"
