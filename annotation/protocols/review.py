"""TofuEval expert review (Tang et al. 2024, App. F.4) and error typing (App. G) of task 1 labels.

A *unit* is one summary sentence of an item that at least one annotator labelled inconsistent
in a submitted task 1 assignment. Its way through review:

    to decide  no live decision yet, or the last one was sent back: a reviewer keeps the
               label (the sentence is inconsistent) or overturns it (a false positive; a note
               says why);
    to check   a proposed decision: a second reviewer, never its author, confirms it or sends
               it back with a note (the unit returns to "to decide", the note stays visible);
    settled    a confirmed decision; it is the unit's Adjudication, the final label. The
               annotators' own judgments are never changed;
    to type    settled as kept: reviewers assign error types (App. G) as a Judgment of an
               "error_typing" assignment. Units of pilot rounds (every round before the
               campaign's last) are typed by every reviewer, so agreement can be measured;
               the others need one typing.

Reviewers see annotators by pseudonym only and never the summarizer's name.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.projects.models import Membership, Role
from annotation.protocols import services
from annotation.protocols.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Judgment,
    Protocol,
    ReviewDecision,
    Taxonomy,
    TaxonomyLabel,
)

TYPING_STAGE = "error_typing"
ERROR_TYPES = "tofueval-error-types"
MAX_NOTE = 5000
QUEUES = ("decide", "check", "type")


# -- units and queues ---------------------------------------------------------------------------
@dataclass
class Unit:
    campaign_id: int
    item_id: int
    item_key: str
    round: str
    pilot: bool
    sentence_id: int
    summary_id: int
    sentence_index: int
    sentence_text: str
    target: str
    flags: int = 0  # annotators who labelled the sentence inconsistent
    decision: dict | None = None  # the live decision: pk, decision, status, reviewer_id
    typers: set = field(default_factory=set)  # user ids who assigned error types

    def state(self) -> str:
        if self.decision is None:
            return "decide"
        if self.decision["status"] == ReviewDecision.Status.PROPOSED:
            return "check"
        return "settled"

    def kept(self) -> bool:
        return self.state() == "settled" and self.decision["decision"] == ReviewDecision.Decision.KEEP

    def queue_for(self, user_id: int) -> str | None:
        """Which of the user's queues the unit is in ("waiting" for their own unchecked decision)."""
        state = self.state()
        if state == "decide":
            return "decide"
        if state == "check":
            return "waiting" if self.decision["reviewer_id"] == user_id else "check"
        if self.kept() and user_id not in self.typers and (self.pilot or not self.typers):
            return "type"
        return None


def reviewable(campaigns):
    """Task 1 campaigns of our own annotators (a release's labels were reviewed where they came from)."""
    return campaigns.filter(protocol=Protocol.TOFUEVAL_TASK1, is_release=False)


def units(campaign_ids, *, item_id: int | None = None, target: str | None = None) -> list[Unit]:
    """Every unit of the campaigns (or the one of `item_id` and `target`) with its review state,
    in four queries however many there are."""
    campaign_ids = list(campaign_ids)
    narrow = {"item_id": item_id, "target": target} if item_id is not None else {}
    rounds = Campaign.objects.filter(pk__in=campaign_ids).values_list("pk", "rounds")
    last_round = {pk: (names or [None])[-1] for pk, names in rounds}
    found: dict[tuple, Unit] = {}
    for r in flagged(campaign_ids, narrow):
        key = (r["item_id"], r["target"])
        if key not in found:
            last = last_round.get(r["campaign_id"])
            r["summary_id"] = r.pop("of_summary")
            found[key] = Unit(**r, pilot=last is not None and r["round"] != last)
        found[key].flags += 1
    live = ReviewDecision.objects.live().filter(item__campaign__in=campaign_ids, **narrow)
    for d in live.values("pk", "item_id", "target", "decision", "status", "reviewer_id"):
        if (d["item_id"], d["target"]) in found:
            found[(d["item_id"], d["target"])].decision = d
    typings = Judgment.objects.filter(
        assignment__item__campaign__in=campaign_ids, assignment__stage=TYPING_STAGE, dimension="error_types"
    )
    if narrow:
        typings = typings.filter(assignment__item_id=item_id, target=target)
    for t in typings.values("target", item_id=F("assignment__item_id"), user_id=F("assignment__annotator_id")):
        if (t["item_id"], t["target"]) in found:
            found[(t["item_id"], t["target"])].typers.add(t["user_id"])
    return sorted(found.values(), key=lambda u: (u.item_key, u.summary_id, u.sentence_index))


def flagged(campaign_ids: list[int], narrow: dict):
    """One row per inconsistent label in a submitted task 1 assignment."""
    rows = Judgment.objects.filter(
        assignment__item__campaign__in=campaign_ids,
        assignment__stage="annotate",
        assignment__status=Assignment.Status.SUBMITTED,
        dimension="consistency",
        value="inconsistent",
        sentence__isnull=False,
    )
    if narrow:
        rows = rows.filter(assignment__item_id=narrow["item_id"], target=narrow["target"])
    return rows.values(
        "target",
        "sentence_id",
        item_id=F("assignment__item_id"),
        campaign_id=F("assignment__item__campaign_id"),
        item_key=F("assignment__item__key"),
        round=F("assignment__item__round"),
        of_summary=F("sentence__summary_id"),
        sentence_index=F("sentence__index"),
        sentence_text=F("sentence__text"),
    )


def queues(campaign: Campaign, user) -> dict[str, list[Unit]]:
    """The user's units to decide, to check and to type, plus their own decisions waiting for a check."""
    out = {"decide": [], "check": [], "type": [], "waiting": []}
    for unit in units([campaign.pk]):
        queue = unit.queue_for(user.pk)
        if queue:
            out[queue].append(unit)
    return out


def counts(campaign_ids, user) -> dict[int, dict[str, int]]:
    """Per campaign, how many units wait in each of the user's queues (the home page's line)."""
    out = defaultdict(lambda: dict.fromkeys(QUEUES, 0))
    for unit in units(campaign_ids):
        queue = unit.queue_for(user.pk)
        if queue in QUEUES:
            out[unit.campaign_id][queue] += 1
    return out


def waiting_for_review(campaign: Campaign) -> int:
    """Units without a confirmed decision (an adjudication from elsewhere settles one too)."""
    settled = set(
        Adjudication.objects.filter(item__campaign=campaign, dimension="consistency").values_list("item_id", "target")
    )
    return sum(u.state() != "settled" and (u.item_id, u.target) not in settled for u in units([campaign.pk]))


def find_unit(item: Item, sentence) -> Unit | None:
    """The unit of this item and sentence, or None when no annotator labelled it inconsistent."""
    found = units([item.campaign_id], item_id=item.pk, target=Judgment.make_target(sentence=sentence))
    return found[0] if found else None


def reviewers(project) -> list[Membership]:
    """The project's people who review (and so type errors): pilot units need all of them."""
    return list(project.memberships.people().filter(role__in=[Role.REVIEWER, Role.LEAD]))


# -- what a reviewer sees of a unit -------------------------------------------------------------
def annotator_labels(item: Item, target: str) -> list[dict]:
    """Every annotator's label and explanation of the sentence, by pseudonym."""
    pseudonyms = dict(item.campaign.project.memberships.values_list("user_id", "pseudonym"))
    rows = Judgment.objects.filter(
        assignment__item=item,
        assignment__stage="annotate",
        assignment__status=Assignment.Status.SUBMITTED,
        dimension="consistency",
        target=target,
    ).values("value", "explanation", user_id=F("assignment__annotator_id"))
    labels = [{**r, "annotator": pseudonyms.get(r["user_id"], "?")} for r in rows]
    return sorted(labels, key=lambda r: r["annotator"])


def history(item: Item, target: str) -> list[ReviewDecision]:
    """The unit's decisions, oldest first, with reviewers' pseudonyms (`reviewer_name`, `checker_name`)."""
    pseudonyms = dict(item.campaign.project.memberships.values_list("user_id", "pseudonym"))
    decisions = list(ReviewDecision.objects.filter(item=item, target=target).order_by("decided_at", "pk"))
    for d in decisions:
        d.reviewer_name = pseudonyms.get(d.reviewer_id, "?")
        d.checker_name = pseudonyms.get(d.checked_by_id, "") if d.checked_by_id else ""
    return decisions


def error_taxonomy(campaign: Campaign) -> Taxonomy:
    """The campaign's error-type taxonomy version, else the newest TofuEval one."""
    if campaign.taxonomy_id and campaign.taxonomy.slug == ERROR_TYPES:
        return campaign.taxonomy
    return Taxonomy.objects.filter(slug=ERROR_TYPES).order_by("-version").first()


def own_typing(item: Item, target: str, user) -> Judgment | None:
    return (
        Judgment.objects.filter(
            assignment__item=item, assignment__annotator=user, assignment__stage=TYPING_STAGE, dimension="error_types"
        )
        .filter(target=target)
        .first()
    )


# -- decisions ----------------------------------------------------------------------------------
def clean_note(note) -> str:
    return str(note or "").strip()[:MAX_NOTE]


@transaction.atomic
def decide(*, item: Item, sentence, reviewer, decision: str, note: str = "") -> ReviewDecision:
    """A first reviewer's keep / overturn of a unit. A unit holds one live decision: a second
    one is refused, never a silent overwrite of someone else's."""
    note = clean_note(note)
    if decision not in ReviewDecision.Decision.values:
        raise ValidationError({"decision": "Choose whether to keep or overturn the label."})
    if decision == ReviewDecision.Decision.OVERTURN and not note:
        raise ValidationError({"note": "Say why the label is overturned: which part of the source supports it."})
    item = Item.objects.select_for_update().select_related("campaign").get(pk=item.pk)
    unit = find_unit(item, sentence)
    if unit is None:
        raise ValidationError("No annotator labelled this sentence inconsistent: there is nothing to review.")
    if unit.decision is not None:
        raise ValidationError("Another reviewer has decided this sentence in the meantime; reload to see it.")
    try:
        with transaction.atomic():
            return ReviewDecision.objects.create(
                item=item,
                summary_id=sentence.summary_id,
                sentence=sentence,
                target=unit.target,
                decision=decision,
                note=note,
                reviewer=reviewer,
            )
    except IntegrityError as error:  # a concurrent decision got there first
        raise ValidationError(
            "Another reviewer has decided this sentence in the meantime; reload to see it."
        ) from error


@transaction.atomic
def check_decision(*, decision: ReviewDecision, checker, confirm: bool, note: str = "") -> ReviewDecision:
    """The second reviewer's check. Confirming makes the decision the unit's adjudicated label;
    sending back (with a note) returns the unit to the queue, the decision kept as history."""
    note = clean_note(note)
    decision = ReviewDecision.objects.select_for_update().select_related("item").get(pk=decision.pk)
    if decision.status != ReviewDecision.Status.PROPOSED:
        raise ValidationError("This decision has already been checked; reload to see it.")
    if decision.reviewer_id == checker.pk:
        raise ValidationError("A second reviewer checks a decision: you cannot check your own.")
    if not confirm and not note:
        raise ValidationError({"check_note": "Say why you send the decision back, for the next reviewer."})
    decision.status = ReviewDecision.Status.CONFIRMED if confirm else ReviewDecision.Status.SENT_BACK
    decision.checked_by, decision.check_note, decision.checked_at = checker, note, timezone.now()
    decision.save(update_fields=["status", "checked_by", "check_note", "checked_at"])
    if confirm:
        adjudicate(decision)
        services.labels_changed(campaign_ids=[decision.item.campaign_id])
    return decision


def adjudicate(decision: ReviewDecision) -> Adjudication:
    """Record a confirmed decision as the unit's final consistency label."""
    values = {
        "summary_id": decision.summary_id,
        "sentence_id": decision.sentence_id,
        "value": decision.final_value(),
        "note": decision.note,
        "decided_by_id": decision.reviewer_id,
        "decided_at": decision.checked_at,
    }
    found = Adjudication.objects.select_for_update().filter(
        item_id=decision.item_id, dimension="consistency", target=decision.target
    )
    existing = found.first()
    if existing is None:
        return Adjudication.objects.create(
            item_id=decision.item_id, dimension="consistency", target=decision.target, **values
        )
    for name, value in values.items():
        setattr(existing, name, value)
    existing.version += 1
    existing.save()
    return existing


# -- error typing -------------------------------------------------------------------------------
@transaction.atomic
def type_errors(*, item: Item, sentence, reviewer, codes, note: str = "") -> Judgment:
    """A reviewer's error types (one or more) for a kept inconsistent sentence. Typing again
    replaces the reviewer's own types, the earlier ones kept as a revision."""
    item = Item.objects.select_for_update().select_related("campaign").get(pk=item.pk)
    unit = find_unit(item, sentence)
    if unit is None or not unit.kept():
        raise ValidationError("Error types are assigned once a decision to keep the label is confirmed.")
    taxonomy = error_taxonomy(item.campaign)
    if taxonomy is None:
        raise ValidationError("The TofuEval error types are not loaded (migration protocols 0002).")
    known = set(TaxonomyLabel.objects.filter(taxonomy=taxonomy).values_list("code", flat=True))
    chosen = sorted({str(c) for c in codes})
    note = clean_note(note)
    if not chosen:
        raise ValidationError({"codes": "Choose at least one error type."})
    if set(chosen) - known:
        raise ValidationError({"codes": "Choose error types from the list."})
    if "other" in chosen and not note:
        raise ValidationError({"note": "Describe the error you typed as Other."})
    assignment = services.assign(item=item, annotator=reviewer, stage=TYPING_STAGE)
    judgment = services.record_judgment(
        assignment=assignment,
        dimension="error_types",
        value=chosen,
        explanation=note,
        summary=sentence.summary,
        sentence=sentence,
        user=reviewer,
    )
    if judgment.taxonomy_id != taxonomy.pk:
        judgment.taxonomy = taxonomy
        judgment.save(update_fields=["taxonomy"])
    if assignment.status != Assignment.Status.SUBMITTED:
        now = timezone.now()
        assignment.status, assignment.started_at, assignment.submitted_at = Assignment.Status.SUBMITTED, now, now
        assignment.save(update_fields=["status", "started_at", "submitted_at"])
    services.labels_changed(campaign_ids=[item.campaign_id])
    return judgment
