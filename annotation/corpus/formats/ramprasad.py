"""The span release of Ramprasad et al. 2024: inconsistent spans of dialogue summaries.

One CSV row per (dialogue, model): the summary, whether it has an error, and parallel
Python-literal lists: the inconsistent spans, the evidence for each ("Not found" when the
information is unsupported), its error class (intrinsic / extrinsic) and its category.
"""

import re
from pathlib import Path

from annotation.corpus import text as textlib
from annotation.corpus.formats.base import Parsed, Source
from annotation.corpus.formats.release import (
    add_record,
    csv_rows,
    literal_list,
    record,
    release_campaign,
    release_judgment,
)

CAMPAIGN = "release-ramprasad"
TAXONOMY = {"slug": "ramprasad-categories", "version": 1}
COLUMNS = (
    "docid",
    "model",
    "nonfactual_spans",
    "evidence",
    "summary",
    "factual_error",
    "error_type",
    "dialogue",
    "origin",
    "linguistic_categories",
)
PARALLEL = ("nonfactual_spans", "evidence", "error_type", "linguistic_categories")
NOT_FOUND = "notfound"


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


CATEGORY_CODES = {
    _key(code): code
    for code in (
        "circumstantial_inference",
        "logical_error",
        "world_knowledge",
        "referential_error",
        "figurative_misinterpretation",
        "nonsensical",
    )
}
ERROR_CLASSES = {
    "intrinsicerror": "intrinsic",
    "intrinsic": "intrinsic",
    "extrinsicerror": "extrinsic",
    "extrinsic": "extrinsic",
}
FACTUAL_ERROR = {"1": True, "0": False, "true": True, "false": False}


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    documents: dict[str, tuple[list[dict], Source]] = {}
    summaries: dict[str, tuple[dict, Source]] = {}
    if paths:
        add_record(
            release_campaign(CAMPAIGN, "Ramprasad et al. release labels", "spans", dict(TAXONOMY)),
            Source(paths[0].name),
            parsed,
        )
    for path in paths:
        for line, row in csv_rows(path, COLUMNS, parsed):
            add_row(row, Source(path.name, line), documents, summaries, parsed)
    return parsed


def add_row(row: dict[str, str], source: Source, documents: dict, summaries: dict, parsed: Parsed) -> None:
    """The row's document (once per docid) and its summary with item; an identical repeat is skipped."""
    doc_id, model, text = row["docid"].strip(), row["model"].strip(), row["summary"].strip()
    for name, value in (("docid", doc_id), ("model", model), ("summary", text)):
        if not value:
            parsed.fail(source, name, "is empty")
    turns = textlib.parse_dialogue(row["dialogue"])
    if not turns:
        parsed.fail(source, "dialogue", "is empty")
    has_error = FACTUAL_ERROR.get(row["factual_error"].strip().lower())
    if has_error is None:
        parsed.fail(source, "factual_error", f"must be 1 or 0; got {row['factual_error']!r}")
    lists = parallel_lists(row, source, parsed)
    if not (doc_id and model and text and turns) or has_error is None or lists is None:
        return
    if not same_document(doc_id, turns, row["origin"].strip(), source, documents, parsed):
        return
    summary_id = f"{doc_id}/{model}"
    judgments = [release_judgment(CAMPAIGN, summary_id, "has_inconsistency", "summary", has_error)]
    judgments += span_judgments(summary_id, text, turns, lists, source, parsed)
    summary = record(
        "summary", id=summary_id, document=doc_id, system=model, origin="release", text=text, judgments=judgments
    )
    if summary_id in summaries:
        first, first_source = summaries[summary_id]
        if first != summary:
            parsed.fail(
                source, "model", f"summary {summary_id!r} appears at line {first_source.line} with other labels"
            )
        return
    summaries[summary_id] = (summary, source)
    add_record(summary, source, parsed)
    add_record(
        record("item", campaign=CAMPAIGN, key=summary_id, document=doc_id, summaries=[summary_id]), source, parsed
    )


def same_document(
    doc_id: str, turns: list[dict], dataset: str, source: Source, documents: dict, parsed: Parsed
) -> bool:
    """Add the document on first sight; later rows of the same docid must carry the same dialogue."""
    if doc_id in documents:
        first_turns, first_source = documents[doc_id]
        if first_turns != turns:
            parsed.fail(source, "dialogue", f"docid {doc_id} has a different dialogue at line {first_source.line}")
            return False
        return True
    documents[doc_id] = (turns, source)
    document = record(
        "document", id=doc_id, dataset=dataset, kind="dialogue", turns=turns, text=textlib.turns_text(turns)
    )
    add_record(document, source, parsed)
    return True


def parallel_lists(row: dict[str, str], source: Source, parsed: Parsed) -> dict[str, list[str]] | None:
    lists = {name: literal_list(row[name], source, name, parsed) for name in PARALLEL}
    if any(value is None for value in lists.values()):
        return None
    lengths = {name: len(value) for name, value in lists.items()}
    if len(set(lengths.values())) > 1:
        parsed.fail(source, "nonfactual_spans", f"the parallel lists differ in length: {lengths}")
        return None
    return lists


# -- spans --------------------------------------------------------------------------------------------
def span_judgments(item: str, text: str, turns: list[dict], lists: dict, source: Source, parsed: Parsed) -> list[dict]:
    """One judgment per span, located in the summary without overlapping an earlier span."""
    judgments, taken = [], []
    rows = zip(*(lists[name] for name in PARALLEL), strict=True)
    for k, (span, evidence, error_class, category) in enumerate(rows):
        value = span_value(span, evidence, error_class, category, turns, source, parsed)
        if value is None:
            continue
        where = textlib.find_span(text, span, taken)
        if where is None:
            parsed.warn(source, "nonfactual_spans", f"span {span!r} is not in the summary; kept without offsets")
        else:
            taken.append(where)
            value["start"], value["end"] = where
        judgments.append(release_judgment(CAMPAIGN, item, "span", f"summary/span:{k}", value, taxonomy=dict(TAXONOMY)))
    return judgments


def span_value(
    span: str, evidence: str, error_class: str, category: str, turns: list[dict], source: Source, parsed: Parsed
) -> dict | None:
    code = CATEGORY_CODES.get(_key(category))
    if code is None:
        parsed.fail(source, "linguistic_categories", f"unknown category {category!r}")
    klass = ERROR_CLASSES.get(_key(error_class)) if error_class.strip() else None
    if error_class.strip() and klass is None:
        parsed.fail(source, "error_type", f"must be Intrinsic_Error or Extrinsic_Error; got {error_class!r}")
    if code is None or (error_class.strip() and klass is None):
        return None
    found = bool(evidence.strip()) and _key(evidence) != NOT_FOUND
    return {
        "start": None,
        "end": None,
        "text": span,
        "category": code,
        "error_class": klass,
        "evidence": {
            "text": evidence.strip() if found else None,
            "turns": textlib.turns_containing(turns, evidence) if found else [],
        },
    }
