"""TofuEval results of a campaign, as the paper's Table 6 and Figure 2: per summarizer (overall,
per dataset, per main / marginal topic) the mean summary length in words, relevance (mean and
the share rated 3-5), completeness, the share of summaries with at least one inconsistent
sentence and the sentence-level error rate; plus error-type and topic-category distributions.

Each unit's label is its adjudicated value when there is one, else the annotators' majority
(a tie counts as inconsistent: a sentence someone found unsupported is not vouched for).
Error types come from the reviewers' error typing (App. G): a type counts for a sentence when a
majority of its typers chose it (or its only typer did). Imported releases carry their types
on the annotators' own judgments; those count where no reviewer typed the sentence.
"""

from collections import Counter, defaultdict
from statistics import mean

from django.db.models import F, Q

from annotation.protocols import review
from annotation.protocols.models import Adjudication, Campaign, Item, Judgment, Protocol

PROTOCOLS = (Protocol.TOFUEVAL_TASK1, Protocol.TOFUEVAL_TASK2)  # campaigns that have these results
DIMENSIONS = ("consistency", "relevance", "topic_category", "error_types", "completeness")


def final_labels(campaign: Campaign) -> dict[tuple[str, str], list]:
    """(dimension, target) -> the values that count: the adjudication, else every annotator's."""
    values, typed = defaultdict(list), defaultdict(list)
    rows = Judgment.objects.filter(assignment__item__campaign=campaign, dimension__in=DIMENSIONS).filter(
        Q(assignment__stage="annotate") | Q(assignment__stage=review.TYPING_STAGE, dimension="error_types")
    )
    for r in rows.values(
        "dimension", "target", "value", item_id=F("assignment__item_id"), stage=F("assignment__stage")
    ):
        (typed if r["stage"] == review.TYPING_STAGE else values)[(r["dimension"], unit(r))].append(r["value"])
    values.update(typed)  # the reviewers' typing replaces any types that came with the labels
    decided = Adjudication.objects.filter(item__campaign=campaign, dimension__in=DIMENSIONS)
    for r in decided.values("dimension", "target", "value", "item_id"):
        values[(r["dimension"], unit(r))] = [r["value"]]
    if campaign.protocol == Protocol.TOFUEVAL_TASK1:
        for r in completeness_elsewhere(campaign).values("target", "value"):
            values[("completeness", r["target"])].append(r["value"])
    return values


def completeness_elsewhere(campaign: Campaign):
    """Task 2 judgments of this task 1 campaign's summaries, from the project's task 2 campaigns:
    one Table 6 needs both tasks, which TofuEval ran separately on the same summaries."""
    return Judgment.objects.filter(
        dimension="completeness",
        assignment__stage="annotate",
        assignment__item__campaign__project_id=campaign.project_id,
        assignment__item__campaign__protocol=Protocol.TOFUEVAL_TASK2,
        summary__items__campaign=campaign,
    ).distinct()


def completeness_sources(campaign: Campaign) -> list[str]:
    if campaign.protocol != Protocol.TOFUEVAL_TASK1:
        return []
    names = completeness_elsewhere(campaign).values_list("assignment__item__campaign__name", flat=True)
    return sorted(set(names))


def unit(row: dict) -> str:
    return f"item:{row['item_id']}" if row["target"] == "item" else row["target"]


def majority_inconsistent(values: list) -> bool:
    return values.count("inconsistent") >= values.count("consistent")


def summary_rows(campaign: Campaign) -> list[dict]:
    """One row per (item, summary): what the tables aggregate."""
    labels = final_labels(campaign)
    items = Item.objects.filter(campaign=campaign).select_related("document").prefetch_related("summaries__sentences")
    out = []
    for item in items:
        category = Counter(labels.get(("topic_category", f"item:{item.pk}"), [])).most_common(1)
        topic_type = {"main": "main", "marginal": "marginal", "irrelevant": "marginal"}.get(
            category[0][0] if category else None, "unknown"
        )
        for summary in item.summaries.all():
            out.append(summary_row(summary, item, topic_type, labels))
    return out


def summary_row(summary, item, topic_type: str, labels: dict) -> dict:
    sentences = [labels.get(("consistency", f"sentence:{s.pk}")) for s in summary.sentences.all()]
    judged = [majority_inconsistent(v) for v in sentences if v]
    relevance = [v for v in labels.get(("relevance", f"summary:{summary.pk}"), []) if isinstance(v, int | float)]
    completeness = [v for v in labels.get(("completeness", f"summary:{summary.pk}"), []) if isinstance(v, int | float)]
    return {
        "system": summary.system,
        "dataset": item.document.dataset if item.document else "",
        "topic_type": topic_type,
        "words": len(summary.text.split()),
        "sentences": len(judged),
        "inconsistent_sentences": sum(judged),
        "any_inconsistent": any(judged) if judged else None,
        "relevance": mean(relevance) if relevance else None,
        "relevant": mean(1.0 if v >= 3 else 0.0 for v in relevance) if relevance else None,
        "completeness": mean(completeness) if completeness else None,
    }


def aggregate(rows: list[dict], **key) -> dict:
    def avg(name):
        values = [r[name] for r in rows if r[name] is not None]
        return round(mean(values), 4) if values else None

    sentences = sum(r["sentences"] for r in rows)
    judged = [r for r in rows if r["any_inconsistent"] is not None]
    return {
        **key,
        "n_summaries": len(rows),
        "mean_words": avg("words"),
        "relevance_mean": avg("relevance"),
        "relevance_3_to_5_share": avg("relevant"),
        "completeness_mean": avg("completeness"),
        "inconsistent_summary_share": round(sum(r["any_inconsistent"] for r in judged) / len(judged), 4)
        if judged
        else None,
        "n_sentences": sentences,
        "n_inconsistent_sentences": sum(r["inconsistent_sentences"] for r in rows),
        "sentence_error_rate": round(sum(r["inconsistent_sentences"] for r in rows) / sentences, 4)
        if sentences
        else None,
    }


def results(campaign: Campaign) -> dict:
    rows = summary_rows(campaign)
    tables = {"by_system": [], "by_system_and_dataset": [], "by_system_and_topic_type": []}
    groups = {
        "by_system": lambda r: {"system": r["system"]},
        "by_system_and_dataset": lambda r: {"system": r["system"], "dataset": r["dataset"]},
        "by_system_and_topic_type": lambda r: {"system": r["system"], "topic_type": r["topic_type"]},
    }
    for table, key_of in groups.items():
        grouped = defaultdict(list)
        for r in rows:
            grouped[tuple(sorted(key_of(r).items()))].append(r)
        tables[table] = [aggregate(g, **dict(k)) for k, g in sorted(grouped.items())]
    tables["overall"] = aggregate(rows)
    tables["completeness_from"] = completeness_sources(campaign)
    tables["error_types"] = distribution(campaign, "error_types")
    tables["topic_categories"] = distribution(campaign, "topic_category")
    return tables


def distribution(campaign: Campaign, dimension: str) -> list[dict]:
    """Counts of each label over the units' final values (a list value counts each of its codes)."""
    counts = Counter()
    for (dim, _), values in final_labels(campaign).items():
        if dim != dimension:
            continue
        chosen = Counter(str(c) for v in values for c in (v if isinstance(v, list) else [v]))
        counts.update(label for label, n in chosen.items() if n * 2 > len(values) or len(values) == 1)
    total = sum(counts.values())
    return [{"label": label, "count": n, "share": round(n / total, 4)} for label, n in sorted(counts.items())]


def progress(campaign: Campaign) -> dict:
    """Per annotator: assigned, submitted, in progress, and median active minutes per submitted
    item; plus the inconsistent-labelled sentences that no confirmed review decision has settled yet."""
    from statistics import median

    from annotation.protocols.models import Assignment

    pseudonyms = dict(campaign.project.memberships.values_list("user_id", "pseudonym"))
    rows = defaultdict(lambda: {"assigned": 0, "submitted": 0, "in_progress": 0, "seconds": []})
    for a in Assignment.objects.filter(item__campaign=campaign, stage="annotate").values(
        "annotator_id", "status", "active_seconds"
    ):
        row = rows[a["annotator_id"]]
        row["assigned"] += 1
        row["submitted"] += a["status"] == Assignment.Status.SUBMITTED
        row["in_progress"] += a["status"] == Assignment.Status.IN_PROGRESS
        if a["status"] == Assignment.Status.SUBMITTED and a["active_seconds"]:
            row["seconds"].append(a["active_seconds"])
    annotators = [
        {
            "annotator": pseudonyms.get(user_id, str(user_id)),
            "assigned": r["assigned"],
            "submitted": r["submitted"],
            "in_progress": r["in_progress"],
            "open": r["assigned"] - r["submitted"],
            "median_minutes_per_item": round(median(r["seconds"]) / 60, 1) if r["seconds"] else None,
        }
        for user_id, r in rows.items()
    ]
    waiting = review.waiting_for_review(campaign)
    return {"annotators": sorted(annotators, key=lambda r: r["annotator"]), "waiting_for_review": waiting}
