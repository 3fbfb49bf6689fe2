"""Agreement metrics against independent references (scikit-learn, statsmodels, the krippendorff
package, Krippendorff's published worked examples) and hand-computed tables. Pure: no database."""

import functools
import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from annotation.agreement import metrics
from annotation.agreement.metrics import Result

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 coders x 12 units,
# values 1-5, "." missing. Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_2011 = {
    "A": "1 2 3 3 2 1 4 1 2 . . .",
    "B": "1 2 3 3 2 2 4 1 2 5 . 3",
    "C": ". 3 3 3 2 3 4 2 2 5 1 .",
    "D": "1 2 3 3 2 4 4 1 2 5 1 .",
}
WORDS = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}


def long_format(table: dict[str, str], cast=int) -> list[tuple]:
    """{coder: "v v . v"} -> [(unit, coder, value or None)]."""
    return [
        (unit, coder, None if v == "." else cast(v))
        for coder, row in table.items()
        for unit, v in enumerate(row.split())
    ]


def from_matrix(matrix: np.ndarray) -> list[tuple]:
    """annotators x items matrix with NaN for missing -> long format with int labels."""
    return [(f"i{j}", f"a{a}", int(v)) for a, row in enumerate(matrix) for j, v in enumerate(row) if not np.isnan(v)]


def noisy_matrix(
    rng: np.random.Generator, annotators: int, items: int, labels: int, missing: float = 0.0
) -> np.ndarray:
    """Annotators who copy a hidden true label 60% of the time; some cells missing."""
    truth = rng.integers(0, labels, items)
    copies = rng.random((annotators, items)) < 0.6
    matrix = np.where(copies, truth, rng.integers(0, labels, (annotators, items))).astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    return matrix


def two_annotators(a: list, b: list) -> list[tuple]:
    return [(i, "a", x) for i, x in enumerate(a)] + [(i, "b", x) for i, x in enumerate(b)]


# --- percent agreement ---------------------------------------------------------------------------


def test_percent_agreement_is_the_mean_share_of_agreeing_pairs_per_item():
    ratings = [
        (1, "a", "x"), (1, "b", "x"), (1, "c", "y"),  # 1 of 3 pairs agree
        (2, "a", "x"), (2, "b", "x"),  # 1 of 1
        (3, "a", "y"),  # single rating: excluded
    ]  # fmt: skip
    result = metrics.percent_agreement(ratings)
    assert result.value == pytest.approx((1 / 3 + 1) / 2)
    assert (result.n_items, result.n_annotators) == (2, 3)
    assert "1 item with a single rating" in result.note


def test_percent_agreement_counts_only_annotators_with_a_rating():
    ratings = [(1, "a", "x"), (1, "b", "x"), (1, "ghost", None)]
    assert metrics.percent_agreement(ratings).n_annotators == 2


# --- Cohen's kappa -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("x x y y z z x y", "x y y y z x x y"),
        ("1 1 1 0 0 0 1 0 1 1", "1 0 1 0 0 1 1 0 1 1"),
        ("p q p q", "q p q p"),  # systematic disagreement: negative kappa
        ("x x x y", "x x x x"),  # b used one category, a two: kappa is defined (0)
    ],
)
def test_cohen_kappa_matches_scikit_learn_on_hand_tables(a, b):
    a, b = a.split(), b.split()
    assert metrics.cohen_kappa(two_annotators(a, b)).value == pytest.approx(cohen_kappa_score(a, b))


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_matches_scikit_learn_on_random_tables_with_missing_ratings(seed):
    rng = np.random.default_rng(seed)
    matrix = noisy_matrix(rng, annotators=2, items=60, labels=int(rng.integers(2, 6)), missing=0.15)
    both = ~np.isnan(matrix).any(axis=0)
    result = metrics.cohen_kappa(from_matrix(matrix))
    assert result.value == pytest.approx(cohen_kappa_score(matrix[0, both], matrix[1, both]))
    assert (result.n_items, result.n_annotators) == (both.sum(), 2)


def test_cohen_kappa_with_more_annotators_is_the_mean_over_pairs_of_scikit_learn_values():
    matrix = noisy_matrix(np.random.default_rng(7), annotators=4, items=80, labels=3, missing=0.2)
    expected = []
    for i in range(4):
        for j in range(i + 1, 4):
            both = ~np.isnan(matrix[[i, j]]).any(axis=0)
            expected.append(cohen_kappa_score(matrix[i, both], matrix[j, both]))
    result = metrics.cohen_kappa(from_matrix(matrix))
    assert result.value == pytest.approx(np.mean(expected))
    assert result.n_annotators == 4
    assert result.note == "mean over 6 annotator pairs"


def test_cohen_kappa_skips_pairs_with_fewer_than_two_common_items_and_says_so():
    ratings = two_annotators(list("xyxy"), list("xyyy")) + [(0, "c", "x"), (9, "c", "y")]
    result = metrics.cohen_kappa(ratings)
    assert result.value == pytest.approx(cohen_kappa_score(list("xyxy"), list("xyyy")))
    assert result.n_annotators == 2
    assert "skipped 2 pairs with fewer than 2 common items" in result.note


def test_pairs_gives_scikit_learn_kappa_for_each_pair_keyed_in_sorted_order():
    matrix = noisy_matrix(np.random.default_rng(3), annotators=3, items=40, labels=3)
    result = metrics.pairs(from_matrix(matrix))
    assert set(result) == {("a0", "a1"), ("a0", "a2"), ("a1", "a2")}
    assert result[("a0", "a2")].value == pytest.approx(cohen_kappa_score(matrix[0], matrix[2]))
    assert result[("a0", "a2")].n_items == 40


def test_pairs_reports_a_pair_with_one_common_item_as_undefined():
    result = metrics.pairs([(1, "b", "x"), (1, "a", "y"), (2, "a", "x")])
    assert result == {("a", "b"): Result(None, 1, 2, "fewer than 2 common items")}


def test_confusion_counts_label_pairs_over_items_both_rated():
    ratings = two_annotators(["x", "x", "y", None, "y"], ["x", "y", "y", "y", None])
    assert metrics.confusion(ratings, "a", "b") == {("x", "x"): 1, ("x", "y"): 1, ("y", "y"): 1}
    assert metrics.confusion(ratings, "a", "nobody") == {}


# --- Fleiss' kappa -------------------------------------------------------------------------------


def statsmodels_fleiss(matrix: np.ndarray) -> float:
    """Reference: statsmodels on an items x raters table without missing cells."""
    table, _ = inter_rater.aggregate_raters(matrix.T.astype(int))
    return inter_rater.fleiss_kappa(table, method="fleiss")


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels_on_complete_random_tables(seed):
    rng = np.random.default_rng(seed)
    matrix = noisy_matrix(rng, annotators=int(rng.integers(2, 7)), items=50, labels=int(rng.integers(2, 5)))
    result = metrics.fleiss_kappa(from_matrix(matrix))
    assert result.value == pytest.approx(statsmodels_fleiss(matrix))
    assert (result.n_items, result.n_annotators) == (50, matrix.shape[0])


def test_fleiss_kappa_matches_statsmodels_on_fleiss_1971_style_table():
    # statsmodels' own doc example is a counts table; rebuild ratings from it.
    counts = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1]])
    ratings = [
        (i, f"r{k}", label) for i, row in enumerate(counts) for k, label in enumerate(np.repeat(np.arange(5), row))
    ]
    assert metrics.fleiss_kappa(ratings).value == pytest.approx(inter_rater.fleiss_kappa(counts, method="fleiss"))


def test_fleiss_kappa_excludes_items_with_another_number_of_ratings_and_says_how_many():
    matrix = noisy_matrix(np.random.default_rng(11), annotators=3, items=30, labels=3)
    ratings = from_matrix(matrix)
    ratings = [r for r in ratings if not (r[0] in {"i0", "i1"} and r[1] == "a2")]  # two items with 2 ratings
    ratings += [("i5", "a3", 0)]  # one item with 4
    result = metrics.fleiss_kappa(ratings)
    assert result.value == pytest.approx(statsmodels_fleiss(np.delete(matrix, [0, 1, 5], axis=1)))
    assert result.n_items == 27
    assert result.n_annotators == 3  # a3 only rated an excluded item
    assert result.note == "3 ratings per item; excluded 3 items with a different count (2 fewer, 1 more)"


# --- Krippendorff's alpha ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_alpha_reproduces_krippendorff_2011_four_coders_with_missing_data(level, published):
    result = metrics.krippendorff_alpha(long_format(KRIPPENDORFF_2011), level)
    assert round(result.value, 3) == published
    assert (result.n_items, result.n_annotators) == (11, 4)  # unit 11 has one value: not pairable
    assert "1 item with a single rating" in result.note


def test_alpha_reproduces_krippendorff_2011_binary_two_observers():
    # Section A: alpha = 0.095.
    ratings = two_annotators([0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0])
    assert round(metrics.krippendorff_alpha(ratings).value, 3) == 0.095


def test_alpha_reproduces_krippendorff_2011_nominal_two_observers_with_letters():
    # Section B: alpha = 0.692; string labels are coded to integers.
    ratings = two_annotators(list("aabbdcccedda"), list("babbbccceddd"))
    assert round(metrics.krippendorff_alpha(ratings).value, 3) == 0.692


def test_ordinal_alpha_with_word_labels_uses_the_given_order():
    ratings = [(u, c, None if v is None else WORDS[v]) for u, c, v in long_format(KRIPPENDORFF_2011)]
    order = [WORDS[k] for k in sorted(WORDS)]
    assert round(metrics.krippendorff_alpha(ratings, "ordinal", order=order).value, 3) == 0.815


def test_ordinal_alpha_with_word_labels_and_no_order_is_refused_with_a_clear_message():
    ratings = [(1, "a", "low"), (1, "b", "high")]
    with pytest.raises(ValueError, match="order="):
        metrics.krippendorff_alpha(ratings, "ordinal")


@pytest.mark.parametrize(
    ("ratings", "kwargs", "message"),
    [
        ([(1, "a", "low"), (1, "b", "high")], {"level": "interval"}, "numeric"),
        ([(1, "a", "low"), (1, "b", "huge")], {"level": "ordinal", "order": ["low", "high"]}, "not in order"),
        ([(1, "a", 1), (1, "b", 2)], {"level": "cardinal"}, "level must be one of"),
    ],
)
def test_alpha_rejects_labels_its_level_cannot_measure(ratings, kwargs, message):
    with pytest.raises(ValueError, match=message):
        metrics.krippendorff_alpha(ratings, **kwargs)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(4))
def test_alpha_matches_the_krippendorff_package_on_its_reliability_matrix(level, seed):
    matrix = noisy_matrix(np.random.default_rng(seed), annotators=5, items=70, labels=5, missing=0.3) + 1
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert metrics.krippendorff_alpha(from_matrix(matrix), level).value == pytest.approx(expected)


def test_ordinal_alpha_on_krippendorff_2011_equals_the_package_with_an_explicit_domain():
    matrix = np.array([[np.nan if v == "." else float(v) for v in row.split()] for row in KRIPPENDORFF_2011.values()])
    expected = krippendorff.alpha(reliability_data=matrix, value_domain=[1, 2, 3, 4, 5], level_of_measurement="ordinal")
    assert metrics.krippendorff_alpha(long_format(KRIPPENDORFF_2011), "ordinal").value == pytest.approx(expected)


# --- edge cases, every rating metric -------------------------------------------------------------

RATING_METRICS = [metrics.percent_agreement, metrics.cohen_kappa, metrics.fleiss_kappa, metrics.krippendorff_alpha]


@pytest.mark.parametrize("metric", RATING_METRICS)
@pytest.mark.parametrize("ratings", [[], [(1, "a", None), (1, "b", None), (2, "a", float("nan"))]])
def test_no_ratings_or_all_missing_is_undefined_with_note_no_ratings(metric, ratings):
    assert metric(ratings) == Result(None, 0, 0, "no ratings")


@pytest.mark.parametrize(
    ("metric", "value", "note"),
    [
        (metrics.percent_agreement, 1.0, ""),
        (metrics.cohen_kappa, None, "no annotator pair shares 2 or more items"),
        (metrics.fleiss_kappa, None, metrics.ONE_CATEGORY),
        (metrics.krippendorff_alpha, None, metrics.ONE_CATEGORY),
    ],
)
def test_a_single_agreed_item_gives_a_defined_answer(metric, value, note):
    result = metric([("only", "a", "x"), ("only", "b", "x")])
    assert result.value == value
    assert note in result.note


@pytest.mark.parametrize(
    ("metric", "value"),
    [(metrics.percent_agreement, 0.0), (metrics.fleiss_kappa, -1.0), (metrics.krippendorff_alpha, 0.0)],
)
def test_a_single_disputed_item_gives_finite_values(metric, value):
    assert metric([("only", "a", "x"), ("only", "b", "y")]).value == pytest.approx(value)


def test_fleiss_on_a_single_disputed_item_agrees_with_statsmodels():
    assert inter_rater.fleiss_kappa(np.array([[1, 1]]), method="fleiss") == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        (metrics.percent_agreement, 1.0),
        (metrics.cohen_kappa, None),
        (metrics.fleiss_kappa, None),
        (metrics.krippendorff_alpha, None),
    ],
)
def test_one_category_only_is_perfect_percent_agreement_and_undefined_chance_corrected(metric, value):
    ratings = [(i, a, "fine") for i in range(10) for a in "abc"]
    result = metric(ratings)
    assert result.value == value
    assert value is not None or metrics.ONE_CATEGORY in result.note
    assert (result.n_items, result.n_annotators) == (10, 3)


@pytest.mark.parametrize("metric", RATING_METRICS)
def test_one_annotator_only_is_undefined_and_says_why(metric):
    result = metric([(i, "solo", i % 2) for i in range(5)])
    assert result.value is None
    assert result.note in {"only one annotator", "no item has two or more ratings"}


@pytest.mark.parametrize("metric", [*RATING_METRICS, metrics.pairs])
def test_duplicate_item_annotator_pairs_are_refused_by_name(metric):
    with pytest.raises(ValueError, match=r"\('i1', 'ann'\)"):
        metric([("i1", "ann", "x"), ("i1", "other", "x"), ("i1", "ann", "y")])


def test_a_missing_rating_repeating_a_real_one_is_still_a_duplicate():
    with pytest.raises(ValueError, match="duplicate"):
        metrics.percent_agreement([("i1", "a", "x"), ("i1", "a", None), ("i1", "b", "x")])


@pytest.mark.parametrize("metric", RATING_METRICS)
def test_values_are_never_nan(metric):
    cases = [[(1, "a", 0), (1, "b", 1)], [(1, "a", 0), (2, "b", 1)], [(1, "a", 0), (1, "b", 0), (2, "a", 1)]]
    for ratings in cases:
        value = metric(ratings).value
        assert value is None or math.isfinite(value)


# --- span F1 -------------------------------------------------------------------------------------

SENTENCE = "The cat sat on the mat"  # The 0-3, cat 4-7, sat 8-11, on 12-14, the 15-18, mat 19-22


@pytest.mark.parametrize(
    ("spans_a", "spans_b", "expected"),
    [
        ([(4, 11)], [(8, 14)], 0.5),  # {cat, sat} vs {sat, on}
        ([(4, 9), (6, 12)], [(5, 6)], 2 / 3),  # overlapping spans mark {cat, sat}; one character marks cat
        ([(0, 22)], [(19, 22)], 2 / 7),  # everything vs the last token
        ([(3, 4)], [], 1.0),  # a span over a space marks no token: both mark nothing
        ([], [], 1.0),  # both say nothing is wrong
        ([(0, 3)], [], 0.0),
        ([(12, 14)], [(12, 14)], 1.0),
    ],
)
def test_span_f1_on_hand_computed_token_sets(spans_a, spans_b, expected):
    assert metrics.span_f1(spans_a, spans_b, SENTENCE) == pytest.approx(expected)


def test_span_f1_counts_offsets_in_code_points_through_emoji_and_combining_marks():
    text = "I \U0001f44d\U0001f3fd cafe\u0301 now"  # I 0-1, thumbs+skin tone 2-4, cafe+accent 5-10, now 11-14
    assert len(text) == 14
    a = [(3, 4), (9, 10)]  # the skin-tone modifier alone, the combining accent alone
    b = [(2, 3), (11, 14)]
    assert metrics.span_f1(a, b, text) == pytest.approx(0.5)  # {emoji, cafe} vs {emoji, now}


def test_span_f1_refuses_spans_outside_the_text():
    with pytest.raises(ValueError, match="outside"):
        metrics.span_f1([(20, 23)], [], SENTENCE)


def test_span_f1_on_a_text_without_tokens_is_undefined():
    assert metrics.span_f1([], [], "   ") is None


def test_pairwise_span_f1_averages_over_items_and_annotator_pairs():
    texts = {"s1": "a b c d", "s2": "e f"}
    spans = [
        ("s1", "x", [(0, 1)]),  # {a}
        ("s1", "y", [(0, 3)]),  # {a, b}
        ("s1", "z", []),
        ("s2", "x", []),
        ("s2", "y", []),
        ("s2", "z", None),  # did not annotate s2
    ]
    result = metrics.pairwise_span_f1(spans, texts)
    assert result.value == pytest.approx((2 / 3 + 0 + 0 + 1) / 4)
    assert (result.n_items, result.n_annotators) == (2, 3)


def test_pairwise_span_f1_edge_cases_are_defined():
    assert metrics.pairwise_span_f1([], {}) == Result(None, 0, 0, "no ratings")
    single = metrics.pairwise_span_f1([("s1", "x", [(0, 1)])], {"s1": "a b"})
    assert single.value is None
    assert single.note == "no item has spans from two annotators"
    with pytest.raises(ValueError, match="no text"):
        metrics.pairwise_span_f1([("s1", "x", []), ("s1", "y", [])], {})


# --- bootstrap -----------------------------------------------------------------------------------


def noisy_ratings(items: int, seed: int = 0, annotators: int = 3) -> list[tuple]:
    return from_matrix(noisy_matrix(np.random.default_rng(seed), annotators=annotators, items=items, labels=3))


@pytest.mark.parametrize("metric", RATING_METRICS)
def test_interval_contains_the_point_estimate(metric):
    ratings = noisy_ratings(200)
    result = metrics.with_interval(metric, ratings, n_boot=300)
    assert result.value == metric(ratings).value
    assert result.low < result.value < result.high


@pytest.mark.parametrize("metric", RATING_METRICS)
def test_interval_is_deterministic_for_a_seed(metric):
    ratings = noisy_ratings(100)
    first = metrics.with_interval(metric, ratings, n_boot=200, seed=5)
    assert metrics.with_interval(metric, ratings, n_boot=200, seed=5) == first
    assert metrics.with_interval(metric, ratings, n_boot=200, seed=6) != first


@pytest.mark.parametrize("metric", RATING_METRICS)
def test_interval_narrows_with_more_items(metric):
    few = metrics.with_interval(metric, noisy_ratings(60), n_boot=300)
    many = metrics.with_interval(metric, noisy_ratings(1500), n_boot=300)
    assert many.high - many.low < (few.high - few.low) / 2


@pytest.mark.parametrize(
    "metric",
    [*RATING_METRICS, functools.partial(metrics.krippendorff_alpha, level="interval")],
)
def test_reweighting_items_equals_resampling_ratings_with_distinct_item_ids(metric):
    # The generic path really duplicates ratings under new ids; the fast path reweights items.
    # With every item entering the computation, both draw the same samples.
    ratings = noisy_ratings(40, seed=2)
    fast = metrics.with_interval(metric, ratings, n_boot=100, seed=3)
    slow = metrics.with_interval(lambda r: metric(r), ratings, n_boot=100, seed=3)
    assert (slow.low, slow.high) == pytest.approx((fast.low, fast.high))


def test_interval_passes_keyword_arguments_to_the_metric():
    ratings = long_format(KRIPPENDORFF_2011)
    result = metrics.with_interval(metrics.krippendorff_alpha, ratings, n_boot=200, level="interval")
    assert result.value == pytest.approx(0.849, abs=5e-4)
    assert result.low <= result.value <= result.high


def test_pairwise_span_f1_has_an_interval_over_items():
    texts = {i: "one two three four" for i in range(30)}
    spans = [(i, a, [(0, 3 + 4 * ((i + k) % 3))]) for i in range(30) for k, a in enumerate("xy")]
    result = metrics.with_interval(metrics.pairwise_span_f1, spans, texts=texts, n_boot=200)
    assert result.low <= result.value <= result.high


def test_resampled_items_keep_distinct_ids_in_the_generic_path():
    seen = set()

    def distinct_items(ratings):
        seen.add(len({item for item, _, _ in ratings}))
        return Result(1.0, 0, 0)

    metrics.with_interval(distinct_items, [(i, "a", 1) for i in range(8)], n_boot=50)
    assert seen == {8}


def test_interval_is_omitted_when_the_metric_is_mostly_undefined_in_resamples():
    ratings = [(i, "a", int(i < 12)) for i in range(20)]

    def defined_only_at_sixty_percent(ratings):
        share = np.mean([v for _, _, v in ratings])
        return Result(share if share == 0.6 else None, len(ratings), 1)

    result = metrics.with_interval(defined_only_at_sixty_percent, ratings, n_boot=200)
    assert (result.value, result.low, result.high) == (0.6, None, None)
    assert "no interval: metric undefined in" in result.note


def test_interval_of_an_undefined_metric_is_the_undefined_result():
    assert metrics.with_interval(metrics.cohen_kappa, []) == Result(None, 0, 0, "no ratings")
