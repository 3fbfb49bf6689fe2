"""Inter-annotator agreement over long-format ratings: pure functions, no ORM, no I/O.

A rating is ``(item, annotator, value)``: item and annotator are hashable ids, value is a hashable
label or None (missing, ignored; NaN counts as missing too). Labels are compared by equality, so
``1``, ``1.0`` and ``True`` are the same label. Two ratings for one (item, annotator) are an error:
which one counts is the caller's decision, not ours.

Every metric returns a ``Result`` whose value is None (never NaN) when it is undefined, with a
sentence in ``note`` saying why and what was excluded.

How it stays fast for ~100k ratings: ratings are coded to integer numpy arrays in one O(n) Python
pass; each metric is then a few vectorised passes. Each metric is also written as a function of
per-item multiplicities ``w`` (all ones for the point estimate), because the bootstrap resamples
items: resampling with replacement is exactly reweighting items, so a bootstrap sample costs
O(items) or O(pair records) numpy work and no Python loop over ratings.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from itertools import combinations

import krippendorff
import numpy as np

Rating = tuple[Hashable, Hashable, Hashable | None]
Span = tuple[int, int]
ItemSpans = tuple[Hashable, Hashable, list[Span] | None]

ONE_CATEGORY = "undefined: only one category"
LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Result:
    value: float | None  # None when undefined; never NaN
    n_items: int  # items that entered the computation
    n_annotators: int  # distinct annotators that entered it
    note: str = ""  # why it is None, what was excluded (a sentence for people)
    low: float | None = None  # bootstrap 95% percentile interval, filled by with_interval()
    high: float | None = None


@dataclass(frozen=True)
class _Coded:
    """Ratings with value coded as integers; missing ratings already dropped."""

    item: np.ndarray
    annotator: np.ndarray
    value: np.ndarray
    items: list
    annotators: list
    labels: list


@dataclass(frozen=True)
class _Prepared:
    """A metric's point estimate plus how to recompute it for reweighted items (the bootstrap)."""

    result: Result
    n_units: int
    evaluate: Callable[[np.ndarray], float | None]


def _undefined(note: str, n_items: int = 0, n_annotators: int = 0) -> _Prepared:
    return _Prepared(Result(None, n_items, n_annotators, note), 0, lambda w: None)


def _defined(evaluate: Callable, n_units: int, n_items: int, n_annotators: int, note: str) -> _Prepared:
    value = evaluate(np.ones(n_units))
    if value is None:  # with all items present, only a single category makes these metrics 0/0
        note = "; ".join(p for p in (ONE_CATEGORY, note) if p)
    return _Prepared(Result(value, n_items, n_annotators, note), n_units, evaluate)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _encode(ratings: Iterable[Rating]) -> _Coded:
    items: dict = {}
    annotators: dict = {}
    labels: dict = {}
    rows: list[tuple[int, int, int]] = []
    seen: set = set()
    duplicates: list = []
    for item, annotator, value in ratings:
        if (item, annotator) in seen:
            duplicates.append((item, annotator))
        seen.add((item, annotator))
        if not _is_missing(value):
            rows.append((_code(items, item), _code(annotators, annotator), _code(labels, value)))
    if duplicates:
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        raise ValueError(f"duplicate ratings for (item, annotator): {duplicates[:5]!r}{more}; deduplicate first")
    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return _Coded(arr[:, 0], arr[:, 1], arr[:, 2], list(items), list(annotators), list(labels))


def _code(codes: dict, key: Hashable) -> int:
    return codes.setdefault(key, len(codes))


def _cells(item: np.ndarray, value: np.ndarray, n_labels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse item x label count table: (item, label, count) for each non-empty cell."""
    keys, counts = np.unique(item * n_labels + value, return_counts=True)
    return keys // n_labels, keys % n_labels, counts.astype(float)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --- percent agreement -------------------------------------------------------------------------


def _prepare_percent(ratings: Iterable[Rating]) -> _Prepared:
    coded = _encode(ratings)
    if not len(coded.item):
        return _undefined("no ratings")
    per_item = np.bincount(coded.item)
    keep = per_item >= 2
    if not keep.any():
        return _undefined("no item has two or more ratings")
    cell_item, _, count = _cells(coded.item, coded.value, len(coded.labels))
    agreeing = np.bincount(cell_item, weights=count * (count - 1) / 2, minlength=len(per_item))
    share = agreeing[keep] / (per_item[keep] * (per_item[keep] - 1) / 2)
    annotators = np.unique(coded.annotator[keep[coded.item]]).size
    skipped = int((~keep).sum())
    note = f"excluded {_plural(skipped, 'item')} with a single rating" if skipped else ""
    return _defined(lambda w: _finite(w @ share / w.sum()), len(share), len(share), annotators, note)


def percent_agreement(ratings: Iterable[Rating]) -> Result:
    """Mean over items with >= 2 ratings of the share of rating pairs that agree. O(n log n)."""
    return _prepare_percent(ratings).result


# --- Fleiss' kappa -----------------------------------------------------------------------------


def _prepare_fleiss(ratings: Iterable[Rating]) -> _Prepared:
    coded = _encode(ratings)
    if not len(coded.item):
        return _undefined("no ratings")
    per_item = np.bincount(coded.item)
    sizes = np.bincount(per_item[per_item >= 2])
    if not sizes.any():
        return _undefined("no item has two or more ratings")
    m = len(sizes) - 1 - int(np.argmax(sizes[::-1]))  # most common count; ties go to the larger count
    keep = per_item == m
    rows = keep[coded.item]
    units = np.cumsum(keep) - 1  # item code -> index among kept items
    cell_unit, cell_label, count = _cells(units[coded.item[rows]], coded.value[rows], len(coded.labels))
    agreement = (np.bincount(cell_unit, weights=count**2) - m) / (m * (m - 1))  # P_i per item

    def evaluate(w: np.ndarray) -> float | None:
        p = np.bincount(cell_label, weights=w[cell_unit] * count, minlength=len(coded.labels)) / (w.sum() * m)
        if (p > 0).sum() < 2:
            return None  # expected agreement is 1: kappa is 0/0
        expected = p @ p
        return _finite((w @ agreement / w.sum() - expected) / (1 - expected))

    annotators = np.unique(coded.annotator[rows]).size
    return _defined(evaluate, int(keep.sum()), int(keep.sum()), annotators, _fleiss_note(per_item, m))


def _fleiss_note(per_item: np.ndarray, m: int) -> str:
    fewer, more = int((per_item < m).sum()), int((per_item > m).sum())
    if not fewer + more:
        return f"{m} ratings per item"
    return f"{m} ratings per item; excluded {_plural(fewer + more, 'item')} with a different count ({fewer} fewer, {more} more)"


def fleiss_kappa(ratings: Iterable[Rating]) -> Result:
    """Fleiss' kappa on the items that have the most common number of ratings m (>= 2).

    Fleiss needs the same number of ratings per item; rather than guess, items with fewer or more
    ratings than m are excluded and counted in the note. Ties between counts go to the larger m.
    O(n log n).
    """
    return _prepare_fleiss(ratings).result


# --- Cohen's kappa, per pair and averaged ------------------------------------------------------


@dataclass(frozen=True)
class _PairRecords:
    """One record per (item, annotator pair) where both rated the item."""

    pairs: np.ndarray  # P x 2 annotator codes, first < second
    pair: np.ndarray  # per record: index into pairs
    item: np.ndarray
    label_a: np.ndarray
    label_b: np.ndarray


def _pair_records(coded: _Coded) -> _PairRecords:
    """Self-join of ratings on item, vectorised: O(n * k) for at most k ratings per item."""
    order = np.lexsort((coded.annotator, coded.item))
    item, annotator, value = coded.item[order], coded.annotator[order], coded.value[order]
    parts = []
    for gap in range(1, int(np.bincount(item).max(initial=0))):
        i = np.nonzero(item[:-gap] == item[gap:])[0]
        parts.append((annotator[i], annotator[i + gap], item[i], value[i], value[i + gap]))
    empty = np.zeros(0, np.int64)
    a, b, item, la, lb = (np.concatenate(column) for column in zip(*parts, strict=True)) if parts else [empty] * 5
    keys, pair = np.unique(a * len(coded.annotators) + b, return_inverse=True)
    pairs = np.stack([keys // len(coded.annotators), keys % len(coded.annotators)], axis=1)
    return _PairRecords(pairs, pair, item, la, lb)


def _confusions(records: _PairRecords, n_labels: int, weights: np.ndarray | None = None) -> np.ndarray:
    """P x L x L confusion tables, one per pair; weights are per record."""
    key = (records.pair * n_labels + records.label_a) * n_labels + records.label_b
    flat = np.bincount(key, weights=weights, minlength=len(records.pairs) * n_labels**2)
    return flat.reshape(len(records.pairs), n_labels, n_labels)


def _kappas(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa per table (NaN where undefined) and a mask of one-category tables."""
    n = tables.sum(axis=(1, 2))
    rows, cols = tables.sum(axis=2), tables.sum(axis=1)
    one_category = ((rows + cols) > 0).sum(axis=1) < 2  # expected agreement 1: kappa is 0/0
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.trace(tables, axis1=1, axis2=2) / n
        expected = (rows * cols).sum(axis=1) / n**2
        kappa = (observed - expected) / (1 - expected)
    kappa[one_category | (n < 2)] = np.nan
    return kappa, one_category


def _select(records: _PairRecords, keep: np.ndarray) -> _PairRecords:
    rows = keep[records.pair]
    index = np.cumsum(keep) - 1
    return _PairRecords(
        records.pairs[keep], index[records.pair[rows]], records.item[rows], records.label_a[rows], records.label_b[rows]
    )


def _prepare_cohen(ratings: Iterable[Rating]) -> _Prepared:
    coded = _encode(ratings)
    if not len(coded.item):
        return _undefined("no ratings")
    if len(coded.annotators) < 2:
        return _undefined("only one annotator")
    records = _pair_records(coded)
    tables = _confusions(records, len(coded.labels))
    kappa, one_category = _kappas(tables)
    few = tables.sum(axis=(1, 2)) < 2
    valid = ~np.isnan(kappa)
    note = _cohen_note(int(valid.sum()), int(few.sum()), int((one_category & ~few).sum()))
    if not valid.any():
        if not (one_category & ~few).any():
            return _undefined(note)
        tried = _select(records, ~few)
        return _undefined(ONE_CATEGORY, np.unique(tried.item).size, np.unique(tried.pairs).size)
    kept = _select(records, valid)
    units, unit = np.unique(kept.item, return_inverse=True)

    def evaluate(w: np.ndarray) -> float | None:
        values, _ = _kappas(_confusions(kept, len(coded.labels), w[unit]))
        return None if np.isnan(values).all() else _finite(np.nanmean(values))

    return _defined(evaluate, len(units), len(units), np.unique(kept.pairs).size, note)


def _cohen_note(used: int, few: int, one_category: int) -> str:
    parts = [f"mean over {_plural(used, 'annotator pair')}" if used != 1 else ""]
    if few:
        parts.append(f"skipped {_plural(few, 'pair')} with fewer than 2 common items")
    if one_category:
        parts.append(f"skipped {_plural(one_category, 'pair')} with only one category")
    if not used and not one_category:
        parts = ["undefined: no annotator pair shares 2 or more items"]
    return "; ".join(p for p in parts if p)


def cohen_kappa(ratings: Iterable[Rating]) -> Result:
    """Cohen's kappa on the items both annotators rated; with more annotators, the mean over pairs.

    Pairs with fewer than 2 common items, or where kappa is undefined (both used one and the same
    category), are skipped and counted in the note. O(n * k) for at most k ratings per item.
    """
    return _prepare_cohen(ratings).result


def pairs(ratings: Iterable[Rating]) -> dict[tuple[Hashable, Hashable], Result]:
    """Cohen's kappa for every annotator pair that shares at least one item (for a heat map).

    Keys are (a, b) with a < b when annotator ids are comparable; pairs with no common item are absent.
    """
    coded = _encode(ratings)
    records = _pair_records(coded)
    tables = _confusions(records, len(coded.labels))
    kappa, one_category = _kappas(tables)
    result = {}
    for (a, b), value, table, single in zip(records.pairs, kappa, tables, one_category, strict=True):
        n = int(table.sum())
        note = "fewer than 2 common items" if n < 2 else ONE_CATEGORY if single else ""
        key = _ordered(coded.annotators[a], coded.annotators[b])
        result[key] = Result(_finite(value), n, 2, note)
    return result


def _ordered(a: Hashable, b: Hashable) -> tuple[Hashable, Hashable]:
    try:
        return (b, a) if b < a else (a, b)  # type: ignore[operator]
    except TypeError:
        return (a, b)


def confusion(ratings: Iterable[Rating], a: Hashable, b: Hashable) -> dict[tuple, int]:
    """Counts of (label of a, label of b) over items both rated; only non-zero cells. O(n)."""
    by_item: dict = defaultdict(dict)
    coded = _encode(ratings)  # validates duplicates
    for item, annotator, value in zip(coded.item, coded.annotator, coded.value, strict=True):
        if coded.annotators[annotator] in (a, b):
            by_item[item][coded.annotators[annotator]] = coded.labels[value]
    return dict(Counter((labels[a], labels[b]) for labels in by_item.values() if a in labels and b in labels))


# --- Krippendorff's alpha ----------------------------------------------------------------------


def _alpha_domain(labels: list, level: str, order: list | None) -> tuple[np.ndarray, np.ndarray]:
    """The value domain for the krippendorff package and the map label code -> domain column."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    numeric = all(isinstance(v, int | float | np.number) and not isinstance(v, str) for v in labels)
    if level == "nominal":
        return np.arange(len(labels)), np.arange(len(labels))
    if level == "ordinal" and order is not None:
        position = {v: i for i, v in enumerate(order)}
        unknown = [v for v in labels if v not in position]
        if unknown:
            raise ValueError(f"labels not in order: {unknown[:5]!r}")
        return np.arange(len(order)), np.array([position[v] for v in labels], dtype=np.int64)
    if not numeric:
        need = "an explicit order=[...] of the labels" if level == "ordinal" else "numeric values"
        raise ValueError(f"{level} alpha with non-numeric labels needs {need}; got {labels[:5]!r}")
    domain = sorted({float(v) for v in labels})
    position = {v: i for i, v in enumerate(domain)}
    return np.array(domain), np.array([position[float(v)] for v in labels], dtype=np.int64)


def _prepare_alpha(ratings: Iterable[Rating], level: str = "nominal", *, order: list | None = None) -> _Prepared:
    coded = _encode(ratings)
    domain, column = _alpha_domain(coded.labels, level, order)
    if not len(coded.item):
        return _undefined("no ratings")
    per_item = np.bincount(coded.item)
    keep = per_item >= 2
    if not keep.any():
        return _undefined("no item has two or more ratings")
    rows = keep[coded.item]
    units = np.cumsum(keep) - 1
    counts = np.zeros((int(keep.sum()), len(domain)))
    np.add.at(counts, (units[coded.item[rows]], column[coded.value[rows]]), 1)

    def evaluate(w: np.ndarray) -> float | None:
        sample = counts[np.repeat(np.arange(len(w)), w.astype(np.int64))]
        if (sample.sum(axis=0) > 0).sum() < 2:
            return None  # one value only: expected disagreement is 0
        return _finite(krippendorff.alpha(value_counts=sample, value_domain=domain, level_of_measurement=level))

    skipped = int((~keep).sum())
    note = f"{level}; {_plural(skipped, 'item')} with a single rating cannot be paired" if skipped else level
    return _defined(evaluate, len(counts), len(counts), np.unique(coded.annotator[rows]).size, note)


def krippendorff_alpha(ratings: Iterable[Rating], level: str = "nominal", *, order: list | None = None) -> Result:
    """Krippendorff's alpha through the ``krippendorff`` package, missing data allowed.

    level is nominal, ordinal, interval or ratio. Ordinal needs an order: numeric labels are sorted,
    string labels need ``order=[...]`` (ValueError otherwise); interval and ratio need numeric labels.
    The package is given per-item value counts, which is equivalent to the annotators x items
    reliability matrix but O(items x labels) in memory instead of O(items x annotators).
    """
    return _prepare_alpha(ratings, level, order=order).result


# --- span F1 (Ramprasad et al.) ----------------------------------------------------------------

_TOKEN = re.compile(r"\S+")


def _tokens(text: str) -> tuple[np.ndarray, np.ndarray]:
    bounds = [m.span() for m in _TOKEN.finditer(text)]
    arr = np.array(bounds, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _marked(spans: Iterable[Span], starts: np.ndarray, ends: np.ndarray, length: int) -> set[int]:
    """Indices of tokens that some span overlaps by at least one character."""
    marked: set[int] = set()
    for start, end in spans:
        if not 0 <= start <= end <= length:
            raise ValueError(f"span ({start}, {end}) is outside a text of {length} characters")
        first = int(np.searchsorted(ends, start, side="right"))  # first token ending after start
        last = int(np.searchsorted(starts, end, side="left"))  # tokens starting before end
        marked.update(range(first, last))
    return marked


def _f1(a: set[int], b: set[int]) -> float:
    if not a and not b:
        return 1.0  # both say nothing is wrong: that is agreement
    return 2 * len(a & b) / (len(a) + len(b))


def span_f1(spans_a: Iterable[Span], spans_b: Iterable[Span], text: str) -> float | None:
    """Token-overlap F1 between two annotators' spans on one text (Ramprasad et al.).

    Tokens are the whitespace-separated tokens of text; offsets are code points (Python str
    indices), end exclusive. A token is marked by an annotator if any of their spans overlaps it.
    Both mark nothing -> 1.0; one marks nothing -> 0.0; a text without tokens -> None.
    """
    starts, ends = _tokens(text)
    if not len(starts):
        return None
    return _f1(_marked(spans_a, starts, ends, len(text)), _marked(spans_b, starts, ends, len(text)))


def _prepare_span(spans: Iterable[ItemSpans], texts: dict) -> _Prepared:
    by_item: dict = defaultdict(dict)
    for item, annotator, item_spans in spans:
        if annotator in by_item[item]:
            raise ValueError(f"duplicate spans for (item, annotator): {(item, annotator)!r}; deduplicate first")
        by_item[item][annotator] = item_spans
    sums, counts, annotators = [], [], set()
    for item, marked_by in by_item.items():
        present = {a: s for a, s in marked_by.items() if s is not None}
        if len(present) < 2:
            continue
        if item not in texts:
            raise ValueError(f"no text for item {item!r}")
        scores = _item_span_f1(present, texts[item])
        if scores:
            sums.append(sum(scores))
            counts.append(len(scores))
            annotators.update(present)
    if not sums:
        return _undefined("no item has spans from two annotators" if by_item else "no ratings")
    total, n = np.array(sums), np.array(counts, dtype=float)
    note = f"mean over {int(n.sum())} (item, annotator pair) scores"
    return _defined(lambda w: _finite(w @ total / (w @ n)), len(total), len(total), len(annotators), note)


def _item_span_f1(spans_by_annotator: dict, text: str) -> list[float]:
    starts, ends = _tokens(text)
    if not len(starts):
        return []
    marked = [_marked(s, starts, ends, len(text)) for s in spans_by_annotator.values()]
    return [_f1(a, b) for a, b in combinations(marked, 2)]


def pairwise_span_f1(spans: Iterable[ItemSpans], texts: dict) -> Result:
    """Mean of span_f1 over all (item, annotator pair) combinations.

    spans is long format (item, annotator, [(start, end), ...]); an empty list means the annotator
    marked nothing, None means they did not annotate the item. Items whose text has no tokens are
    skipped. O(total spans * log tokens + items * pairs).
    """
    return _prepare_span(spans, texts).result


# --- bootstrap ---------------------------------------------------------------------------------

_PREPARERS: dict[Callable, Callable[..., _Prepared]] = {
    percent_agreement: _prepare_percent,
    fleiss_kappa: _prepare_fleiss,
    cohen_kappa: _prepare_cohen,
    krippendorff_alpha: _prepare_alpha,
    pairwise_span_f1: _prepare_span,
}


def with_interval(metric: Callable, ratings: Iterable, *, n_boot: int = 1000, seed: int = 0, **kwargs) -> Result:
    """The metric's Result with a bootstrap 95% percentile interval over items.

    Items are resampled with replacement, each keeping all its ratings; a duplicated item counts as
    a distinct item. Samples where the metric is undefined are skipped; if more than half are,
    low/high stay None. The metrics of this module are re-evaluated on item weights (O(n_boot x
    items) numpy work; alpha and kappa re-run their vectorised core); any other metric falls back
    to rebuilding the ratings per sample (O(n_boot x n) Python).
    """
    if isinstance(metric, functools.partial):
        metric, kwargs = metric.func, {**metric.keywords, **kwargs}
    ratings = list(ratings)
    prepare = _PREPARERS.get(metric)
    if prepare is None:
        return _generic_interval(metric, ratings, n_boot, seed, kwargs)
    prepared = prepare(ratings, **kwargs)
    if prepared.result.value is None:
        return prepared.result
    rng = np.random.default_rng(seed)
    n = prepared.n_units
    draws = (prepared.evaluate(np.bincount(rng.integers(0, n, n), minlength=n).astype(float)) for _ in range(n_boot))
    return _attach_interval(prepared.result, [v for v in draws if v is not None], n_boot)


def _generic_interval(metric: Callable, ratings: list, n_boot: int, seed: int, kwargs: dict) -> Result:
    result = metric(ratings, **kwargs)
    groups = list(_group_by_item(ratings).items())
    if result.value is None or not groups:
        return result
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        sample = [
            ((k, item), *rest)
            for k, i in enumerate(rng.integers(0, len(groups), len(groups)))
            for item, rows in [groups[i]]
            for rest in rows
        ]
        value = metric(sample, **kwargs).value
        if value is not None:
            values.append(value)
    return _attach_interval(result, values, n_boot)


def _group_by_item(ratings: list) -> dict:
    groups: dict = defaultdict(list)
    for item, *rest in ratings:
        groups[item].append(rest)
    return groups


def _attach_interval(result: Result, values: list[float], n_boot: int) -> Result:
    undefined = n_boot - len(values)
    if len(values) < n_boot / 2:
        note = f"no interval: metric undefined in {undefined} of {n_boot} bootstrap samples"
        return replace(result, note="; ".join(p for p in (result.note, note) if p))
    low, high = np.percentile(values, [2.5, 97.5])
    note = f"{undefined} of {n_boot} bootstrap samples undefined and skipped" if undefined else ""
    return replace(result, low=float(low), high=float(high), note="; ".join(p for p in (result.note, note) if p))
