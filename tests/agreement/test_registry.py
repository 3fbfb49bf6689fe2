"""The papers' variants, as pure transforms from judgment rows to ratings."""

from annotation.agreement import registry


def rows(dimension, table):
    return [
        {"dimension": dimension, "unit": u, "annotator": a, "value": v, "summary": s, "round": "main"}
        for u, a, v, s in table
    ]


def ratings(dimension, variant, table):
    dim = registry.dimension(dimension)
    chosen = next(v for v in dim.variants if v.name == variant)
    return sorted(chosen.transform(rows(dimension, table)), key=str)


def test_relevance_is_binned_1_2_to_0_and_3_4_5_to_1():
    table = [("s1", "A", 1, 1), ("s1", "B", 2, 1), ("s2", "A", 3, 2), ("s2", "B", 5, 2)]
    assert ratings("relevance", "binned", table) == [("s1", "A", 0), ("s1", "B", 0), ("s2", "A", 1), ("s2", "B", 1)]


def test_marginal_and_irrelevant_topics_are_merged():
    table = [("i1", "A", "marginal", None), ("i1", "B", "irrelevant", None), ("i2", "A", "main", None)]
    values = {v for _, _, v in ratings("topic_category", "merged", table)}
    assert values == {"marginal+irrelevant", "main"}


def test_a_summary_is_inconsistent_if_any_sentence_is():
    table = [
        ("sentence:1", "A", "consistent", 9),
        ("sentence:2", "A", "inconsistent", 9),
        ("sentence:1", "B", "consistent", 9),
        ("sentence:2", "B", "consistent", 9),
    ]
    assert ratings("consistency", "summary", table) == [(9, "A", "inconsistent"), (9, "B", "consistent")]


def test_edits_anyone_marked_borderline_are_dropped():
    table = [
        ("e1", "A", "consistent", 1),
        ("e1", "B", "borderline", 1),
        ("e2", "A", "inconsistent", 2),
        ("e2", "B", "inconsistent", 2),
    ]
    assert ratings("edit_label", "without_borderline", table) == [
        ("e2", "A", "inconsistent"),
        ("e2", "B", "inconsistent"),
    ]


def test_ambiguity_category_is_the_top_level_of_the_type():
    table = [("s1", "A", ["meaning.vagueness"], 1), ("s1", "B", [], 1)]
    assert ratings("ambiguity_types", "category", table) == [("s1", "A", "meaning"), ("s1", "B", "none")]


def test_spans_are_gathered_per_summary_and_annotator_and_unlocated_ones_skipped():
    table = [
        ("summary/span:0", "A", {"start": 0, "end": 3}, 5),
        ("summary/span:1", "A", {"start": None, "end": None}, 5),
        ("summary", "B", None, 5),
    ]
    dim = registry.dimension("span")
    got = dim.variants[0].transform(rows("span", table))
    assert sorted(got) == [(5, "A", ((0, 3),)), (5, "B", ())]


def test_unregistered_dimensions_get_their_declared_level():
    dim = registry.dimension("fluency", "ordinal")
    assert [(v.name, v.level) for v in dim.variants] == [("raw", "ordinal")]
    assert dim.variants[0].metrics == ("percent_agreement", "krippendorff_alpha")


def test_error_types_per_type_is_a_yes_no_unit_for_each_type_anyone_chose():
    table = [
        ("sentence:1", "R1", ["reasoning"], 1),
        ("sentence:1", "R2", ["contradiction", "reasoning"], 1),
        ("sentence:2", "R1", [], 1),
        ("sentence:2", "R2", None, 1),
    ]
    assert ratings("error_types", "per_type", table) == [
        ("sentence:1#contradiction", "R1", "no"),
        ("sentence:1#contradiction", "R2", "yes"),
        ("sentence:1#reasoning", "R1", "yes"),
        ("sentence:1#reasoning", "R2", "yes"),
        ("sentence:2#contradiction", "R1", "no"),
        ("sentence:2#contradiction", "R2", "no"),
        ("sentence:2#reasoning", "R1", "no"),
        ("sentence:2#reasoning", "R2", "no"),
    ]
    raw = ratings("error_types", "raw", table[:2])
    assert raw == [("sentence:1", "R1", ("reasoning",)), ("sentence:1", "R2", ("contradiction", "reasoning"))]
