"""A lead sets up a campaign of TofuEval task 1 or task 2 (an item is a (document, topic) with its
summaries), of ambiguity labelling (an item is one summary sentence) or of span marking (an item
is one summary): which units, who annotates them, how many annotators per item, in which rounds.

Assignment balances load (each item goes to the annotators with the fewest items so far, ties
broken by a seeded shuffle) and never gives one annotator the same item twice; each assignment
records its own shuffled summary order.
"""

import random
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.corpus.models import Summary
from annotation.projects.models import Project
from annotation.protocols import services, tofueval
from annotation.protocols.models import Campaign, Item, Protocol, Taxonomy

GUIDELINES = "\n\n".join(
    [
        "Read the dialogue, then judge the topic and each summary sentence by sentence (TofuEval, App. F.1).",
        "Topic category: " + " ".join(f"{label}: {definition}" for _, label, definition in tofueval.CATEGORIES),
        "A sentence is consistent when everything it says is supported by the dialogue; otherwise it is "
        "inconsistent, and you explain why in a sentence or two.",
        "Relevance (1-5): " + " ".join(f"{score}: {definition}" for score, definition in tofueval.LIKERT),
        "Mark a text 'not a summary' when it is not a summary at all (e.g. a refusal or a question).",
    ]
)
TASK2_GUIDELINES = "\n\n".join(
    [
        "Completeness (TofuEval, App. F.2). First read the dialogue and write the key points that a good "
        "summary of the topic must contain: one per box, most important first, each a short statement of "
        "one fact. You will not see the summaries until you commit the key points, and you cannot change "
        "them afterwards.",
        "Then, for each summary, tick every key point it covers. A key point counts as covered when the "
        "summary states it, in any wording; a summary that states it wrongly does not cover it. When a "
        "summary covers none of them, say so.",
    ]
)
AMBIGUITY_GUIDELINES = "\n\n".join(
    [
        "Ambiguity (MADISSE, Koupaee et al., section 4). Read the highlighted summary sentence in its summary "
        "and the source. Do not judge whether it is consistent: judge whether an ambiguity affects whether it "
        "can be judged, i.e. whether careful readers could reasonably disagree about its consistency because "
        "of how the sentence or the source can be read.",
        "If it can: choose the type from the taxonomy (its definitions and examples are beside each type) and "
        "describe the ambiguity in a sentence or two: which words, which readings.",
    ]
)
SPANS_GUIDELINES = "\n\n".join(
    [
        "Span-level inconsistencies (Ramprasad et al. 2024, section 2.3). Read the dialogue, then mark every "
        "minimal span of the summary that the dialogue does not support: the fewest words that carry the error.",
        "For each span choose its category and whether it is intrinsic (it misstates something the dialogue "
        "says) or extrinsic (it adds something the dialogue does not say); link the turns that show the "
        "inconsistency, or mark that no evidence exists (unsupported information); add a note if it helps.",
        "A summary with no inconsistent span is marked as such explicitly.",
    ]
)
DEFAULT_GUIDELINES = {
    Protocol.TOFUEVAL_TASK1: GUIDELINES,
    Protocol.TOFUEVAL_TASK2: TASK2_GUIDELINES,
    Protocol.AMBIGUITY: AMBIGUITY_GUIDELINES,
    Protocol.SPANS: SPANS_GUIDELINES,
}
TAXONOMIES = {Protocol.AMBIGUITY: "madisse-ambiguity", Protocol.SPANS: "ramprasad-categories"}


@dataclass
class Plan:
    name: str
    slug: str
    annotators: list
    datasets: list[str] = field(default_factory=list)
    splits: list[str] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)
    per_item: int = 1  # every item by this many annotators ...
    double_share: float = 0.0  # ... plus this share of items by one more
    rounds: list[str] = field(default_factory=lambda: ["main"])
    pilot_items: int = 0  # items in each round before the last
    guidelines: str = GUIDELINES
    seed: int = 0
    protocol: str = Protocol.TOFUEVAL_TASK1


@dataclass(frozen=True)
class Unit:
    """What one item of the campaign is about."""

    key: str
    document_id: int
    topic_id: int | None = None
    sentence_id: int | None = None
    summary_ids: tuple[int, ...] = ()


def candidate_units(project: Project, plan: Plan) -> list[Unit]:
    """The items the plan's protocol would create, in a stable order before shuffling."""
    if plan.protocol in (Protocol.TOFUEVAL_TASK1, Protocol.TOFUEVAL_TASK2):
        items = candidate_items(project, plan)
        return [Unit(f"{d}/{t}", d, t, None, tuple(ids)) for (d, t), ids in sorted(items.items())]
    rows = filtered(Summary.objects.annotatable().filter(project=project, edit__isnull=True, seed__isnull=True), plan)
    if plan.protocol == Protocol.SPANS:
        values = rows.values_list("pk", "document_id", "topic_id").order_by("pk")
        return [Unit(f"summary:{pk}", d, t, None, (pk,)) for pk, d, t in values]
    values = rows.values_list("sentences__pk", "pk", "document_id", "topic_id").order_by("pk", "sentences__index")
    return [Unit(f"sentence:{s}", d, t, s, (pk,)) for s, pk, d, t in values if s is not None]


def filtered(rows, plan: Plan):
    if plan.datasets:
        rows = rows.filter(document__dataset__in=plan.datasets)
    if plan.splits:
        rows = rows.filter(document__split__in=plan.splits)
    if plan.systems:
        rows = rows.filter(system__in=plan.systems)
    return rows


NOTHING_TO_ANNOTATE = {
    None: "No summaries with a topic and a known document match these filters.",
    Protocol.AMBIGUITY: "No summary sentences of a known document match these filters.",
    Protocol.SPANS: "No summaries of a known document match these filters.",
}


def candidate_items(project: Project, plan: Plan) -> dict[tuple[int, int], list[int]]:
    """(document, topic) -> its annotatable summaries that pass the filters."""
    rows = filtered(Summary.objects.annotatable().filter(project=project, topic__isnull=False), plan)
    items = defaultdict(list)
    for summary_id, document_id, topic_id in rows.values_list("pk", "document_id", "topic_id").order_by("pk"):
        items[(document_id, topic_id)].append(summary_id)
    return items


def check(project: Project, plan: Plan) -> None:
    errors = {}
    if Campaign.objects.filter(project=project, slug=plan.slug).exists():
        errors["slug"] = f"The project already has a campaign {plan.slug!r}."
    if not plan.annotators:
        errors["annotators"] = "Choose at least one annotator."
    elif plan.per_item + (1 if plan.double_share else 0) > len(plan.annotators):
        errors["per_item"] = "More annotators per item than annotators chosen."
    if not plan.rounds:
        errors["rounds"] = "Name at least one round (e.g. pilot-1, main)."
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def create_campaign(*, project: Project, plan: Plan) -> Campaign:
    check(project, plan)
    units = candidate_units(project, plan)
    if not units:
        raise ValidationError({"__all__": NOTHING_TO_ANNOTATE.get(plan.protocol, NOTHING_TO_ANNOTATE[None])})
    rng = random.Random(plan.seed)
    rng.shuffle(units)
    taxonomy = None
    if plan.protocol in TAXONOMIES:
        taxonomy = Taxonomy.objects.filter(slug=TAXONOMIES[plan.protocol]).order_by("-version").first()
    campaign = Campaign.objects.create(
        project=project,
        slug=plan.slug,
        name=plan.name,
        protocol=plan.protocol,
        guidelines=plan.guidelines,
        annotators_per_item=plan.per_item,
        double_share=plan.double_share,
        rounds=plan.rounds,
        status=Campaign.Status.ACTIVE,
        taxonomy=taxonomy,
    )
    load = {user.pk: 0 for user in plan.annotators}
    users = {user.pk: user for user in plan.annotators}
    doubled = {unit.key for unit in units[: round(plan.double_share * len(units))]}
    for position, unit in enumerate(units):
        item = make_item(campaign, unit, round_of(position, plan))
        for user_id in least_loaded(load, plan.per_item + (unit.key in doubled), rng):
            services.assign(item=item, annotator=users[user_id], seed=rng.randrange(2**31))
            load[user_id] += 1
    return campaign


def round_of(position: int, plan: Plan) -> str:
    """The first pilot_items items go to the first round, the next ones to the second, ..., the rest to the last."""
    last = len(plan.rounds) - 1
    return plan.rounds[min(position // plan.pilot_items, last) if plan.pilot_items else last]


def make_item(campaign: Campaign, unit: Unit, round_name: str) -> Item:
    item = Item.objects.create(
        campaign=campaign,
        key=unit.key,
        document_id=unit.document_id,
        topic_id=unit.topic_id,
        sentence_id=unit.sentence_id,
        round=round_name,
    )
    item.summaries.set(unit.summary_ids)
    return item


def least_loaded(load: dict[int, int], count: int, rng: random.Random) -> list[int]:
    """`count` distinct annotators with the fewest items so far (ties in a seeded random order)."""
    order = list(load)
    rng.shuffle(order)
    return sorted(order, key=lambda user_id: load[user_id])[:count]
