"""Which agreement figures each protocol dimension has, and how its judgments become ratings.

Pure: a dimension's variants turn plain judgment rows (dicts, see `Row`) into long-format
ratings (unit, annotator, value) for the functions in `metrics`. Dimensions nobody registered
(labels collected elsewhere) get one "raw" variant at the level their campaign declares.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

# A row: {"unit": str, "annotator": str, "value": ..., "summary": str | None, "round": str, "dataset": str}
Row = dict
Rating = tuple[str, str, object]

METRICS_BY_LEVEL = {
    "nominal": ("percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"),
    "ordinal": ("percent_agreement", "krippendorff_alpha"),
    "interval": ("krippendorff_alpha",),
    "spans": ("pairwise_span_f1",),
}


@dataclass(frozen=True)
class Variant:
    name: str
    level: str
    transform: Callable[[list[Row]], list[Rating]]
    description: str

    @property
    def metrics(self) -> tuple[str, ...]:
        return METRICS_BY_LEVEL[self.level]


@dataclass(frozen=True)
class Dimension:
    name: str
    label: str
    variants: tuple[Variant, ...]


def raw(rows: list[Row]) -> list[Rating]:
    return [(r["unit"], r["annotator"], scalar(r["value"])) for r in rows]


def scalar(value):
    """Labels are compared as hashable scalars; a list (several types) as its sorted tuple."""
    return tuple(sorted(map(str, value))) if isinstance(value, list) else value


def mapped(mapping: dict) -> Callable[[list[Row]], list[Rating]]:
    def transform(rows: list[Row]) -> list[Rating]:
        return [(r["unit"], r["annotator"], mapping.get(r["value"], r["value"])) for r in rows]

    return transform


def summary_any_inconsistent(rows: list[Row]) -> list[Rating]:
    """A summary is inconsistent for an annotator if any of its sentences is (TofuEval)."""
    verdicts: dict[tuple, str] = {}
    for r in rows:
        key = (r["summary"], r["annotator"])
        if r["value"] == "inconsistent" or key not in verdicts:
            verdicts[key] = "inconsistent" if r["value"] == "inconsistent" else "consistent"
    return [(summary, annotator, value) for (summary, annotator), value in verdicts.items()]


def without_borderline(rows: list[Row]) -> list[Rating]:
    """SummEdits: drop every edit that any annotator marked borderline."""
    borderline = {r["unit"] for r in rows if r["value"] == "borderline"}
    return [(r["unit"], r["annotator"], r["value"]) for r in rows if r["unit"] not in borderline]


def ambiguity_category(rows: list[Row]) -> list[Rating]:
    """MADISSE: the top-level category of the first type chosen, e.g. meaning.vagueness -> meaning."""
    return [(r["unit"], r["annotator"], str(r["value"][0]).split(".")[0] if r["value"] else "none") for r in rows]


def spans(rows: list[Row]) -> list[Rating]:
    """Span dimension: per summary and annotator, the list of (start, end) located spans."""
    by_key = defaultdict(list)
    for r in rows:
        value = r["value"] or {}
        if value.get("start") is not None and value.get("end") is not None:
            by_key[(r["summary"], r["annotator"])].append((value["start"], value["end"]))
        else:
            by_key.setdefault((r["summary"], r["annotator"]), [])
    return [(summary, annotator, tuple(found)) for (summary, annotator), found in by_key.items()]


def per_type(rows: list[Row]) -> list[Rating]:
    """Error types as binary decisions: one unit per (sentence, type), "yes" if the typer chose it.

    The types are those anyone chose in these rows: a type nobody used says nothing about
    agreement, and counting it would inflate the figure with easy "no" units."""
    types = sorted({code for r in rows for code in codes(r["value"])})
    ratings = []
    for r in rows:
        chosen = codes(r["value"])
        ratings += [(f"{r['unit']}#{t}", r["annotator"], "yes" if t in chosen else "no") for t in types]
    return ratings


def codes(value) -> set[str]:
    """The types of one label: a list of codes, a single code, or none."""
    if value is None or value == "":
        return set()
    return {str(c) for c in value} if isinstance(value, list | tuple) else {str(value)}


def variant(name, level, transform, description) -> Variant:
    return Variant(name=name, level=level, transform=transform, description=description)


RAW = "raw"
DIMENSIONS = {
    d.name: d
    for d in [
        Dimension(
            "consistency",
            "Sentence consistency (TofuEval)",
            (
                variant(RAW, "nominal", raw, "each summary sentence: consistent / inconsistent"),
                variant(
                    "summary",
                    "nominal",
                    summary_any_inconsistent,
                    "each summary: inconsistent if any of its sentences is",
                ),
            ),
        ),
        Dimension(
            "relevance",
            "Relevance 1-5 (TofuEval)",
            (
                variant(RAW, "ordinal", raw, "Likert 1-5"),
                variant("binned", "nominal", mapped({1: 0, 2: 0, 3: 1, 4: 1, 5: 1}), "{1,2} -> 0, {3,4,5} -> 1"),
            ),
        ),
        Dimension(
            "topic_category",
            "Topic category (TofuEval)",
            (
                variant(RAW, "nominal", raw, "main / marginal / irrelevant"),
                variant(
                    "merged",
                    "nominal",
                    mapped({"marginal": "marginal+irrelevant", "irrelevant": "marginal+irrelevant"}),
                    "marginal and irrelevant merged",
                ),
            ),
        ),
        Dimension(
            "edit_label",
            "Edit label (SummEdits)",
            (
                variant(RAW, "nominal", raw, "consistent / inconsistent / borderline"),
                variant(
                    "without_borderline", "nominal", without_borderline, "edits any annotator marked borderline removed"
                ),
            ),
        ),
        Dimension(
            "seed_consistent", "Seed verification (SummEdits)", (variant(RAW, "nominal", raw, "seed consistent?"),)
        ),
        Dimension("ambiguous", "Ambiguity (MADISSE)", (variant(RAW, "nominal", raw, "ambiguous or not"),)),
        Dimension(
            "ambiguity_types",
            "Ambiguity category (MADISSE)",
            (variant("category", "nominal", ambiguity_category, "top-level category of the type"),),
        ),
        Dimension(
            "has_inconsistency",
            "Summary has an inconsistency (Ramprasad et al.)",
            (variant(RAW, "nominal", raw, "summary-level binary label"),),
        ),
        Dimension(
            "span",
            "Inconsistent spans (Ramprasad et al.)",
            (variant("token_f1", "spans", spans, "pairwise token-overlap F1 of the marked spans"),),
        ),
        Dimension(
            "error_types",
            "Error types (TofuEval)",
            (
                variant(RAW, "nominal", raw, "the set of types chosen, as one label"),
                variant("per_type", "nominal", per_type, "each (sentence, type): chosen or not"),
            ),
        ),
    ]
}


def dimension(name: str, level: str = "nominal") -> Dimension:
    """The registered dimension, or a one-variant dimension at `level` for labels from elsewhere."""
    if name in DIMENSIONS:
        return DIMENSIONS[name]
    return Dimension(name, name, (variant(RAW, level, raw, f"as imported ({level})"),))
