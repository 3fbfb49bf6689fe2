"""Ambiguity statistics (MADISSE Table 2), agreement, and ambiguity x consistency.

A sentence's final label is its adjudication when an expert decided it; otherwise the answer
when every annotator who submitted gave the same one ("agreed", or "single" for one annotator,
as in an imported release); otherwise it is "disputed" and waits for adjudication. Counts use
final labels only and say how many are still disputed.

`manage.py results --json` prints the same tables (see protocols/results.py).
"""

import dataclasses
import re
from collections import Counter, defaultdict

from annotation.agreement import metrics
from annotation.corpus.models import SummarySentence
from annotation.protocols.models import Adjudication, Assignment, Campaign, Judgment, TaxonomyLabel

DIMENSIONS = ("ambiguous", "ambiguity_types")


def _answers(campaign: Campaign) -> dict[int, dict[int, dict]]:
    """item -> annotator -> {"ambiguous": bool, "types": [codes]} from submitted assignments."""
    out: dict[int, dict[int, dict]] = defaultdict(dict)
    rows = Judgment.objects.filter(
        assignment__item__campaign=campaign,
        assignment__stage="annotate",
        assignment__status=Assignment.Status.SUBMITTED,
        dimension__in=DIMENSIONS,
    ).values_list("assignment__item_id", "assignment__annotator_id", "dimension", "value")
    for item_id, annotator_id, dimension, value in rows:
        answer = out[item_id].setdefault(annotator_id, {"ambiguous": None, "types": []})
        if dimension == "ambiguous":
            answer["ambiguous"] = value
        else:
            answer["types"] = list(value or [])
    return out


def _adjudicated(campaign: Campaign) -> dict[int, dict]:
    out: dict[int, dict] = defaultdict(lambda: {"ambiguous": None, "types": []})
    for item_id, dimension, value in Adjudication.objects.filter(
        item__campaign=campaign, dimension__in=DIMENSIONS
    ).values_list("item_id", "dimension", "value"):
        if dimension == "ambiguous":
            out[item_id]["ambiguous"] = value
        else:
            out[item_id]["types"] = list(value or [])
    return {k: v for k, v in out.items() if v["ambiguous"] is not None}


def final_labels(campaign: Campaign) -> dict[int, dict]:
    """item -> {"ambiguous": bool | None, "types": [codes], "basis": adjudicated|agreed|single|disputed}."""
    answers, decided = _answers(campaign), _adjudicated(campaign)
    labels = {}
    for item_id in set(answers) | set(decided):
        if item_id in decided:
            labels[item_id] = {**decided[item_id], "basis": "adjudicated"}
            continue
        given = list(answers[item_id].values())
        distinct = {(a["ambiguous"], tuple(a["types"][:1]) if a["ambiguous"] else ()) for a in given}
        if len(distinct) == 1:
            labels[item_id] = {**given[0], "basis": "single" if len(given) == 1 else "agreed"}
        else:
            labels[item_id] = {"ambiguous": None, "types": [], "basis": "disputed"}
    return labels


def category(code: str) -> str:
    return code.split(".")[0]


def table2(campaign: Campaign) -> dict:
    """Annotated sentences, ambiguous sentences and the share of each category and type, per dataset."""
    labels = final_labels(campaign)
    datasets = dict(campaign.items.values_list("pk", "document__dataset"))
    names = dict(TaxonomyLabel.objects.filter(taxonomy__slug="madisse-ambiguity").values_list("code", "name"))
    groups: dict[str, list[dict]] = defaultdict(list)
    for item_id, label in labels.items():
        groups[datasets.get(item_id) or "(no dataset)"].append(label)
    if len(groups) > 1:
        groups["all"] = list(labels.values())
    rows = []
    for dataset in sorted(groups, key=lambda d: (d == "all", d)):
        found = groups[dataset]
        decided = [x for x in found if x["basis"] != "disputed"]
        ambiguous = [x for x in decided if x["ambiguous"]]
        categories = Counter(c for x in ambiguous for c in {category(code) for code in x["types"]})
        types = Counter(code for x in ambiguous for code in set(x["types"]))
        rows.append(
            {
                "dataset": dataset,
                "sentences": len(found),
                "decided": len(decided),
                "disputed": len(found) - len(decided),
                "ambiguous": len(ambiguous),
                "ambiguous_share": _share(len(ambiguous), len(decided)),
                "categories": [
                    {
                        "code": c,
                        "name": names.get(c, c),
                        "n": categories[c],
                        "share": _share(categories[c], len(ambiguous)),
                    }
                    for c in CATEGORIES
                ],
                "types": [
                    {"code": code, "name": names.get(code, code), "n": n, "share": _share(n, len(ambiguous))}
                    for code, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))
                ],
            }
        )
    basis = Counter(label["basis"] for label in labels.values())
    return {"rows": rows, "basis": dict(basis), "categories": [names.get(c, c) for c in CATEGORIES]}


CATEGORIES = ("implicit_reasoning", "meaning", "context", "other_evaluability")


def _share(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def agreement(campaign: Campaign) -> dict:
    """Cohen's kappa (mean over annotator pairs) on the binary label and on the category, where
    "not ambiguous" counts as a category of its own, so every sentence takes part."""
    binary, categories = [], []
    for item_id, by_annotator in _answers(campaign).items():
        for annotator_id, answer in by_annotator.items():
            if answer["ambiguous"] is None:
                continue
            binary.append((item_id, annotator_id, bool(answer["ambiguous"])))
            first = category(answer["types"][0]) if answer["ambiguous"] and answer["types"] else "not_ambiguous"
            categories.append((item_id, annotator_id, first))
    return {
        "binary": metrics.cohen_kappa(binary),
        "category": metrics.cohen_kappa(categories),
        "binary_percent": metrics.percent_agreement(binary),
    }


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def consistency_crosstab(campaign: Campaign) -> dict | None:
    """Final ambiguity x the consistency label the same sentence (same document, same text) has in
    the project's factuality campaigns (TofuEval), or None when no sentence has one."""
    labels = final_labels(campaign)
    items = {
        row["pk"]: row
        for row in campaign.items.filter(pk__in=list(labels), sentence__isnull=False).values(
            "pk", "document_id", "sentence__summary__text", "sentence__start", "sentence__end"
        )
    }
    wanted = defaultdict(list)  # (document, normalised text) -> items
    for item_id, row in items.items():
        text = row["sentence__summary__text"][row["sentence__start"] : row["sentence__end"]]
        wanted[(row["document_id"], _normal(text))].append(item_id)
    documents = {document for document, _ in wanted}
    verdicts: dict[tuple, set] = defaultdict(set)
    sentences = SummarySentence.objects.filter(summary__document_id__in=documents).exclude(
        summary__items__campaign=campaign
    )
    by_sentence = {}
    for pk, document_id, text in sentences.values_list("pk", "summary__document_id", "text"):
        key = (document_id, _normal(text))
        if key in wanted:
            by_sentence[pk] = key
    if not by_sentence:
        return None
    adjudicated = dict(
        Adjudication.objects.filter(sentence_id__in=list(by_sentence), dimension="consistency").values_list(
            "sentence_id", "value"
        )
    )
    judged = Judgment.objects.filter(
        sentence_id__in=list(by_sentence),
        dimension="consistency",
        assignment__status=Assignment.Status.SUBMITTED,
    ).values_list("sentence_id", "value")
    for sentence_id, value in judged:
        if sentence_id not in adjudicated:
            verdicts[by_sentence[sentence_id]].add(value)
    for sentence_id, value in adjudicated.items():
        verdicts[by_sentence[sentence_id]] = {value}
    columns = ("consistent", "inconsistent", "mixed", "no label")
    table = {row: dict.fromkeys(columns, 0) for row in ("ambiguous", "not ambiguous", "disputed")}
    for key, item_ids in wanted.items():
        found = verdicts.get(key, set())
        column = "no label" if not found else found.pop() if len(found) == 1 else "mixed"
        for item_id in item_ids:
            label = labels[item_id]
            row = "disputed" if label["basis"] == "disputed" else "ambiguous" if label["ambiguous"] else "not ambiguous"
            table[row][column if column in columns else "mixed"] += 1
    return {"columns": columns, "rows": [{"label": k, "cells": [v[c] for c in columns]} for k, v in table.items()]}


def results(campaign: Campaign) -> dict:
    """Everything the statistics page shows, as plain data (for `manage.py results --json`)."""
    figures = {name: dataclasses.asdict(result) for name, result in agreement(campaign).items()}
    return {"table2": table2(campaign), "agreement": figures, "consistency_crosstab": consistency_crosstab(campaign)}
