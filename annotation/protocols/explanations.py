"""People rate LLM judges' explanations (SummEdits App. B; TofuEval App. H).

An *item* is one judged unit, a summary sentence ("sentence:<pk>") or a whole summary
("summary:<pk>"), that at least one of the campaign's judge jobs explained: a done unit whose
result carries a non-empty explanation. Each item goes to `per_item` reviewers, balanced.

A reviewer sees the source, the summary with the sentence marked, what the annotators of the
project's TofuEval task 1 campaigns wrote when they labelled it inconsistent (no names), and
the judges' explanations as "Explanation A, B, ..." in an order shuffled per assignment from its
recorded `shuffle_seed`. The model, endpoint, job and prompt are never shown, nor named in the
form: the fields are the letters, mapped back to jobs on the server, so that a rating is about
the text alone.

Each explanation gets one of RATINGS, stored as a Judgment of dimension "explanation_rating"
whose target is the unit's own plus "/job:<id>" (e.g. "sentence:12/job:5"): unique per
assignment, and the export names it "sentence:<index>/job:<id>", so ratings of different
judges never collapse into one unit. A changed rating keeps its earlier value as a revision.
"""

import random
import string
from collections import Counter
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.text import slugify

from annotation.corpus.models import Summary, SummarySentence
from annotation.llm.models import Job, Unit
from annotation.projects.models import Membership
from annotation.protocols import services, setup
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, JudgmentRevision, Protocol

DIMENSION = "explanation_rating"
LETTERS = string.ascii_uppercase
RATINGS = [
    ("correct", "Entirely correct", "Everything it says is right, and it names the actual reason for the verdict."),
    (
        "partially_correct",
        "Partially correct",
        "It names the right problem but also says something wrong or misses part of it.",
    ),
    ("unrelated", "Unrelated", "It talks about something other than what decides whether the text is consistent."),
    ("incorrect", "Incorrect", "What it says is wrong: it misreads the source or the summary."),
    (
        "no_explanation",
        "No explanation",
        "The text is empty or is not an explanation (a bare answer, a refusal, garbage).",
    ),
]
CODES = [code for code, _, _ in RATINGS]
GUIDELINES = "\n\n".join(
    [
        "Each screen shows a source, a summary (with the sentence in question marked when there is one) "
        "and one or more explanations that automatic judges gave for their verdict on it. Rate each "
        "explanation on its own: whether what it says about the source and the summary is right, not "
        "whether you agree with the verdict.",
        *(f"{name}: {definition}" for _, name, definition in RATINGS),
        "Annotators' own explanations, where there are any, are shown as a reference; they may be wrong too.",
    ]
)


# -- what the judges explained --------------------------------------------------------------------
def explained_units(job_ids, keys=None):
    """Done units of the jobs whose result has an explanation (empty ones filtered in `explained`)."""
    rows = Unit.objects.filter(job_id__in=list(job_ids), status=Unit.Status.DONE, result__has_key="explanation")
    rows = rows.exclude(result__explanation="").order_by()  # Unit's default order would join Job
    return rows.filter(key__in=list(keys)) if keys is not None else rows


def explained(job_ids, keys=None) -> dict[str, dict[int, dict]]:
    """unit key -> {job id: {"label", "explanation"}} for judged sentences and summaries."""
    out: dict[str, dict[int, dict]] = {}
    for job_id, key, result in explained_units(job_ids, keys).values_list("job_id", "key", "result"):
        text = str(result.get("explanation") or "").strip()
        if text and key.partition(":")[0] in ("sentence", "summary"):
            out.setdefault(key, {})[job_id] = {"label": result.get("label", ""), "explanation": text}
    return out


def explaining_jobs(project):
    """The project's judge jobs with at least one explanation, each with `explained` (a count)."""
    has_one = Q(units__status=Unit.Status.DONE, units__result__has_key="explanation") & ~Q(
        units__result__explanation=""
    )
    jobs = Job.objects.filter(project=project, kind=Job.Kind.JUDGE).select_related("endpoint", "prompt")
    return jobs.annotate(explained=Count("units", filter=has_one)).filter(explained__gt=0).order_by("-created_at")


def eligible_reviewers(project) -> list[Membership]:
    """Members who may rate: the people who review (leads included)."""
    memberships = project.memberships.people().select_related("user").order_by("pseudonym")
    return [m for m in memberships if m.can_review()]


# -- setting up a campaign ------------------------------------------------------------------------
def check(*, project, name: str, jobs: list[Job], reviewers: list, per_item: int) -> str:
    """The campaign's slug, or a ValidationError naming the fields at fault."""
    errors = {}
    slug = slugify(name)[:80]
    if not slug:
        errors["name"] = "Give the campaign a name."
    elif Campaign.objects.filter(project=project, slug=slug).exists():
        errors["name"] = f"The project already has a campaign {slug!r}: choose another name."
    if not jobs:
        errors["jobs"] = "Choose at least one judge job."
    elif any(job.project_id != project.pk or job.kind != Job.Kind.JUDGE for job in jobs):
        errors["jobs"] = "Choose judge jobs of this project."
    elif len(jobs) > len(LETTERS):
        errors["jobs"] = f"Choose at most {len(LETTERS)} judge jobs (explanations are lettered A to Z)."
    allowed = {m.user_id for m in eligible_reviewers(project)}
    if not reviewers:
        errors["reviewers"] = "Choose at least one reviewer."
    elif any(user.pk not in allowed for user in reviewers):
        errors["reviewers"] = "Choose reviewers (or leads) of this project."
    elif not 1 <= per_item <= len({user.pk for user in reviewers}):
        errors["per_item"] = f"Between 1 and the {len({user.pk for user in reviewers})} reviewer(s) chosen."
    if errors:
        raise ValidationError(errors)
    return slug


@transaction.atomic
def create_campaign(*, project, name: str, jobs: list[Job], reviewers: list, per_item: int = 1, seed=0) -> Campaign:
    """One item per unit that any of the jobs explained, each given to `per_item` reviewers
    (the least loaded first, ties broken by a seeded shuffle) with its own shuffle seed."""
    slug = check(project=project, name=name, jobs=jobs, reviewers=reviewers, per_item=per_item)
    units = explained([job.pk for job in jobs])
    if not units:
        raise ValidationError(
            {"jobs": "None of the chosen jobs has an explanation: choose a judge whose prompt asks for one."}
        )
    campaign = Campaign.objects.create(
        project=project,
        slug=slug,
        name=name.strip(),
        protocol=Protocol.EXPLANATION_RATING,
        guidelines=GUIDELINES,
        annotators_per_item=per_item,
        rounds=["main"],
        status=Campaign.Status.ACTIVE,
        settings={"jobs": sorted(job.pk for job in jobs)},
    )
    rng = random.Random(seed)
    load = {user.pk: 0 for user in reviewers}
    people = {user.pk: user for user in reviewers}
    for key in sorted(units, key=unit_order):
        item = make_item(campaign, key)
        if item is None:
            continue
        for user_id in setup.least_loaded(load, per_item, rng):
            services.assign(item=item, annotator=people[user_id], seed=rng.randrange(2**31))
            load[user_id] += 1
    return campaign


def unit_order(key: str) -> tuple[str, int]:
    kind, _, pk = key.partition(":")
    return kind, int(pk)


def make_item(campaign: Campaign, key: str) -> Item | None:
    """The item of a judged unit: its summary, and its sentence for a sentence unit."""
    kind, _, pk = key.partition(":")
    if kind == "sentence":
        sentence = SummarySentence.objects.select_related("summary").filter(pk=pk).first()
        summary = sentence.summary if sentence else None
    else:
        sentence, summary = None, Summary.objects.filter(pk=pk).first()
    if summary is None:  # gone since the job ran
        return None
    item = Item.objects.create(
        campaign=campaign, key=key, document_id=summary.document_id, topic_id=summary.topic_id, sentence=sentence
    )
    item.summaries.set([summary])
    return item


# -- what a reviewer sees -------------------------------------------------------------------------
@dataclass
class Explanation:
    letter: str
    text: str
    verdict: str
    job_id: int  # never rendered: the form names explanations by letter
    rating: str = ""
    error: str = ""


@dataclass
class Screen:
    summary: Summary
    sentences: list
    human: list[dict]
    explanations: list[Explanation] = field(default_factory=list)

    def by_letter(self) -> dict[str, Explanation]:
        return {e.letter: e for e in self.explanations}


def job_order(assignment: Assignment, job_ids) -> list[int]:
    """The jobs in the assignment's own order: shuffled by its recorded seed, stable on reload."""
    order = sorted(job_ids)
    random.Random(assignment.shuffle_seed or 0).shuffle(order)
    return order


def screen(assignment: Assignment) -> Screen:
    item = assignment.item
    summary = item.summaries.select_related("document").get()
    found = explained(item.campaign.settings.get("jobs", []), keys=[item.key]).get(item.key, {})
    ratings = dict(Judgment.objects.filter(assignment=assignment, dimension=DIMENSION).values_list("target", "value"))
    explanations = [
        Explanation(
            letter=LETTERS[i],
            text=found[job_id]["explanation"],
            verdict=found[job_id]["label"],
            job_id=job_id,
            rating=ratings.get(target(item, job_id), ""),
        )
        for i, job_id in enumerate(job_order(assignment, found))
    ]
    sentences = list(summary.sentences.order_by("index"))
    return Screen(summary=summary, sentences=sentences, human=human_explanations(item), explanations=explanations)


def human_explanations(item: Item) -> list[dict]:
    """What annotators wrote when they labelled the sentence (or, for a summary, any of its
    sentences) inconsistent in the project's TofuEval task 1 campaigns; no names, no repeats."""
    rows = Judgment.objects.filter(
        assignment__item__campaign__project_id=item.campaign.project_id,
        assignment__item__campaign__protocol=Protocol.TOFUEVAL_TASK1,
        dimension="consistency",
        value="inconsistent",
    ).exclude(explanation="")
    rows = rows.filter(sentence_id=item.sentence_id) if item.sentence_id else rows.filter(summary__items=item)
    out, seen = [], set()
    for index, text in rows.order_by("sentence__index", "pk").values_list("sentence__index", "explanation"):
        if (index, text.strip()) not in seen:
            seen.add((index, text.strip()))
            out.append({"sentence_index": index, "text": text.strip()})
    return out


def target(item: Item, job_id: int) -> str:
    return f"{item.key}/job:{job_id}"


def job_of(target_: str) -> int | None:
    suffix = target_.rpartition("/job:")[2]
    return int(suffix) if suffix.isdigit() else None


# -- rating ---------------------------------------------------------------------------------------
def clean(screen_: Screen, posted: dict) -> dict[str, str]:
    """letter -> rating code, or a ValidationError with a message per unrated explanation."""
    errors, ratings = {}, {}
    for e in screen_.explanations:
        value = str(posted.get(f"rating-{e.letter}", "")).strip()
        if value not in CODES:
            errors[f"rating-{e.letter}"] = f"Rate explanation {e.letter}."
        ratings[e.letter] = value
    if errors:
        raise ValidationError(errors)
    return ratings


@transaction.atomic
def submit(*, assignment: Assignment, posted: dict, user) -> Assignment:
    """Record a rating per explanation and mark the assignment submitted. Sending the same
    ratings again changes nothing; a changed rating keeps its earlier value as a revision."""
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    if assignment.item.campaign.protocol != Protocol.EXPLANATION_RATING:
        raise ValidationError("This assignment is not an explanation rating.")
    shown = screen(assignment)
    ratings = clean(shown, posted)
    for e in shown.explanations:
        record(assignment=assignment, job_id=e.job_id, value=ratings[e.letter], user=user)
    now = timezone.now()
    if assignment.status != Assignment.Status.SUBMITTED:
        assignment.started_at = assignment.started_at or now
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, now
    assignment.save(update_fields=["status", "started_at", "submitted_at"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment


def record(*, assignment: Assignment, job_id: int, value: str, user) -> Judgment:
    """services.record_judgment for a target it cannot make (the unit plus "/job:<id>")."""
    item = assignment.item
    key = target(item, job_id)
    existing = Judgment.objects.filter(assignment=assignment, dimension=DIMENSION, target=key).first()
    if existing is None:
        summary_id = item.summaries.values_list("pk", flat=True).get()
        return Judgment.objects.create(
            assignment=assignment,
            dimension=DIMENSION,
            target=key,
            summary_id=summary_id,
            sentence_id=item.sentence_id,
            value=value,
        )
    if existing.value == value:
        return existing
    JudgmentRevision.objects.create(
        judgment=existing,
        version=existing.version,
        value=existing.value,
        explanation=existing.explanation,
        changed_by=user,
    )
    existing.value, existing.version, existing.updated_at = value, existing.version + 1, timezone.now()
    existing.save(update_fields=["value", "version", "updated_at"])
    return existing


# -- results --------------------------------------------------------------------------------------
def distribution(values) -> dict:
    """{"n", "counts": {code: n}, "shares": {code: share}, "ratings": the same as a list in RATINGS
    order for templates}; shares are None when nothing was rated."""
    counts = Counter(values)
    n = sum(counts[code] for code in CODES)
    shares_ = {code: round(counts[code] / n, 4) if n else None for code in CODES}
    return {
        "n": n,
        "counts": {code: counts[code] for code in CODES},
        "shares": shares_,
        "ratings": [{"code": c, "name": name, "count": counts[c], "share": shares_[c]} for c, name, _ in RATINGS],
    }


def describe(job: Job) -> dict:
    prompt = f"{job.prompt.slug} v{job.prompt.version}" if job.prompt else ""
    return {
        "job": job.pk,
        "model": job.endpoint.model or job.endpoint.name,
        "endpoint": job.endpoint.name,
        "prompt": prompt,
    }


def shares(campaign: Campaign) -> list[dict]:
    """Per judge job of the campaign: its model, endpoint and prompt, how many of its
    explanations were rated (each reviewer's rating counts), and the share of each rating."""
    values: dict[int, list] = {}
    rows = Judgment.objects.filter(assignment__item__campaign=campaign, dimension=DIMENSION)
    for target_, value in rows.values_list("target", "value"):
        values.setdefault(job_of(target_), []).append(value)
    jobs = Job.objects.filter(pk__in=campaign.settings.get("jobs", [])).select_related("endpoint", "prompt")
    return [{**describe(job), **distribution(values.get(job.pk, []))} for job in jobs.order_by("pk")]


def shares_for_job(job: Job) -> dict | None:
    """The ratings of one job's explanations over every explanation-rating campaign of its
    project (for the LLM job page), or None when none has been rated yet."""
    rows = Judgment.objects.filter(
        assignment__item__campaign__project_id=job.project_id,
        assignment__item__campaign__protocol=Protocol.EXPLANATION_RATING,
        dimension=DIMENSION,
        target__endswith=f"/job:{job.pk}",
    )
    out = distribution(rows.values_list("value", flat=True))
    return out if out["n"] else None
