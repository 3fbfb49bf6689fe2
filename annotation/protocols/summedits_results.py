"""SummEdits statistics of a campaign, as Laban et al. (2023) Table 8, and its benchmark export.

Per domain (the `SeedSummary.domain` of each item's seed) and overall:

- N: edits whose final label is consistent or inconsistent, and the share of them consistent.
  An edit's final label is its adjudicated value when there is one, else the annotators'
  majority; a tie for the most votes makes it borderline (two people who read an edit
  differently is what SummEdits' borderline is for). Borderline edits leave the benchmark.
- IAA: Cohen's kappa between annotators on the edits two of them labelled, over all three
  labels and again after dropping every edit anyone marked borderline (the agreement registry's
  `edit_label` variants); None with a single annotator (the release).
- Seed pass rate: the share of verified seeds that passed step 1 ("seed_flawless",
  "seed_consistent", and "answers_query" when asked, all true). A seed with several verifiers
  passes by majority, a tie failing. A seed counts as verified only with both a flawless and a
  consistency answer, so the release (which only restates that its seeds are consistent) has
  no rate.
- Borderline rate: the share of labelled edits whose final label is borderline.
- Edit types: among inconsistent edits that carry types, the share having each code (an edit
  with two codes counts for both, so shares can add up to more than 1). An edit's types are the
  adjudicated ones, else the codes a majority of its typers chose (or its only typer).
- Annotator minutes per seed and per 100 edit labels: the active time of submitted assignments
  over their number (one annotator's seed) and over the edit labels they hold; None without
  any time (the release).
"""

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db.models import F, Q

from annotation.agreement import metrics, registry
from annotation.corpus.models import EditedSummary
from annotation.llm import worddiff
from annotation.protocols.models import Adjudication, Assignment, Campaign, Item, Judgment

DECIDED = ("consistent", "inconsistent")
BORDERLINE = "borderline"
VERIFICATION = ("seed_flawless", "seed_consistent", "answers_query")
DIMENSIONS = ("edit_label", "edit_types", *VERIFICATION)


@dataclass
class Edit:
    """One edit of the campaign: everyone's labels and types, and what was adjudicated."""

    summary_id: int
    item_id: int
    labels: dict = field(default_factory=dict)  # annotator id -> label
    types: list = field(default_factory=list)  # one list of codes per typer
    adjudicated: dict = field(default_factory=dict)  # dimension -> value

    def final_label(self) -> str | None:
        if "edit_label" in self.adjudicated:
            return self.adjudicated["edit_label"]
        return majority(list(self.labels.values()))

    def final_types(self) -> list[str]:
        if "edit_types" in self.adjudicated:
            return codes(self.adjudicated["edit_types"])
        chosen = Counter(code for value in self.types for code in codes(value))
        return sorted(c for c, n in chosen.items() if n * 2 > len(self.types) or len(self.types) == 1)


def majority(labels: list) -> str | None:
    """The most common label; a tie for first place is borderline."""
    ranked = Counter(labels).most_common()
    if not ranked:
        return None
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return BORDERLINE
    return ranked[0][0]


def codes(value) -> list[str]:
    values = value if isinstance(value, list) else [value] if value else []
    return list(dict.fromkeys(str(v) for v in values))


def passed(answers: dict) -> bool | None:
    """One verifier's step 1: None when it is not a verification (no flawless or consistency answer)."""
    if "seed_flawless" not in answers or "seed_consistent" not in answers:
        return None
    return all(value is True or value == "yes" for value in answers.values())


# -- reading the campaign -------------------------------------------------------------------------
@dataclass
class Labels:
    domains: dict  # item id -> domain
    edits: dict  # summary id -> Edit
    verifications: dict  # item id -> [pass?, ...] per verifier
    ratings: list  # edit_label as the agreement registry's rows {"unit", "annotator", "value"}, plus "item"


def read(campaign: Campaign) -> Labels:
    domains = dict(
        Item.summaries.through.objects.filter(item__campaign=campaign, summary__seed__isnull=False).values_list(
            "item_id", "summary__seed__domain"
        )
    )
    labels = Labels(domains, {}, defaultdict(list), [])
    answers = defaultdict(dict)  # (item, annotator) -> {dimension: value}
    rows = (
        Judgment.objects.filter(assignment__item__campaign=campaign, dimension__in=DIMENSIONS)
        .filter(Q(assignment__stage="annotate") | Q(assignment__stage="edit_typing", dimension="edit_types"))
        .values(
            "dimension",
            "summary_id",
            "value",
            item_id=F("assignment__item_id"),
            annotator=F("assignment__annotator_id"),
        )
    )
    for r in rows.order_by("pk"):
        if r["dimension"] in VERIFICATION:
            answers[(r["item_id"], r["annotator"])][r["dimension"]] = r["value"]
        elif r["summary_id"] is not None:
            edit = labels.edits.setdefault(r["summary_id"], Edit(r["summary_id"], r["item_id"]))
            if r["dimension"] == "edit_label":
                edit.labels[r["annotator"]] = r["value"]
                unit = f"summary:{r['summary_id']}"
                labels.ratings.append(
                    {"unit": unit, "annotator": r["annotator"], "value": r["value"], "item": r["item_id"]}
                )
            else:
                edit.types.append(r["value"])
    for (item_id, _), given in answers.items():
        if (verdict := passed(given)) is not None:
            labels.verifications[item_id].append(verdict)
    decided = Adjudication.objects.filter(item__campaign=campaign, dimension__in=("edit_label", "edit_types"))
    for r in decided.exclude(summary_id=None).values("dimension", "summary_id", "value", "item_id"):
        edit = labels.edits.setdefault(r["summary_id"], Edit(r["summary_id"], r["item_id"]))
        edit.adjudicated[r["dimension"]] = r["value"]
    return labels


def minutes(campaign: Campaign) -> dict:
    """item id -> [active seconds, submitted assignments, edit labels] of its submitted assignments."""
    spent = defaultdict(lambda: [0.0, 0, 0])
    submitted = Assignment.objects.filter(item__campaign=campaign, status=Assignment.Status.SUBMITTED)
    for item_id, seconds in submitted.values_list("item_id", "active_seconds"):
        spent[item_id][0] += seconds or 0.0
        spent[item_id][1] += 1
    labelled = Judgment.objects.filter(assignment__in=submitted, dimension="edit_label")
    for item_id in labelled.values_list("assignment__item_id", flat=True):
        spent[item_id][2] += 1
    return spent


# -- the table ------------------------------------------------------------------------------------
def row(domain: str | None, items: set, labels: Labels, spent: dict) -> dict:
    edits = [e for e in labels.edits.values() if e.item_id in items]
    finals = [e.final_label() for e in edits]
    finals = [f for f in finals if f is not None]
    decided = [f for f in finals if f in DECIDED]
    inconsistent = [e for e in edits if e.final_label() == "inconsistent" and e.final_types()]
    verdicts = [majority_passed(labels.verifications[i]) for i in items if labels.verifications.get(i)]
    ratings = [r for r in labels.ratings if r["item"] in items]
    seconds, assignments, edit_labels = (sum(spent[i][k] for i in items if i in spent) for k in range(3))
    return {
        "domain": domain,
        "n_seeds": len(items),
        "n_labelled_edits": len(finals),
        "n": len(decided),
        "n_consistent": decided.count("consistent"),
        "consistent_share": share(decided.count("consistent"), len(decided)),
        "n_borderline": finals.count(BORDERLINE),
        "borderline_share": share(finals.count(BORDERLINE), len(finals)),
        "n_doubly_labelled": sum(len(e.labels) >= 2 for e in edits),
        "kappa": kappa(registry.raw(ratings)),
        "kappa_without_borderline": kappa(registry.without_borderline(ratings)),
        "n_seeds_verified": len(verdicts),
        "seed_pass_rate": share(sum(verdicts), len(verdicts)),
        "n_typed_inconsistent": len(inconsistent),
        "edit_types": type_shares(inconsistent),
        "minutes_per_seed": per(seconds / 60, assignments),
        "minutes_per_100_edit_labels": per(seconds / 60 * 100, edit_labels),
    }


def majority_passed(verdicts: list[bool]) -> bool:
    return sum(verdicts) * 2 > len(verdicts)


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def per(minutes: float, count: int) -> float | None:
    return round(minutes / count, 2) if minutes and count else None


def kappa(ratings: list) -> float | None:
    value = metrics.cohen_kappa(ratings).value
    return round(value, 4) if value is not None else None


def type_shares(edits: list[Edit]) -> list[dict]:
    counts = Counter(code for e in edits for code in e.final_types())
    return [{"code": c, "count": n, "share": share(n, len(edits))} for c, n in sorted(counts.items())]


def results(campaign: Campaign) -> dict:
    labels = read(campaign)
    spent = minutes(campaign)
    by_domain = defaultdict(set)
    for item_id in Item.objects.filter(campaign=campaign).values_list("pk", flat=True):
        by_domain[labels.domains.get(item_id, "")].add(item_id)
    return {
        "by_domain": [row(d, items, labels, spent) for d, items in sorted(by_domain.items())],
        "overall": row(None, set().union(*by_domain.values()), labels, spent),
    }


def domains(campaign: Campaign) -> list[str]:
    """The domains of the campaign's seeds."""
    seeds = Item.summaries.through.objects.filter(item__campaign=campaign, summary__seed__isnull=False)
    return sorted(set(seeds.values_list("summary__seed__domain", flat=True)))


# -- the benchmark ----------------------------------------------------------------------------------
def benchmark_lines(campaign: Campaign, domain: str | None = None) -> Iterator[str]:
    """One JSON line per edit whose final label is consistent or inconsistent, by domain, seed
    and edit id; each with its document, seed, label, types and the word diff against the seed."""
    edits = read(campaign).edits
    rows = (
        EditedSummary.objects.filter(seed__summary__items__campaign=campaign)
        .select_related("summary", "seed__summary__document")
        .order_by("seed__domain", "seed__summary__external_id", "summary__external_id")
        .distinct()
    )
    if domain is not None:
        rows = rows.filter(seed__domain=domain)
    for edited in rows.iterator(chunk_size=500):
        edit = edits.get(edited.summary_id)
        label = edit.final_label() if edit else None
        if label in DECIDED:
            yield json.dumps(line(edited, label, edit.final_types()), ensure_ascii=False) + "\n"


def line(edited: EditedSummary, label: str, types: list[str]) -> dict:
    seed, edit = edited.seed.summary, edited.summary
    return {
        "id": edit.external_id,
        "domain": edited.seed.domain,
        "document": {"id": seed.document.external_id, "text": seed.document.text},
        "seed": {"id": seed.external_id, "text": seed.text},
        "edit": edit.text,
        "label": label,
        "edit_types": types,
        "diff": worddiff.to_markup(worddiff.diff(seed.text, edit.text)),
    }
