"""Span-level inconsistencies (Ramprasad et al. 2024, section 2.3 and appendix A).

The unit is one summary, beside its source. The annotator marks the minimal spans of the summary
that the source does not support; for each: a category (the campaign's "ramprasad-categories"
taxonomy), intrinsic or extrinsic, the evidence (turns of the dialogue, or sentences of a source
that is not a dialogue; or none: unsupported information) and an optional note.

Offsets are Unicode code points of `Summary.text` (Python str indices, as everywhere in
Attest), start inclusive, end exclusive. The browser counts UTF-16 units and converts
(static/js/spans.js); the server checks text[start:end] == the span's text on every save and
submit and refuses a span that does not match.

Draft keys: `spans`, a JSON string holding a list of {"id", "start", "end", "text",
"category", "error_class", "evidence": [unit indexes, 0-based], "no_evidence", "note"} (ids are
stable across edits and never reused within an assignment); `no_inconsistency` ("on": the
annotator confirms the summary has none); `refused` (written by `clean_draft`: messages for the
spans it could not keep); `_focus`.

Judgments, in the shape the release importer writes (annotation/corpus/formats/ramprasad.py):
"has_inconsistency" on the summary (true iff it has a span) and one "span" per span, target
"summary:<pk>/span:<id>", value {"start", "end", "text", "category", "error_class", "evidence":
{"text", "turns"}}, the note as its explanation. A span a correction removes keeps its judgment
with value null (its earlier value stays as a revision); agreement and statistics skip nulls.
"""

import json
from collections import Counter, defaultdict
from functools import lru_cache

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.agreement import metrics
from annotation.corpus import text as textlib
from annotation.protocols import services
from annotation.protocols.models import Adjudication, Assignment, Judgment, Protocol, Taxonomy, TaxonomyLabel

TEMPLATE = "protocols/spans.html"
TAXONOMY = "ramprasad-categories"
ERROR_CLASSES = {
    "intrinsic": ("Intrinsic", "It misstates or twists something the source says."),
    "extrinsic": ("Extrinsic", "It adds something the source does not say."),
}
MAX_SPANS = 100
MAX_SPANS_JSON = 200_000  # characters of the draft's `spans`
MAX_NOTE = 2000
MAX_ID = 10**9


def taxonomy_of(campaign) -> Taxonomy | None:
    """The campaign's taxonomy version, else the newest Ramprasad one."""
    if campaign.taxonomy_id and campaign.taxonomy.slug == TAXONOMY:
        return campaign.taxonomy
    return Taxonomy.objects.filter(slug=TAXONOMY).order_by("-version").first()


def labels_of(taxonomy: Taxonomy | None) -> list[TaxonomyLabel]:
    return list(TaxonomyLabel.objects.filter(taxonomy=taxonomy).order_by("order")) if taxonomy else []


def summary_of(assignment: Assignment):
    return assignment.item.summaries.order_by("pk").first()


def is_dialogue(document) -> bool:
    return document.kind == "dialogue" and bool(document.turns)


def evidence_units(document) -> list[dict]:
    """What evidence can point at: the dialogue's turns, else the source's sentences; 0-based."""
    if is_dialogue(document):
        return [
            {"index": i, "speaker": t.get("speaker", ""), "text": t.get("text", "")}
            for i, t in enumerate(document.turns)
        ]
    return [{"index": n, "speaker": "", "text": text} for n, text in enumerate(sentences(document.text))]


@lru_cache(maxsize=16)
def sentences(text: str) -> tuple[str, ...]:
    """Cached: every autosave checks evidence indexes, and splitting a long transcript takes a while."""
    return tuple(s.text for s in textlib.split_sentences(text))


def unit_text(unit: dict) -> str:
    return f"{unit['speaker']}: {unit['text']}" if unit["speaker"] else unit["text"]


# -- the draft ----------------------------------------------------------------------------------------
def offsets_problem(text: str, start: int, end: int, quoted: str) -> str | None:
    """Why (start, end, quoted) is not a span of `text`, or None when text[start:end] == quoted."""
    if not 0 <= start < end <= len(text):
        return f"its offsets {start}–{end} are outside the summary ({len(text)} characters); mark it again."
    if text[start:end] != quoted:
        return f"the summary reads “{text[start:end]}” at {start}–{end}, not “{quoted}”; mark it again."
    return None


def clean_span(raw, text: str, n_units: int, codes: set[str]) -> tuple[dict | None, str | None]:
    """One untrusted span -> (span, None), or (None, why it is refused)."""
    if not isinstance(raw, dict):
        return None, "it could not be read; mark it again."
    ident, start, end, quoted = (raw.get(k) for k in ("id", "start", "end", "text"))
    if not all(type(v) is int for v in (ident, start, end)) or not isinstance(quoted, str) or not 0 <= ident < MAX_ID:
        return None, "it could not be read; mark it again."
    problem = offsets_problem(text, start, end, quoted)
    if problem:
        return None, problem
    category, error_class = raw.get("category") or "", raw.get("error_class") or ""
    if not isinstance(category, str) or not isinstance(error_class, str):
        return None, "it could not be read; mark it again."
    if category and category not in codes:
        return None, f"its category {str(category)[:50]!r} is not one of this campaign's."
    if error_class and error_class not in ERROR_CLASSES:
        return None, "it must be intrinsic or extrinsic."
    evidence = raw.get("evidence") or []
    if not isinstance(evidence, list) or not all(type(i) is int and 0 <= i < n_units for i in evidence):
        return None, "its evidence points at a part of the source that does not exist."
    note = raw.get("note") if isinstance(raw.get("note"), str) else ""
    span = {"id": ident, "start": start, "end": end, "text": quoted, "category": category}
    span |= {
        "error_class": error_class,
        "evidence": sorted(set(evidence)),
        "no_evidence": raw.get("no_evidence") is True,
    }
    return span | {"note": note[:MAX_NOTE]}, None


def parse_spans(value, text: str, n_units: int, codes: set[str]) -> tuple[list[dict], list[str]]:
    """The draft's `spans` (a JSON string, or its list) -> (valid spans in text order, refusals)."""
    if isinstance(value, str):
        if not value.strip():
            return [], []
        if len(value) > MAX_SPANS_JSON:
            return [], ["The spans were too large to save; reload the page."]
        try:
            value = json.loads(value)
        except ValueError:
            return [], ["The spans could not be read; reload the page."]
    if not isinstance(value, list):
        return [], ["The spans could not be read; reload the page."] if value else []
    refused = [f"At most {MAX_SPANS} spans per summary; the rest were not kept."] if len(value) > MAX_SPANS else []
    found, ids = [], set()
    for n, raw in enumerate(value[:MAX_SPANS], 1):
        span, problem = clean_span(raw, text, n_units, codes)
        if span and span["id"] in ids:
            span, problem = None, "it repeats another span's id; mark it again."
        if problem:
            refused.append(f"Span {n} was not kept: {problem}")
            continue
        ids.add(span["id"])
        found.append(span)
    kept = []
    for span in sorted(found, key=lambda s: (s["start"], s["end"])):
        if kept and span["start"] < kept[-1]["end"]:
            refused.append(f"Span “{span['text']}” overlaps span “{kept[-1]['text']}”: spans may not overlap.")
            continue
        kept.append(span)
    return kept, refused


def dump(spans: list[dict]) -> str:
    """The draft's `spans` string; compact, non-ASCII kept, as JSON.stringify writes it in spans.js."""
    return json.dumps(spans, ensure_ascii=False, separators=(",", ":"))


def draft_context(assignment: Assignment) -> tuple[str, list[dict], set[str]]:
    summary = summary_of(assignment)
    codes = {label.code for label in labels_of(taxonomy_of(assignment.item.campaign))}
    return (summary.text if summary else ""), evidence_units(assignment.item.document), codes


def clean_draft(raw: dict, assignment: Assignment) -> dict:
    """Keep this screen's keys only, with every span checked against the summary: a draft is untrusted."""
    raw = raw if isinstance(raw, dict) else {}
    text, units, codes = draft_context(assignment)
    spans, refused = parse_spans(raw.get("spans"), text, len(units), codes)
    draft = {"spans": dump(spans)} if spans else {}
    if refused:
        draft["refused"] = refused
    if raw.get("no_inconsistency") == "on":
        draft["no_inconsistency"] = "on"
    if isinstance(raw.get("_focus"), str) and raw["_focus"]:
        draft["_focus"] = raw["_focus"][:100]
    return draft


def validate(draft: dict, text: str, n_units: int, codes: set[str]) -> tuple[list[dict], dict[str, str]]:
    """The draft's spans, and a message per field for everything a submission still lacks."""
    spans, refused = parse_spans(draft.get("spans"), text, n_units, codes)
    refused = [str(m) for m in draft.get("refused") or []] + refused
    errors = {"spans": " ".join(refused)} if refused else {}
    for n, span in enumerate(spans, 1):
        missing = [
            what
            for what, lacking in (
                ("its category", not span["category"]),
                ("intrinsic or extrinsic", not span["error_class"]),
                ("its evidence (or that there is none)", not span["evidence"] and not span["no_evidence"]),
            )
            if lacking
        ]
        if missing:
            errors[f"span-{span['id']}"] = f"Span {n} (“{span['text']}”): choose {', '.join(missing)}."
        elif span["evidence"] and span["no_evidence"]:
            errors[f"span-{span['id']}"] = f"Span {n}: it links evidence and says there is none; choose one."
    confirmed = draft.get("no_inconsistency") == "on"
    if not spans and not refused and not confirmed:
        errors["no_inconsistency"] = "Mark the inconsistent spans, or confirm that this summary has no inconsistency."
    elif spans and confirmed:
        errors["no_inconsistency"] = "You marked spans and confirmed there is no inconsistency: untick the box."
    return spans, errors


# -- submit -------------------------------------------------------------------------------------------
def judgment_value(span: dict, units: list[dict]) -> dict:
    linked = [units[i] for i in span["evidence"]]
    evidence = {"text": "\n".join(unit_text(u) for u in linked) if linked else None, "turns": span["evidence"]}
    keys = ("start", "end", "text", "category", "error_class")
    return {k: span[k] for k in keys} | {"evidence": evidence}


@transaction.atomic
def submit(*, assignment: Assignment, draft: dict, client_token: str, user) -> Assignment:
    """Record the spans and the summary-level label; idempotent on `client_token`. A correction
    updates the spans by id and sets those it removed to null, keeping every earlier value."""
    locked = Assignment.objects.select_for_update(of=("self",)).select_related("item__campaign", "item__document")
    assignment = locked.get(pk=assignment.pk)
    if assignment.item.campaign.protocol != Protocol.SPANS:
        raise ValidationError("This assignment is not a span-marking item.")
    if client_token and assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == client_token:
        return assignment
    summary, taxonomy = summary_of(assignment), taxonomy_of(assignment.item.campaign)
    if summary is None:
        raise ValidationError("This item has no summary.")
    units = evidence_units(assignment.item.document)
    spans, errors = validate(draft, summary.text, len(units), {label.code for label in labels_of(taxonomy)})
    if errors:
        raise ValidationError(errors)
    unit = {"assignment": assignment, "user": user, "summary": summary}
    kept = set()
    for span in spans:
        suffix = f"span:{span['id']}"
        kept.add(Judgment.make_target(summary=summary, suffix=suffix))
        value, note = judgment_value(span, units), span["note"].strip()
        services.record_judgment(
            **unit, dimension="span", suffix=suffix, value=value, explanation=note, taxonomy=taxonomy
        )
    for stale in Judgment.objects.filter(assignment=assignment, dimension="span").exclude(target__in=kept):
        if stale.value is not None:
            services.record_judgment(**unit, dimension="span", suffix=stale.target.partition("/")[2], value=None)
    services.record_judgment(**unit, dimension="has_inconsistency", value=bool(spans))
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    assignment.client_token = client_token or ""
    assignment.draft = draft
    assignment.save(update_fields=["status", "submitted_at", "client_token", "draft"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment


# -- the screen ---------------------------------------------------------------------------------------
def segments(text: str, spans: list[dict]) -> list[dict]:
    """The summary cut at span boundaries, for the page as served (before spans.js redraws it)."""
    cuts = sorted({0, len(text), *(s["start"] for s in spans), *(s["end"] for s in spans)})
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        inside = next((n for n, s in enumerate(spans, 1) if s["start"] <= a and b <= s["end"]), None)
        out.append({"text": text[a:b], "span": inside})
    return out


def first_free_id(assignment: Assignment, spans: list[dict]) -> int:
    """Above every id the draft or a recorded judgment used, so a new span never takes an old one's target."""
    targets = Judgment.objects.filter(assignment=assignment, dimension="span").values_list("target", flat=True)
    used = [int(t.rpartition(":")[2]) for t in targets if t.rpartition(":")[2].isdigit()]
    return max([s["id"] for s in spans] + used, default=-1) + 1


def screen(assignment: Assignment, draft: dict, errors: dict) -> dict:
    summary, taxonomy = summary_of(assignment), taxonomy_of(assignment.item.campaign)
    labels, units = labels_of(taxonomy), evidence_units(assignment.item.document)
    text = summary.text if summary else ""
    spans, refused = parse_spans(draft.get("spans"), text, len(units), {label.code for label in labels})
    names = {label.code: label.name for label in labels}
    config = {
        "text": text,
        "categories": [{"code": lb.code, "name": lb.name, "definition": lb.definition} for lb in labels],
        "classes": [{"code": code, "name": name, "definition": d} for code, (name, d) in ERROR_CLASSES.items()],
        "unitName": "turn" if is_dialogue(assignment.item.document) else "sentence",
        "firstFreeId": first_free_id(assignment, spans),
        "errors": {k: str(v) for k, v in (errors or {}).items()},
    }
    return {
        "summary": summary,
        "taxonomy": taxonomy,
        "units": units,
        "segments": segments(text, spans),
        "spans": [s | {"number": n, "category_name": names.get(s["category"], "")} for n, s in enumerate(spans, 1)],
        "confirmed": draft.get("no_inconsistency") == "on",
        "refused": [str(m) for m in draft.get("refused") or []] + refused,
        "spans_config": config,
        "unit_name": config["unitName"],
    }


# -- statistics (Figures 2-3) -------------------------------------------------------------------------
ADJUDICATED = "adjudicated"


def label_rows(campaign) -> tuple[list[tuple], str]:
    """(summary id, annotator, dimension, value) of the campaign's labels, and where they come
    from: the adjudicated ones when there are any, else every annotator's."""
    dimensions = ("has_inconsistency", "span")
    adjudicated = Adjudication.objects.filter(item__campaign=campaign, dimension__in=dimensions)
    if adjudicated.exists():
        return [
            (s, ADJUDICATED, d, v) for s, d, v in adjudicated.values_list("summary_id", "dimension", "value")
        ], ADJUDICATED
    return annotator_rows(campaign, dimensions), "annotators"


def annotator_rows(campaign, dimensions) -> list[tuple]:
    rows = Judgment.objects.filter(
        assignment__item__campaign=campaign, assignment__stage="annotate", dimension__in=dimensions
    ).values_list("summary_id", "assignment__annotator_id", "dimension", "value")
    return list(rows)


def collect(rows: list[tuple]) -> tuple[dict, dict]:
    """verdicts[(summary, annotator)] = bool; spans[(summary, annotator)] = [span value, ...]; nulls skipped."""
    verdicts, spans = {}, defaultdict(list)
    for summary_id, annotator, dimension, value in rows:
        if value is None or summary_id is None:
            continue
        if dimension == "has_inconsistency":
            verdicts[(summary_id, annotator)] = bool(value)
        else:
            spans[(summary_id, annotator)].append(value)
    return verdicts, spans


def figures(verdicts: dict, spans: dict, codes: list[str]) -> dict:
    """One row of the tables: summaries, share with an inconsistency, span category shares."""
    values = [v for found in spans.values() for v in found]
    categories = Counter(v.get("category") for v in values)
    n, flagged = len(verdicts), sum(verdicts.values())
    return {
        "summaries": len({s for s, _ in verdicts}),
        "labels": n,
        "with_inconsistency": flagged,
        "share": flagged / n if n else None,
        "spans": len(values),
        "categories": [
            {"code": c, "count": categories[c], "share": categories[c] / len(values) if values else None} for c in codes
        ],
        "intrinsic": sum(v.get("error_class") == "intrinsic" for v in values),
        "no_evidence": sum(not (v.get("evidence") or {}).get("turns") for v in values),
    }


def only(found: dict, summary_ids: set) -> dict:
    return {key: value for key, value in found.items() if key[0] in summary_ids}


def agreement(verdicts: dict, spans: dict, texts: dict) -> dict:
    """Krippendorff's alpha on the summary label and pairwise span F1, between annotators.

    Every annotator who labelled a summary counts for its span F1; one who found no span marked nothing."""
    ratings = [(s, a, v) for (s, a), v in verdicts.items()]
    marked = [
        (s, a, [(v["start"], v["end"]) for v in spans.get((s, a), []) if v.get("start") is not None])
        for (s, a) in verdicts
    ]
    return {
        "alpha": metrics.krippendorff_alpha(ratings, "nominal"),
        "span_f1": metrics.pairwise_span_f1(marked, texts),
    }


def statistics(campaign) -> dict:
    """Per system and overall: summaries, share with an inconsistency, category shares (Ramprasad
    et al., Figures 2-3), alpha and span F1 between annotators, and the spans without offsets."""
    from annotation.corpus.models import Summary

    rows, source = label_rows(campaign)
    judged = rows if source != ADJUDICATED else annotator_rows(campaign, ("has_inconsistency", "span"))
    summaries = {
        s.pk: s
        for s in Summary.objects.filter(pk__in={r[0] for r in rows + judged}).only("system", "text", "external_id")
    }
    labels = labels_of(campaign.taxonomy if campaign.taxonomy_id else taxonomy_of(campaign))
    codes = [label.code for label in labels]
    verdicts, spans = collect(rows)
    judged_verdicts, judged_spans = collect(judged)
    texts = {pk: s.text for pk, s in summaries.items()}

    def table_row(system):
        keep = {pk for pk, s in summaries.items() if system is None or s.system == system}
        row = figures(only(verdicts, keep), only(spans, keep), codes)
        return row | {"system": system} | agreement(only(judged_verdicts, keep), only(judged_spans, keep), texts)

    systems = sorted({summaries[s].system for s, _ in verdicts})
    unlocated = [
        {"summary": summaries[s].external_id, "system": summaries[s].system, "text": v.get("text", "")}
        for (s, _), found in sorted(
            judged_spans.items(), key=lambda kv: (summaries[kv[0][0]].external_id, str(kv[0][1]))
        )
        for v in found
        if v.get("start") is None
    ]
    return {
        "source": source,
        "categories": labels,
        "by_system": [table_row(system) for system in systems],
        "overall": table_row(None),
        "unlocated": unlocated,
    }


def results(campaign) -> dict:
    """`statistics` as plain data (for `manage.py results --json`)."""
    import dataclasses

    tables = statistics(campaign)
    tables["categories"] = [{"code": label.code, "name": label.name} for label in tables["categories"]]
    for row in [*tables["by_system"], tables["overall"]]:
        row["alpha"], row["span_f1"] = dataclasses.asdict(row["alpha"]), dataclasses.asdict(row["span_f1"])
    return tables
