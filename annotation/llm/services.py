"""Running LLM jobs: create a job and its units, run one unit, cancel, resume, reconcile.

The database row is the source of truth. A unit moves pending -> running -> done | failed
(| cancelled), and only `finish` moves it to a final state, under a row lock, once: a task
delivered twice (a worker killed after its call, a reconciler that re-enqueued a slow unit)
finds the unit final and writes nothing. Artefacts are created idempotently besides.
Celery tasks (tasks.py) are thin: they call `run_unit` and turn Busy / TransientError into a
retry with backoff and jitter.
"""

import random
import time
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.llm import kinds, parsing, providers, ratelimit
from annotation.llm.models import Endpoint, Job, Prompt, Unit

MAX_ATTEMPTS = 5  # provider calls per unit before it fails for good
BUSY_WAIT_IN_TASK = 2.0  # seconds a task waits for a free slot before it retries later
BACKOFF_BASE = 2.0  # seconds; doubled per attempt, capped, plus full jitter
BACKOFF_CAP = 120.0
FINAL = (Unit.Status.DONE, Unit.Status.FAILED, Unit.Status.CANCELLED)
OPEN = (Unit.Status.PENDING, Unit.Status.RUNNING)


class Busy(Exception):
    """The endpoint's concurrency or rate limit is reached: try again in `wait` seconds."""

    def __init__(self, wait: float):
        super().__init__(f"endpoint busy, retry in {wait:.2f} s")
        self.wait = wait


# -- creating -----------------------------------------------------------------------------------
@transaction.atomic
def create_job(
    *,
    project,
    kind: str,
    endpoint: Endpoint,
    prompt: Prompt | None = None,
    params: dict | None = None,
    budget_usd: Decimal | None = None,
    user=None,
) -> Job:
    """A job with one unit per document / topic / sentence ..., enqueued once the row exists."""
    if not endpoint.is_usable_by(project):  # the views filter too; this holds for every caller
        raise ValidationError({"endpoint": f"The endpoint {endpoint.name!r} belongs to another project."})
    if prompt is None and not endpoint.is_baseline():
        prompt = kinds.default_prompt(kind)
    kinds.check(kind=kind, endpoint=endpoint, prompt=prompt)
    if budget_usd is not None and budget_usd <= 0:
        raise ValidationError({"budget_usd": "A budget must be more than 0 (or left empty)."})
    job = Job.objects.create(
        project=project,
        kind=kind,
        endpoint=endpoint,
        prompt=None if endpoint.is_baseline() else prompt,
        params=kinds.complete_params(kind, endpoint, params or {}),
        budget_usd=budget_usd,
        created_by=user,
    )
    planned = kinds.KINDS[kind].units(job)
    if not planned:
        raise ValidationError({"__all__": "Nothing to do: no units match (check the project's data and filters)."})
    Unit.objects.bulk_create([Unit(job=job, key=key, payload=payload) for key, payload in planned], batch_size=1000)
    transaction.on_commit(lambda: enqueue(job_id=job.pk))
    return job


def enqueue(*, job_id: int, stale_before=None) -> int:
    """Send a task for each pending unit (or, with `stale_before`, each open unit not touched
    since then). Sending twice is harmless: `finish` writes a unit once."""
    from annotation.llm import tasks

    units = Unit.objects.filter(job_id=job_id, job__status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    if stale_before is None:
        units = units.filter(status=Unit.Status.PENDING)
    else:
        units = units.filter(status__in=OPEN).filter(
            Q(started_at__lt=stale_before) | Q(started_at__isnull=True, enqueued_at__lt=stale_before)
        )
    ids = list(units.values_list("pk", flat=True))
    Unit.objects.filter(pk__in=ids).update(enqueued_at=timezone.now())
    for unit_id in ids:
        tasks.run_unit.delay(unit_id)
    return len(ids)


# -- running one unit ---------------------------------------------------------------------------
def claim(unit_id: int) -> Unit | None:
    """Mark a unit running (again), or None when there is nothing to do for it."""
    with transaction.atomic():
        unit = (
            Unit.objects.select_for_update(of=("self",)).select_related("job__endpoint", "job__prompt").get(pk=unit_id)
        )
        job = unit.job
        if unit.status in FINAL:
            return None
        if job.status in (Job.Status.CANCELLED, Job.Status.BUDGET_STOPPED):
            unit.status, unit.finished_at = Unit.Status.CANCELLED, timezone.now()
            unit.save(update_fields=["status", "finished_at"])
            return None
        if job.status == Job.Status.QUEUED:
            Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(status=Job.Status.RUNNING)
        unit.status, unit.started_at = Unit.Status.RUNNING, timezone.now()
        unit.save(update_fields=["status", "started_at"])
        return unit


def run_unit(*, unit_id: int) -> str:
    """Ask, parse, write one unit. Returns its final status (or "skipped"); raises Busy when the
    endpoint is at its limits and providers.TransientError for a failure worth a retry."""
    unit = claim(unit_id)
    if unit is None:
        return "skipped"
    job = unit.job
    kind = kinds.KINDS[job.kind]

    def call(messages, *, temperature: float = 0.0, max_tokens: int = 1024):
        limits = ratelimit.limits_of(job.endpoint)
        token = wait_for_slot(limits)
        try:
            Unit.objects.filter(pk=unit.pk).update(attempts=unit.attempts + 1)
            unit.attempts += 1
            return providers.complete(job.endpoint, messages, temperature=temperature, max_tokens=max_tokens)
        finally:
            ratelimit.limiter().release(limits, token)

    try:
        completion = kind.ask(job, unit, call)
    except providers.PermanentError as error:
        return finish(unit, status=Unit.Status.FAILED, error=str(error))
    try:
        result = kind.parse(job, unit, completion.text)
        if completion.meta:
            result = {**result, "meta": completion.meta}
    except parsing.ParseError as error:
        return finish(unit, status=Unit.Status.FAILED, completion=completion, error=f"Invalid output: {error}")
    return finish(unit, status=Unit.Status.DONE, completion=completion, result=result)


def wait_for_slot(limits) -> str:
    """A slot of the endpoint, waiting in the task for up to BUSY_WAIT_IN_TASK seconds (a slot
    frees as soon as any request ends); beyond that, Busy makes the task retry later instead of
    holding its worker (a rate window can take up to a minute to open)."""
    deadline = time.monotonic() + BUSY_WAIT_IN_TASK
    while True:
        token, wait = ratelimit.limiter().acquire(limits)
        if token is not None:
            return token
        if time.monotonic() + wait > deadline:
            raise Busy(wait)
        time.sleep(wait * random.uniform(0.5, 1.0))


def finish(unit: Unit, *, status: str, completion=None, result=None, error: str = "") -> str:
    """Record a unit's outcome once, write its artefacts, and settle the job."""
    with transaction.atomic():
        locked = (
            Unit.objects.select_for_update(of=("self",)).select_related("job__endpoint", "job__prompt").get(pk=unit.pk)
        )
        if locked.status in FINAL:
            return "skipped"
        job = locked.job
        if completion is not None:
            locked.raw_output = completion.text
            locked.input_tokens += completion.input_tokens
            locked.output_tokens += completion.output_tokens
            locked.latency_ms = completion.latency_ms
            locked.cost += job.endpoint.cost(completion.input_tokens, completion.output_tokens)
        locked.status, locked.result, locked.error = status, result, error[:5000]
        locked.finished_at = timezone.now()
        if status == Unit.Status.DONE:
            kinds.KINDS[job.kind].write(job, locked, result)
        locked.save()
    # In a transaction of its own, after the unit's has committed: the job row is locked only
    # for this short check, and of two last units finishing at once the later one sees both done.
    with transaction.atomic():
        settle(job)
    return status


def settle(job: Job) -> None:
    """Inside the caller's transaction: stop at the budget, and close a job with nothing open."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.budget_usd is not None and job.status in (Job.Status.QUEUED, Job.Status.RUNNING):
        spent = Unit.objects.filter(job=job).aggregate(total=Sum("cost"))["total"] or Decimal(0)
        if spent >= job.budget_usd:
            job.status = Job.Status.BUDGET_STOPPED
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "finished_at"])
            Unit.objects.filter(job=job, status=Unit.Status.PENDING).update(
                status=Unit.Status.CANCELLED, finished_at=timezone.now()
            )
            return
    if job.is_open() and not Unit.objects.filter(job=job, status__in=OPEN).exists():
        job.status, job.finished_at = Job.Status.DONE, timezone.now()
        job.save(update_fields=["status", "finished_at"])


def transient_failure(*, unit_id: int, error: Exception) -> float | None:
    """After a retryable failure: the delay before the next try (exponential, capped, with full
    jitter), or None when the unit has had its attempts and is now failed."""
    unit = Unit.objects.get(pk=unit_id)
    if unit.status in FINAL:
        return None
    if unit.attempts >= MAX_ATTEMPTS:
        finish(unit, status=Unit.Status.FAILED, error=f"Gave up after {unit.attempts} attempts: {error}")
        return None
    Unit.objects.filter(pk=unit_id).update(error=f"Retrying (attempt {unit.attempts} failed): {error}"[:5000])
    delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** max(unit.attempts - 1, 0))
    hint = getattr(error, "retry_after", None) or 0.0
    return max(hint, random.uniform(0, delay))


# -- controlling a job --------------------------------------------------------------------------
@transaction.atomic
def cancel(*, job: Job) -> Job:
    """Stop a job: units not yet finished are cancelled; a call in flight is not written."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if not job.is_open():
        raise ValidationError("This job is not running.")
    job.status, job.finished_at = Job.Status.CANCELLED, timezone.now()
    job.save(update_fields=["status", "finished_at"])
    Unit.objects.filter(job=job, status__in=OPEN).update(status=Unit.Status.CANCELLED, finished_at=timezone.now())
    return job


@transaction.atomic
def resume(*, job: Job, retry_failed: bool = False, budget_usd: Decimal | None = None) -> Job:
    """Carry on with a cancelled or budget-stopped job (and, if asked, retry its failed units)."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    again = [Unit.Status.CANCELLED] + ([Unit.Status.FAILED] if retry_failed else [])
    if budget_usd is not None:
        job.budget_usd = budget_usd
    if job.status == Job.Status.BUDGET_STOPPED and job.budget_usd is not None:
        spent = Unit.objects.filter(job=job).aggregate(total=Sum("cost"))["total"] or Decimal(0)
        if spent >= job.budget_usd:
            raise ValidationError({"budget_usd": f"The job has spent ${spent:.4f}; raise the budget to resume it."})
    count = Unit.objects.filter(job=job, status__in=again).update(
        status=Unit.Status.PENDING, attempts=0, error="", finished_at=None
    )
    if not count and not job.is_open():
        raise ValidationError("Nothing to resume: every unit is done" + ("." if retry_failed else " or failed."))
    job.status, job.finished_at = Job.Status.RUNNING, None
    job.save(update_fields=["status", "finished_at", "budget_usd"])
    transaction.on_commit(lambda: enqueue(job_id=job.pk))
    return job


def reconcile(*, now=None) -> int:
    """Re-enqueue units of open jobs nobody has touched for LLM_STUCK_AFTER_SECONDS (a lost message, a
    worker killed mid-call); close jobs whose units are all final. Runs periodically."""
    stale_before = (now or timezone.now()) - timedelta(seconds=settings.LLM_STUCK_AFTER_SECONDS)
    sent = 0
    for job_id in Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).values_list("pk", flat=True):
        sent += enqueue(job_id=job_id, stale_before=stale_before)
        with transaction.atomic():
            settle(Job.objects.get(pk=job_id))
    return sent


# -- reading ------------------------------------------------------------------------------------
def progress(job: Job) -> dict:
    """Counts by status, tokens and cost so far, in one query."""
    row = Unit.objects.filter(job=job).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status=Unit.Status.DONE)),
        failed=Count("pk", filter=Q(status=Unit.Status.FAILED)),
        cancelled=Count("pk", filter=Q(status=Unit.Status.CANCELLED)),
        running=Count("pk", filter=Q(status=Unit.Status.RUNNING)),
        input_tokens=Sum("input_tokens"),
        output_tokens=Sum("output_tokens"),
        cost=Sum("cost"),
    )
    row["input_tokens"] = row["input_tokens"] or 0
    row["output_tokens"] = row["output_tokens"] or 0
    row["cost"] = row["cost"] or Decimal(0)
    row["remaining"] = row["total"] - row["done"] - row["failed"] - row["cancelled"]
    finished = row["done"] + row["failed"]
    row["percent"] = round(100 * finished / row["total"]) if row["total"] else 100
    row["status"] = job.status
    return row


# -- prompts ------------------------------------------------------------------------------------
@transaction.atomic
def new_prompt_version(*, slug: str, based_on: int, name: str, system: str, template: str, note: str, user) -> Prompt:
    """Save an edit as the next version. Refused when someone saved a newer version meanwhile
    (never a silent overwrite) or when the text uses a placeholder this kind does not have."""
    from annotation.llm import prompts

    latest = Prompt.objects.select_for_update().filter(slug=slug).order_by("-version").first()
    if latest is None:
        raise ValidationError("No such prompt.")
    if latest.version != based_on:
        raise ValidationError(
            f"Version {latest.version} was saved after the version {based_on} you edited; "
            "open it, then apply your change again."
        )
    unknown = prompts.unknown_placeholders(latest.kind, system, template)
    if unknown:
        names = ", ".join("{{ " + u + " }}" for u in unknown)
        allowed = ", ".join("{{ " + a + " }}" for a in sorted(prompts.AVAILABLE[latest.kind]))
        raise ValidationError({"template": f"Unknown placeholder {names}; this kind of prompt has {allowed}."})
    if (name, system.strip(), template.strip()) == (latest.name, latest.system.strip(), latest.template.strip()):
        raise ValidationError("Nothing changed.")
    return Prompt.objects.create(
        slug=slug,
        version=latest.version + 1,
        kind=latest.kind,
        name=name,
        system=system.strip(),
        template=template.strip(),
        source=latest.source,
        note=note,
        created_by=user,
    )


def load_default_prompts() -> int:
    """Version 1 of each default prompt where it is missing (the data migration does the same;
    this serves tests whose database was flushed, and a database restored without them)."""
    from annotation.llm.prompt_data import DEFAULT_PROMPTS

    created = 0
    for spec in DEFAULT_PROMPTS:
        fields = {k: v for k, v in spec.items() if k != "slug"}
        created += Prompt.objects.get_or_create(slug=spec["slug"], version=1, defaults=fields)[1]
    return created
