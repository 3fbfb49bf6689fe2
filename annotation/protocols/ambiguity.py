"""Ambiguity labelling (Koupaee et al., MADISSE, section 4 and appendix B).

The unit is one summary sentence, shown highlighted inside its summary beside the document. The
annotator answers whether an ambiguity affects the sentence's evaluability; if so, chooses its
type from the two-level taxonomy (the campaign's version) and describes it. Two annotators per
sentence; an expert then adjudicates (`adjudicate`), and the adjudicated value is the final one.

Judgments, as the MADISSE importer writes them too: "ambiguous" (true / false, the description as
its explanation) and "ambiguity_types" (a list of taxonomy codes; null once a correction says
"not ambiguous"), both on the sentence. Draft keys: `ambiguous` ("yes" / "no"), `type`,
`description`, `_focus`.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from annotation.protocols import services
from annotation.protocols.models import Adjudication, Assignment, Item, Judgment, Protocol, Taxonomy, TaxonomyLabel

TEMPLATE = "protocols/ambiguity.html"
TAXONOMY = "madisse-ambiguity"
ANSWERS = {"yes": True, "no": False}
MAX_DESCRIPTION = 5000
FIELDS = ("ambiguous", "type", "description", "_focus")


def taxonomy_of(campaign) -> Taxonomy | None:
    """The campaign's taxonomy version, else the newest MADISSE one."""
    if campaign.taxonomy_id and campaign.taxonomy.slug == TAXONOMY:
        return campaign.taxonomy
    return Taxonomy.objects.filter(slug=TAXONOMY).order_by("-version").first()


def tree(taxonomy: Taxonomy | None) -> list[dict]:
    """Categories in order, each with its selectable types; a category without children (other
    evaluability issue) is itself selectable."""
    if taxonomy is None:
        return []
    labels = list(TaxonomyLabel.objects.filter(taxonomy=taxonomy).order_by("order"))
    children: dict[int, list] = {}
    for label in labels:
        if label.parent_id:
            children.setdefault(label.parent_id, []).append(label)
    categories = []
    for label in labels:
        if label.parent_id is None:
            categories.append({"label": label, "types": children.get(label.pk) or [label]})
    return categories


def leaf_codes(taxonomy: Taxonomy | None) -> dict[str, TaxonomyLabel]:
    return {t.code: t for category in tree(taxonomy) for t in category["types"]}


def clean_draft(raw: dict, assignment: Assignment) -> dict:
    """Keep only this screen's fields, as bounded strings: a draft is untrusted input."""
    return {k: str(v)[:MAX_DESCRIPTION] for k, v in (raw or {}).items() if k in FIELDS and v not in (None, "")}


def validate(draft: dict, codes: dict) -> dict[str, str]:
    errors = {}
    answer = draft.get("ambiguous")
    if answer not in ANSWERS:
        errors["ambiguous"] = "Say whether an ambiguity affects the evaluation of this sentence."
    elif answer == "yes":
        if draft.get("type") not in codes:
            errors["type"] = "Choose the type of ambiguity."
        if not draft.get("description", "").strip():
            errors["description"] = "Describe the ambiguity: which words, which readings."
    return errors


@transaction.atomic
def submit(*, assignment: Assignment, draft: dict, client_token: str, user) -> Assignment:
    """Record the answer; idempotent on `client_token`, a later correction keeps the old value as history."""
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("item__campaign", "item__sentence")
        .get(pk=assignment.pk)
    )
    if assignment.item.campaign.protocol != Protocol.AMBIGUITY or assignment.item.sentence is None:
        raise ValidationError("This assignment is not an ambiguity item.")
    if client_token and assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == client_token:
        return assignment
    taxonomy = taxonomy_of(assignment.item.campaign)
    errors = validate(draft, leaf_codes(taxonomy))
    if errors:
        raise ValidationError(errors)
    sentence = assignment.item.sentence
    unit = {"assignment": assignment, "user": user, "summary": sentence.summary, "sentence": sentence}
    ambiguous = ANSWERS[draft["ambiguous"]]
    description = draft.get("description", "").strip() if ambiguous else ""
    services.record_judgment(**unit, dimension="ambiguous", value=ambiguous, explanation=description)
    if ambiguous:
        services.record_judgment(**unit, dimension="ambiguity_types", value=[draft["type"]], taxonomy=taxonomy)
    elif Judgment.objects.filter(assignment=assignment, dimension="ambiguity_types").exists():
        services.record_judgment(**unit, dimension="ambiguity_types", value=None, taxonomy=taxonomy)
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    assignment.client_token = client_token or ""
    assignment.draft = draft
    assignment.save(update_fields=["status", "submitted_at", "client_token", "draft"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment


def in_context(sentence) -> dict:
    """The sentence's summary split around it, by code-point offsets, for highlighting."""
    text = sentence.summary.text
    return {
        "before": text[: sentence.start],
        "sentence": text[sentence.start : sentence.end],
        "after": text[sentence.end :],
    }


def screen(assignment: Assignment, draft: dict, errors: dict) -> dict:
    taxonomy = taxonomy_of(assignment.item.campaign)
    sentence = assignment.item.sentence
    if sentence is None:  # e.g. an imported item that names no sentence
        raise Http404("This item names no summary sentence to judge.")
    return {
        "taxonomy": taxonomy,
        "categories": tree(taxonomy),
        "context": in_context(sentence),
        "sentence": sentence,
        "answer": draft.get("ambiguous", ""),
        "chosen": draft.get("type", ""),
        "description": draft.get("description", ""),
    }


# -- adjudication -------------------------------------------------------------------------------------
@dataclass
class Answer:
    annotator: str  # the pseudonym
    ambiguous: bool | None
    types: list[str]
    description: str


def answers(item: Item) -> list[Answer]:
    """The submitted answers of an item's annotators, in pseudonym order."""
    rows = Judgment.objects.filter(
        assignment__item=item,
        assignment__stage="annotate",
        assignment__status=Assignment.Status.SUBMITTED,
        dimension__in=("ambiguous", "ambiguity_types"),
    ).values("assignment__annotator_id", "dimension", "value", "explanation")
    names = pseudonyms(item)
    found: dict[int, Answer] = {}
    for row in rows:
        user_id = row["assignment__annotator_id"]
        answer = found.setdefault(user_id, Answer(names.get(user_id, f"#{user_id}"), None, [], ""))
        if row["dimension"] == "ambiguous":
            answer.ambiguous, answer.description = row["value"], row["explanation"]
        else:
            answer.types = list(row["value"] or [])
    return sorted(found.values(), key=lambda a: a.annotator)


def pseudonyms(item: Item) -> dict[int, str]:
    from annotation.projects.models import Membership

    members = Membership.objects.filter(project_id=item.campaign.project_id).values_list("user_id", "pseudonym")
    return dict(members)


def final(item: Item) -> dict:
    """The item's adjudicated label and type, if decided: {"ambiguous", "type", "note", "version", "by"}."""
    rows = {
        a.dimension: a for a in Adjudication.objects.filter(item=item, dimension__in=("ambiguous", "ambiguity_types"))
    }
    decided = rows.get("ambiguous")
    if decided is None:
        return {}
    types = rows.get("ambiguity_types")
    return {
        "ambiguous": decided.value,
        "type": (types.value or [""])[0] if types and types.value else "",
        "note": decided.note,
        "version": decided.version,
        "by": decided.decided_by_id,
        "at": decided.decided_at,
    }


def queue(campaign) -> list[Item]:
    """Items every one of whose (two or more) annotators has submitted, not yet adjudicated;
    disagreements first, then in key order."""
    items = (
        campaign.items.filter(sentence__isnull=False)
        .exclude(adjudications__dimension="ambiguous")
        .select_related("sentence__summary", "document")
        .prefetch_related("assignments")
        .order_by("key")
    )
    ready = []
    for item in items:
        stages = [a for a in item.assignments.all() if a.stage == "annotate"]
        if len(stages) >= 2 and all(a.status == Assignment.Status.SUBMITTED for a in stages):
            ready.append(item)
    labels = disagreement(ready)
    return sorted(ready, key=lambda item: (not labels.get(item.pk, False), item.key))


def disagreement(items: list[Item]) -> dict[int, bool]:
    """Whether an item's annotators differ on the label or the type."""
    seen: dict[int, set] = {}
    rows = Judgment.objects.filter(
        assignment__item__in=items, assignment__stage="annotate", dimension__in=("ambiguous", "ambiguity_types")
    ).values_list("assignment__item_id", "assignment_id", "dimension", "value")
    per_assignment: dict[tuple[int, int], list] = {}
    for item_id, assignment_id, dimension, value in rows:
        key = (item_id, assignment_id)
        entry = per_assignment.setdefault(key, [None, None])
        entry[0 if dimension == "ambiguous" else 1] = tuple(value) if isinstance(value, list) else value
    for (item_id, _), entry in per_assignment.items():
        seen.setdefault(item_id, set()).add(tuple(entry) if entry[0] else (entry[0], None))
    return {item_id: len(values) > 1 for item_id, values in seen.items()}


class AdjudicationConflict(Exception):
    """Another expert decided this item since the page was loaded."""


@transaction.atomic
def adjudicate(*, item: Item, ambiguous: str, type_code: str, note: str, expert, expected_version: int) -> None:
    """Record the final label and type of an item's sentence, with a note.

    `expected_version` is the version the expert saw (0: undecided); a different current version
    means someone else decided in between, which is refused (AdjudicationConflict), never overwritten."""
    item = Item.objects.select_for_update(of=("self",)).select_related("campaign", "sentence__summary").get(pk=item.pk)
    if item.campaign.protocol != Protocol.AMBIGUITY or item.sentence is None:
        raise ValidationError("This item is not an ambiguity item.")
    current = final(item)
    if current.get("version", 0) != expected_version:
        raise AdjudicationConflict()
    taxonomy = taxonomy_of(item.campaign)
    errors = validate({"ambiguous": ambiguous, "type": type_code, "description": note}, leaf_codes(taxonomy))
    if "description" in errors:
        errors["note"] = "Say why: which words are ambiguous, or why the sentence is not."
        del errors["description"]
    if ambiguous == "no" and not note.strip() and len({a.ambiguous for a in answers(item)}) > 1:
        errors["note"] = "Say why you decided against the annotator who found an ambiguity."
    if errors:
        raise ValidationError(errors)
    value = ANSWERS[ambiguous]
    sentence = item.sentence
    common = {"summary": sentence.summary, "sentence": sentence, "decided_by": expert, "decided_at": timezone.now()}
    target = Judgment.make_target(sentence=sentence)
    write(item, "ambiguous", target, value, note.strip(), None, common)
    write(item, "ambiguity_types", target, [type_code] if value else None, "", taxonomy, common)
    services.labels_changed(campaign_ids=[item.campaign_id])


def write(item, dimension, target, value, note, taxonomy, common) -> None:
    row = Adjudication.objects.filter(item=item, dimension=dimension, target=target).first()
    if row is None:
        Adjudication.objects.create(
            item=item, dimension=dimension, target=target, value=value, note=note, taxonomy=taxonomy, **common
        )
        return
    row.value, row.note, row.taxonomy = value, note, taxonomy
    row.decided_by, row.decided_at = common["decided_by"], common["decided_at"]
    row.version += 1
    row.save(update_fields=["value", "note", "taxonomy", "decided_by", "decided_at", "version"])
