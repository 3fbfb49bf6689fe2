"""SummEdits (Laban et al. 2023, section 5 and App. C): one annotator reads a document once,
verifies its seed summary, then labels the seed's minor edits quickly.

One assignment covers both steps. Step 1 (verification) asks "any flaws (fluency, format)?",
"factually consistent?" and, for a query-focused seed, "does it answer the query?"; a seed
that fails is filtered out with its reason and the assignment ends there. A seed that passes
gets its edits (from the LLM layer when the campaign generates on verification) and unlocks
step 3 for this annotator only: each edit, shown as a word diff against the seed, is labelled
consistent / inconsistent / borderline.

The screen's field names are the draft's keys: `flaws`, `consistent`, `answers_query` (step 1,
"yes" / "no"); `l-<summary pk>` per edit (step 3). The server alone sets `verified` and fixes
the edits to label, in a per-assignment shuffled order, in `Assignment.summary_order`.
"""

import random
from collections import defaultdict

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.corpus.models import EditedSummary, SeedSummary
from annotation.llm import worddiff
from annotation.projects.models import Project
from annotation.protocols import services, setup
from annotation.protocols.models import Assignment, Campaign, Item, Protocol

LABELS = (
    ("consistent", "Consistent", "c", "Everything the edit states is supported by the document."),
    ("inconsistent", "Inconsistent", "i", "The edit states something the document contradicts or does not support."),
    ("borderline", "Borderline", "b", "You are unsure, or it depends on a reading: say so rather than guess."),
)
LABEL_VALUES = {value for value, *_ in LABELS}
QUESTIONS = (
    ("flaws", "Are there any flaws with the summary (fluency, format, ...)?"),
    ("consistent", "Is the summary factually consistent with the document?"),
)
QUERY_QUESTION = ("answers_query", "Does the summary answer the query?")
GUIDELINES = (
    "Read the document once. First check the seed summary: is it fluent and well formed, and is it "
    "factually consistent with the document (and does it answer the query, if there is one)? A seed "
    "that fails is set aside. Then label each edit of the seed: consistent when everything it says "
    "is supported by the document, inconsistent when it is not. The changed words are marked. When "
    "you are unsure, choose borderline: a guess is worse than an honest borderline (Laban et al. 2023)."
)


# -- set-up -------------------------------------------------------------------------------------
@transaction.atomic
def create_campaign(
    *,
    project: Project,
    name: str,
    slug: str,
    domain: str,
    annotators: list,
    double_share: float = 0.2,
    edits_per_seed: int = 30,
    generation: str = "on_verify",
    endpoint=None,
    warmup: int = 0,
    seed: int = 0,
) -> Campaign:
    """A SummEdits campaign over the project's seeds of one domain: each seed to one annotator
    (the least loaded), and `double_share` of them to a second one for agreement. The first
    `warmup` seeds are warm-up seeds: every annotator does them first and, once a lead has
    labelled them (gold), sees the gold labels beside their own after submitting."""
    errors = {}
    if Campaign.objects.filter(project=project, slug=slug).exists():
        errors["name"] = f"The project already has a campaign {slug!r}."
    if not annotators:
        errors["annotators"] = "Choose at least one annotator."
    elif double_share and len(annotators) < 2:
        errors["double_share"] = "A second annotator per seed needs at least two annotators."
    if generation not in ("on_verify", "batch", "none"):
        errors["generation"] = "Generate edits on verification, in batches, or not at all."
    seeds = list(
        SeedSummary.objects.filter(summary__project=project, domain=domain, summary__document__text_missing=False)
        .select_related("summary")
        .order_by("pk")
    )
    if not seeds:
        errors["domain"] = f"No seed with a known document in domain {domain!r}."
    elif warmup >= len(seeds):
        errors["warmup"] = f"Leave some of the {len(seeds)} seeds for the real work."
    if errors:
        raise ValidationError(errors)
    campaign = Campaign.objects.create(
        project=project,
        slug=slug,
        name=name,
        protocol=Protocol.SUMMEDITS,
        guidelines=GUIDELINES,
        annotators_per_item=1,
        double_share=double_share,
        status=Campaign.Status.ACTIVE,
        settings={
            "domain": domain,
            "edits_per_seed": edits_per_seed,
            "generation": generation,
            "endpoint": endpoint.pk if endpoint else None,
            "levels": {"edit_label": "nominal"},
        },
    )
    rng = random.Random(seed)
    rng.shuffle(seeds)
    warmups, seeds = seeds[:warmup], seeds[warmup:]
    doubled = {s.pk for s in seeds[: round(double_share * len(seeds))]}
    load = {user.pk: 0 for user in annotators}
    users = {user.pk: user for user in annotators}
    for seed_summary in warmups:
        item = make_item(campaign, seed_summary, is_warmup=True)
        for user in annotators:
            services.assign(item=item, annotator=user, seed=rng.randrange(2**31))
    for seed_summary in seeds:
        item = make_item(campaign, seed_summary)
        for user_id in setup.least_loaded(load, 1 + (seed_summary.pk in doubled), rng):
            services.assign(item=item, annotator=users[user_id], seed=rng.randrange(2**31))
            load[user_id] += 1
    return campaign


def make_item(campaign: Campaign, seed_summary: SeedSummary, *, is_warmup: bool = False) -> Item:
    item = Item.objects.create(
        campaign=campaign,
        key=seed_summary.summary.external_id,
        document_id=seed_summary.summary.document_id,
        topic_id=seed_summary.summary.topic_id,
        round="warm-up" if is_warmup else "main",
        is_warmup=is_warmup,
    )
    item.summaries.set([seed_summary.summary_id])
    return item


def seed_of(assignment: Assignment) -> SeedSummary:
    summary = assignment.item.summaries.select_related("document").get()
    return SeedSummary.objects.select_related("summary__document").get(summary=summary)


# -- step 1: verification -----------------------------------------------------------------------
def questions(seed: SeedSummary) -> list[tuple[str, str]]:
    return list(QUESTIONS) + ([QUERY_QUESTION] if seed.query else [])


def verified(draft: dict) -> str:
    """ "pass", "fail" or "" (not yet)."""
    return draft.get("verified", "")


def check_verification(draft: dict, seed: SeedSummary) -> dict[str, str]:
    return {name: "Answer this question." for name, _ in questions(seed) if draft.get(name) not in ("yes", "no")}


def failure_reasons(draft: dict, seed: SeedSummary) -> list[str]:
    reasons = []
    if draft.get("flaws") == "yes":
        reasons.append("flawed (fluency or format)")
    if draft.get("consistent") == "no":
        reasons.append("not factually consistent")
    if seed.query and draft.get("answers_query") == "no":
        reasons.append("does not answer the query")
    return reasons


@transaction.atomic
def verify(*, assignment: Assignment, user) -> Assignment:
    """Record step 1. A failing seed ends the assignment (filtered, with its reasons); a passing
    one fixes the edits to label and, if the campaign says so, starts their generation."""
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    if assignment.item.campaign.protocol != Protocol.SUMMEDITS:
        raise ValidationError("This assignment is not a SummEdits item.")
    draft = dict(assignment.draft)
    if verified(draft):
        return assignment
    seed = seed_of(assignment)
    errors = check_verification(draft, seed)
    if errors:
        raise ValidationError(errors)
    record = {"assignment": assignment, "user": user, "summary": seed.summary}
    services.record_judgment(**record, dimension="seed_flawless", value=draft["flaws"] == "no")
    services.record_judgment(**record, dimension="seed_consistent", value=draft["consistent"] == "yes")
    if seed.query:
        services.record_judgment(**record, dimension="answers_query", value=draft["answers_query"] == "yes")
    reasons = failure_reasons(draft, seed)
    draft |= {"verified": "fail" if reasons else "pass", "verified_at": timezone.now().isoformat(), "_focus": ""}
    if reasons:
        services.record_judgment(**record, dimension="seed_filtered", value=True, explanation="; ".join(reasons))
        assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    else:
        fix_edits(assignment, seed)
        campaign = assignment.item.campaign
        if campaign.settings.get("generation") == "on_verify" and not generated_for(campaign, seed):
            start_generation(campaign=campaign, seeds=[seed])
    assignment.draft = draft
    assignment.draft_version += 1
    assignment.save()
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment


def fix_edits(assignment: Assignment, seed: SeedSummary) -> list[int]:
    """The edits this assignment labels, in its own shuffled order (new edits join at the end)."""
    edits = sorted(EditedSummary.objects.filter(seed=seed).values_list("summary_id", flat=True))
    known = [pk for pk in assignment.summary_order or [] if pk in set(edits)]  # not the seed itself
    new = [pk for pk in edits if pk not in known]
    random.Random(assignment.shuffle_seed).shuffle(new)
    assignment.summary_order = known + new
    return assignment.summary_order


def generated_for(campaign: Campaign, seed: SeedSummary) -> bool:
    """Whether this campaign already asked for this seed's edits (the second annotator's
    verification does not generate them again)."""
    from annotation.llm.models import Job

    jobs = Job.objects.filter(project=campaign.project, kind="edits").values_list("params", flat=True)
    return any(p.get("campaign") == campaign.pk and seed.pk in (p.get("seeds") or []) for p in jobs)


def start_generation(*, campaign: Campaign, seeds: list[SeedSummary]):
    """The edits job for these seeds on the campaign's endpoint (the offline baseline when none
    is set), enqueued when the transaction commits."""
    from annotation.llm import services as llm
    from annotation.llm.models import Endpoint

    endpoint = Endpoint.objects.filter(pk=campaign.settings.get("endpoint")).first()
    if endpoint is None:
        endpoint, _ = Endpoint.objects.get_or_create(name="offline-baseline", defaults={"kind": Endpoint.Kind.OFFLINE})
    params = {
        "seeds": [s.pk for s in seeds],
        "n": int(campaign.settings.get("edits_per_seed", 30)),
        "campaign": campaign.pk,
    }
    return llm.create_job(project=campaign.project, kind="edits", endpoint=endpoint, params=params)


def generation_progress(seed: SeedSummary) -> dict | None:
    """The newest open edits job covering this seed, as done / total, or None."""
    from annotation.llm.models import Job, Unit

    jobs = Job.objects.filter(kind="edits", status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("-pk")
    for job in jobs:
        if seed.pk in (job.params.get("seeds") or []):
            units = Unit.objects.filter(job=job, payload__seed=seed.pk)
            finished = units.exclude(status__in=[Unit.Status.PENDING, Unit.Status.RUNNING]).count()
            return {"job": job.pk, "done": finished, "total": units.count()}
    return None


# -- step 3: labelling the edits ----------------------------------------------------------------
def edits_in_order(assignment: Assignment) -> list:
    """The edits to label, in the recorded order, each with its word diff against the seed."""
    from annotation.corpus.models import Summary

    seed = seed_of(assignment)
    summaries = Summary.objects.in_bulk(assignment.summary_order or [])
    out = []
    for position, pk in enumerate(assignment.summary_order or [], 1):
        edit = summaries.get(pk)
        if edit is None:
            continue
        edit.position = position
        edit.diff = worddiff.diff(seed.summary.text, edit.text)
        out.append(edit)
    return out


def clean_draft(raw: dict, edit_ids: list[int], saved: dict, seed: SeedSummary) -> dict:
    """This screen's fields from an untrusted draft: step 1 answers until verified (then frozen),
    edit labels only after a pass."""
    raw = raw or {}
    cleaned = {}
    if verified(saved):
        cleaned |= {
            k: saved[k] for k in ("flaws", "consistent", "answers_query", "verified", "verified_at") if k in saved
        }
        if verified(saved) == "pass":
            allowed = {f"l-{pk}" for pk in edit_ids}
            cleaned |= {k: str(v) for k, v in raw.items() if k in allowed and v in LABEL_VALUES}
    else:
        cleaned |= {name: raw[name] for name, _ in questions(seed) if raw.get(name) in ("yes", "no")}
    focus = str(raw.get("_focus", ""))[:100]
    return cleaned | ({"_focus": focus} if focus else {})


def validate(draft: dict, edits: list) -> dict[str, str]:
    if verified(draft) != "pass":
        return {"__all__": "Verify the seed first."}
    if not edits:
        return {"__all__": "This seed has no edits yet."}
    return {
        f"l-{edit.pk}": f"Label edit {edit.position}."
        for edit in edits
        if draft.get(f"l-{edit.pk}") not in LABEL_VALUES
    }


@transaction.atomic
def submit(*, assignment: Assignment, draft: dict, client_token: str, user) -> Assignment:
    """Record every edit's label; idempotent on `client_token`, a correction keeps revisions."""
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    if client_token and assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == client_token:
        return assignment
    edits = edits_in_order(assignment)
    errors = validate(draft, edits)
    if errors:
        raise ValidationError(errors)
    for edit in edits:
        services.record_judgment(
            assignment=assignment, user=user, dimension="edit_label", summary=edit, value=draft[f"l-{edit.pk}"]
        )
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    assignment.client_token = client_token or ""
    assignment.draft = draft
    assignment.save(update_fields=["status", "submitted_at", "client_token", "draft"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment


def screen(assignment: Assignment, draft: dict, errors: dict) -> dict:
    """What the template shows, values and messages looked up."""
    seed = seed_of(assignment)
    state = verified(draft)
    context = {
        "seed": seed,
        "state": state,
        "questions": [
            {"name": name, "text": text, "value": draft.get(name, ""), "error": errors.get(name, "")}
            for name, text in questions(seed)
        ],
        "labels": LABELS,
        "yes_no": (("yes", "Yes"), ("no", "No")),
        "edits": [],
        "generation": None,
    }
    if state == "pass":
        edits = edits_in_order(assignment)
        labelled = defaultdict(str, {k: v for k, v in draft.items() if k.startswith("l-")})
        context["edits"] = [
            {"edit": e, "name": f"l-{e.pk}", "value": labelled[f"l-{e.pk}"], "error": errors.get(f"l-{e.pk}", "")}
            for e in edits
        ]
        context["done"] = sum(1 for row in context["edits"] if row["value"])
        context["generation"] = generation_progress(seed)
        context["feedback"] = feedback(assignment)
        if context["feedback"] and context["feedback"].get("rows"):
            for row in context["edits"]:
                row["gold"] = context["feedback"]["rows"].get(row["edit"].pk, {}).get("gold")
    return context


def refresh_edits(assignment: Assignment) -> None:
    """Edits generated after the verification join the list (at the end) on the next page load."""
    if verified(assignment.draft) != "pass" or assignment.status == Assignment.Status.SUBMITTED:
        return
    before = list(assignment.summary_order or [])
    if fix_edits(assignment, seed_of(assignment)) != before:  # new edits joined
        Assignment.objects.filter(pk=assignment.pk).update(summary_order=assignment.summary_order)


# -- warm-up: gold labels by a lead, feedback to annotators, accuracy per annotator ---------------
@transaction.atomic
def set_gold(*, item: Item, labels: dict[int, str], user) -> int:
    """A lead's gold labels for a warm-up seed's edits (adjudications, which are also what the
    statistics and the export use). Unknown edits or labels are refused."""
    from annotation.protocols.models import Adjudication

    if not item.is_warmup:
        raise ValidationError("Only warm-up seeds have gold labels.")
    seed = SeedSummary.objects.get(summary__in=item.summaries.all())
    edits = set(EditedSummary.objects.filter(seed=seed).values_list("summary_id", flat=True))
    bad = [pk for pk, label in labels.items() if pk not in edits or label not in LABEL_VALUES]
    if bad:
        raise ValidationError(f"Not edits of this seed, or not a label: {bad}.")
    for pk, label in labels.items():
        Adjudication.objects.update_or_create(
            item=item,
            dimension="edit_label",
            target=f"summary:{pk}",
            defaults={"summary_id": pk, "value": label, "decided_by": user, "note": "gold (warm-up)"},
        )
    services.labels_changed(campaign_ids=[item.campaign_id])
    return len(labels)


def gold(item: Item) -> dict[int, str]:
    from annotation.protocols.models import Adjudication

    rows = Adjudication.objects.filter(item=item, dimension="edit_label").values_list("summary_id", "value")
    return dict(rows)


def feedback(assignment: Assignment) -> dict | None:
    """After a submitted warm-up seed: each edit's label beside the gold one."""
    if not assignment.item.is_warmup or assignment.status != Assignment.Status.SUBMITTED:
        return None
    answers = gold(assignment.item)
    if not answers:
        return {"pending": True}
    mine = dict(assignment.judgments.filter(dimension="edit_label").values_list("summary_id", "value"))
    rows = [{"edit": pk, "mine": mine.get(pk), "gold": answers[pk]} for pk in answers if pk in mine]
    agreed = sum(r["mine"] == r["gold"] for r in rows)
    return {"rows": {r["edit"]: r for r in rows}, "agreed": agreed, "total": len(rows)}


def warmup_accuracy(campaign: Campaign) -> list[dict]:
    """Per annotator (pseudonym): edits labelled on warm-up seeds that have gold, and the share equal to gold."""
    from annotation.protocols.models import Adjudication, Judgment

    golds = {
        (item_id, pk): value
        for item_id, pk, value in Adjudication.objects.filter(
            item__campaign=campaign, item__is_warmup=True, dimension="edit_label"
        ).values_list("item_id", "summary_id", "value")
    }
    pseudonyms = dict(campaign.project.memberships.values_list("user_id", "pseudonym"))
    counts = defaultdict(lambda: [0, 0])
    rows = Judgment.objects.filter(
        assignment__item__campaign=campaign, assignment__item__is_warmup=True, dimension="edit_label"
    ).values_list("assignment__annotator_id", "assignment__item_id", "summary_id", "value")
    for user_id, item_id, pk, value in rows:
        if (item_id, pk) in golds:
            counts[user_id][0] += 1
            counts[user_id][1] += value == golds[(item_id, pk)]
    return sorted(
        (
            {"annotator": pseudonyms.get(u, str(u)), "labelled": n, "accuracy": round(ok / n, 3) if n else None}
            for u, (n, ok) in counts.items()
        ),
        key=lambda r: r["annotator"],
    )


# -- edit types by a reviewer (SummEdits section 6.3) -------------------------------------------
TYPING_STAGE = "edit_typing"
TYPES_TAXONOMY = "summedits-edit-types"


def inconsistent_edits(campaign: Campaign) -> list[tuple[int, int]]:
    """(item pk, edit summary pk) of the edits whose annotators' majority says inconsistent
    (a tie is not inconsistent), in a stable order."""
    from annotation.protocols.models import Judgment

    votes = defaultdict(list)
    rows = Judgment.objects.filter(
        assignment__item__campaign=campaign, assignment__stage="annotate", dimension="edit_label"
    ).values_list("assignment__item_id", "summary_id", "value")
    for item_id, pk, value in rows:
        votes[(item_id, pk)].append(value)
    chosen = []
    for key, values in sorted(votes.items()):
        top = sorted(((values.count(v), v) for v in set(values)), reverse=True)
        if top[0][1] == "inconsistent" and (len(top) == 1 or top[0][0] > top[1][0]):
            chosen.append(key)
    return chosen


def typing_queue(campaign: Campaign, reviewer) -> list[tuple[int, int]]:
    from annotation.protocols.models import Judgment

    typed = set(
        Judgment.objects.filter(
            assignment__item__campaign=campaign, assignment__stage=TYPING_STAGE, assignment__annotator=reviewer
        ).values_list("assignment__item_id", "summary_id")
    )
    return [key for key in inconsistent_edits(campaign) if key not in typed]


@transaction.atomic
def type_edit(*, item: Item, edit_id: int, reviewer, codes):
    """A reviewer's edit types (one or more) for an inconsistent edit; typing again keeps the
    earlier types as a revision."""
    from annotation.protocols.models import Judgment, Taxonomy, TaxonomyLabel

    if (item.pk, edit_id) not in set(inconsistent_edits(item.campaign)):
        raise ValidationError("Only edits labelled inconsistent get edit types.")
    taxonomy = Taxonomy.objects.filter(slug=TYPES_TAXONOMY).order_by("-version").first()
    known = set(TaxonomyLabel.objects.filter(taxonomy=taxonomy).values_list("code", flat=True))
    chosen = sorted({str(c) for c in codes})
    if not chosen or set(chosen) - known:
        raise ValidationError({"codes": "Choose one or more edit types from the list."})
    assignment = services.assign(item=item, annotator=reviewer, stage=TYPING_STAGE)
    edit = EditedSummary.objects.select_related("summary").get(summary_id=edit_id).summary
    judgment = services.record_judgment(
        assignment=assignment, dimension="edit_types", value=chosen, summary=edit, user=reviewer
    )
    Judgment.objects.filter(pk=judgment.pk).update(taxonomy=taxonomy)
    if assignment.status != Assignment.Status.SUBMITTED:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.SUBMITTED, started_at=now, submitted_at=now
        )
    services.labels_changed(campaign_ids=[item.campaign_id])
    return judgment


def verified_seeds_without_edits(campaign: Campaign) -> list[SeedSummary]:
    """Seeds some annotator verified as passing whose edits this campaign has not asked for."""
    items = {
        a.item_id
        for a in Assignment.objects.filter(item__campaign=campaign).only("item_id", "draft")
        if verified(a.draft) == "pass"
    }
    seeds = SeedSummary.objects.filter(summary__items__in=items).distinct().order_by("pk")
    return [seed for seed in seeds if not generated_for(campaign, seed)]


@transaction.atomic
def generate_batch(*, campaign: Campaign):
    """A lead's batch: one edits job for every verified seed still waiting for its edits."""
    seeds = verified_seeds_without_edits(campaign)
    if not seeds:
        raise ValidationError("No verified seed is waiting for edits.")
    return start_generation(campaign=campaign, seeds=seeds)
