"""How well an LLM judge agrees with the people (TofuEval Tables 3 and 10, SummEdits Table 9).

The human label of a sentence is its final label in the project's TofuEval task 1 campaigns
(adjudicated if reviewed, else the annotators' majority, a tie counting as inconsistent), the
imported release included. A summary is inconsistent when any of its sentences is; a
sentence-level judge is lifted to summaries the same way, as TofuEval does. Scores are balanced
accuracy (the mean of the recall of each class), so a judge that says "consistent" to
everything scores 0.5 however skewed the data. A summary-level judge run over SummEdits edits
is scored per domain against the edits' labels, borderline left out (SummEdits Table 9).
"""

from collections import Counter, defaultdict

from annotation.protocols import results
from annotation.protocols.models import Campaign, Item, Protocol

LABELS = ("consistent", "inconsistent")


def balanced_accuracy(pairs: list[tuple[str, str]]) -> float | None:
    """pairs of (human, predicted); None when a class has no human example (recall undefined)."""
    recalls = []
    for label in LABELS:
        predicted = [p for h, p in pairs if h == label]
        if not predicted:
            return None
        recalls.append(sum(p == label for p in predicted) / len(predicted))
    return round(sum(recalls) / len(recalls), 4)


def confusion(pairs: list[tuple[str, str]]) -> dict[str, dict[str, int]]:
    counts = Counter(pairs)
    return {human: {predicted: counts[(human, predicted)] for predicted in LABELS} for human in LABELS}


def score(pairs: list[tuple[str, str]]) -> dict:
    return {"n": len(pairs), "balanced_accuracy": balanced_accuracy(pairs), "confusion": confusion(pairs)}


def human_labels(project, campaign_id: int | None = None) -> tuple[dict[int, str], dict[int, dict]]:
    """sentence pk -> final human label, and summary pk -> {"dataset", "topic_type"}."""
    campaigns = Campaign.objects.filter(project=project, protocol=Protocol.TOFUEVAL_TASK1)
    if campaign_id:
        campaigns = campaigns.filter(pk=campaign_id)
    sentences, about = {}, {}
    for campaign in campaigns:
        labels = results.final_labels(campaign)
        items = Item.objects.filter(campaign=campaign).select_related("document").prefetch_related("summaries")
        for item in items:
            category = Counter(labels.get(("topic_category", f"item:{item.pk}"), [])).most_common(1)
            topic_type = {"main": "main", "marginal": "marginal", "irrelevant": "marginal"}.get(
                category[0][0] if category else None, "unknown"
            )
            for summary in item.summaries.all():
                about.setdefault(
                    summary.pk, {"dataset": item.document.dataset if item.document else "", "topic_type": topic_type}
                )
        for (dimension, target), values in labels.items():
            if dimension == "consistency" and target.startswith("sentence:") and values:
                pk = int(target.split(":")[1])
                # A sentence in several campaigns: an adjudicated or inconsistent verdict wins.
                label = "inconsistent" if results.majority_inconsistent(values) else "consistent"
                if sentences.get(pk) != "inconsistent":
                    sentences[pk] = label
    return sentences, about


def judge_scores(job) -> dict:
    """Sentence- and summary-level scores of a judge job, overall, per dataset and topic type."""
    from annotation.corpus.models import SummarySentence
    from annotation.llm.models import Unit

    human, about = human_labels(job.project, job.params.get("campaign"))
    sentence_of = dict(SummarySentence.objects.filter(summary__project=job.project).values_list("pk", "summary_id"))
    predicted_sentences, predicted_summaries = {}, {}
    for key, result in Unit.objects.filter(job=job, status=Unit.Status.DONE).values_list("key", "result"):
        kind, _, pk = key.partition(":")
        if kind == "sentence":
            predicted_sentences[int(pk)] = result["label"]
        elif kind == "summary":
            predicted_summaries[int(pk)] = result["label"]
    human_summaries = defaultdict(list)
    for pk, label in human.items():
        if pk in sentence_of:
            human_summaries[sentence_of[pk]].append(label)
    human_summary = {pk: "inconsistent" if "inconsistent" in ls else "consistent" for pk, ls in human_summaries.items()}
    if predicted_sentences and not predicted_summaries:  # lift a sentence-level judge to summaries
        lifted = defaultdict(list)
        for pk, label in predicted_sentences.items():
            lifted[sentence_of.get(pk)].append(label)
        predicted_summaries = {s: "inconsistent" if "inconsistent" in ls else "consistent" for s, ls in lifted.items()}
    sentence_pairs = [(pk, human[pk], p) for pk, p in predicted_sentences.items() if pk in human]
    summary_pairs = [(pk, human_summary[pk], p) for pk, p in predicted_summaries.items() if pk in human_summary]
    out = {
        "sentence": grouped([(sentence_of[pk], h, p) for pk, h, p in sentence_pairs], about) if sentence_pairs else None
    }
    out["summary"] = grouped(summary_pairs, about) if summary_pairs else None
    edits = summedits_labels(job.project)
    edit_pairs = [(edits[pk][1], edits[pk][0], p) for pk, p in predicted_summaries.items() if pk in edits]
    out["summedits"] = (
        {
            "overall": score([(h, p) for _, h, p in edit_pairs]),
            "by_domain": {
                d: score([(h, p) for domain, h, p in edit_pairs if domain == d])
                for d in sorted({d for d, _, _ in edit_pairs})
            },
        }
        if edit_pairs
        else None
    )
    out["unmatched"] = (
        len(predicted_sentences)
        - len(sentence_pairs)
        + (len(predicted_summaries) - len(summary_pairs) if not predicted_sentences else 0)
    )
    return out


def grouped(rows: list[tuple[int, str, str]], about: dict[int, dict]) -> dict:
    """rows of (summary pk, human, predicted) -> overall, per dataset and per topic type."""
    by = {"dataset": defaultdict(list), "topic_type": defaultdict(list)}
    for summary_pk, human, predicted in rows:
        info = about.get(summary_pk, {"dataset": "", "topic_type": "unknown"})
        for name, groups in by.items():
            groups[info[name]].append((human, predicted))
    return {
        "overall": score([(h, p) for _, h, p in rows]),
        "by_dataset": {k: score(v) for k, v in sorted(by["dataset"].items())},
        "by_topic_type": {k: score(v) for k, v in sorted(by["topic_type"].items())},
    }


def summedits_labels(project) -> dict[int, tuple[str, str]]:
    """edited summary pk -> (human label, domain), SummEdits style: the adjudicated label, else
    the annotators' majority; borderline edits and ties are left out (SummEdits section 5)."""
    from annotation.corpus.models import EditedSummary
    from annotation.protocols.models import Adjudication, Judgment

    domains = dict(EditedSummary.objects.filter(summary__project=project).values_list("summary_id", "seed__domain"))
    votes = defaultdict(list)
    rows = Judgment.objects.filter(
        dimension="edit_label", assignment__stage="annotate", summary_id__in=list(domains)
    ).values_list("summary_id", "value")
    for pk, value in rows:
        votes[pk].append(value)
    for pk, value in Adjudication.objects.filter(dimension="edit_label", summary_id__in=list(domains)).values_list(
        "summary_id", "value"
    ):
        votes[pk] = [value]
    out = {}
    for pk, values in votes.items():
        counts = Counter(values).most_common()
        if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]) or counts[0][0] not in LABELS:
            continue
        out[pk] = (counts[0][0], domains[pk])
    return out
