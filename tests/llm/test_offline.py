"""The offline provider: tables of known values, and properties on the SummEdits sample seeds."""

import json
from collections import Counter
from pathlib import Path

import pytest

from annotation.llm import offline

SUMMEDITS = Path(__file__).resolve().parents[2] / "annotation" / "corpus" / "demo_data" / "summedits_sample"

DIALOGUE = """Clerk: Item 5 is the budget for the library and the parking permits.
Councilmember Lee: The library budget has been cut twice. The library budget needs a new plan.
Councilmember Diaz: Parking permits downtown cost too much. Residents asked for cheaper parking permits.
Clerk: Thank you. The library budget and parking permits go to a vote next week.
Mayor: Okay, the motion carries."""

SEED = "Mr. Smith said the council will approve three new parking permits on Monday."
SEED_DOCUMENT = (
    "Mayor: Mr. Smith and Ms. Garcia met in Oakland on Friday.\nClerk: The 12 permits cost 55 dollars in 2018."
)
RICH_SEED = (
    "Mr. Smith said the city will buy three big parking lots on Monday; he also said it is able to increase the budget."
)


def seed_summaries() -> list[tuple[str, str]]:
    """(seed summary, document) for every seed ("_og" row) of the SummEdits sample."""
    pairs = []
    for path in sorted(SUMMEDITS.glob("*.json")):
        rows = json.loads(path.read_text(encoding="utf-8"))
        pairs += [(row["original_summary"], row["doc"]) for row in rows if row["id"].endswith("_og")]
    return pairs


def texts_of(kind: str, seed: str, document: str = "") -> set[str]:
    return {e.text for e in offline.edits(seed, document, n=200) if e.kind == kind}


# --- helpers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Gold plan costs $XXX a month.", ["The", "Gold", "plan", "costs", "XXX", "a", "month"]),
        ("He didn't pay 14,000.50 dollars!", ["He", "didn't", "pay", "14,000.50", "dollars"]),
        ("Neuro-Symbolic (NS-CL) 😀", ["Neuro-Symbolic", "NS-CL"]),
        ("Café à Zürich, שלום עולם", ["Café", "à", "Zürich", "שלום", "עולם"]),
        ("", []),
        ("... !!", []),
    ],
)
def test_word_tokens_drop_punctuation_and_keep_words(text, expected):
    assert offline.word_tokens(text) == expected


@pytest.mark.parametrize(
    "a, b, distance",
    [
        ("the gold plan", "the gold plan", 0),
        ("the gold plan.", "the gold plan!", 0),
        ("the gold plan", "the silver plan", 1),
        ("he called", "he did not call", 3),
        ("a b c d", "a c d", 1),
        ("a b", "b a", 2),
        ("", "three new words", 3),
        ("The plan", "the plan", 1),
    ],
)
def test_word_edit_distance_counts_word_edits(a, b, distance):
    assert offline.word_edit_distance(a, b) == distance
    assert offline.word_edit_distance(b, a) == distance


# --- topics -------------------------------------------------------------------------------------


def test_topics_of_a_dialogue_are_its_repeated_noun_phrases():
    assert offline.topics(DIALOGUE, n=2) == ["parking permits", "library budget"]


@pytest.mark.parametrize(
    "document, n, expected",
    [
        ("The carp population grows. Carp eat the eggs. Remove the carp.", 1, ["carp"]),
        (
            "Parking permit fees. Parking permits cost more. Parking permit rules.",
            3,
            ["parking permit", "fees", "cost"],
        ),
        (
            "Downtown Alameda Business Association. The downtown Alameda business association met.",
            1,
            ["downtown alameda business association"],
        ),
        ("Speaker 1: Okay. Thank you.\nSpeaker 2: Yes, thanks.", 3, []),
        ("", 3, []),
        ("   \n  ", 3, []),
    ],
)
def test_topics_table(document, n, expected):
    assert offline.topics(document, n=n) == expected


def test_topics_are_distinct_lowercase_short_phrases():
    document = seed_summaries()[0][1]
    found = offline.topics(document, n=5)
    assert len(found) == 5
    assert len(set(found)) == 5
    assert all(t == t.lower() and 1 <= len(t.split()) <= 4 for t in found)
    for a in found:  # none inside another
        assert not any(a != b and f" {a} " in f" {b} " for b in found)


def test_topics_ignore_speaker_labels():
    assert "councilmember lee" not in offline.topics(DIALOGUE, n=10)
    assert "clerk" not in " ".join(offline.topics(DIALOGUE, n=10))


# --- summary ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "topic, max_words, expected",
    [
        # budget+library in the first three sentences; the second also has two matching neighbours
        (
            "library budget",
            20,
            "Item 5 is the budget for the library and the parking permits. The library budget has been cut twice.",
        ),
        ("the library's budgets", 7, "The library budget has been cut twice."),  # stems match
        (
            "parking permits",
            12,
            "Parking permits downtown cost too much. Residents asked for cheaper parking permits.",
        ),
        ("parking permits", 4, "Parking permits downtown cost…"),  # nothing fits: the best, cut
        ("zoo animals", 8, "Item 5 is the budget for the library…"),  # no match: the lead
        (
            "zoo animals",
            20,
            "Item 5 is the budget for the library and the parking permits. The library budget has been cut twice.",
        ),
        ("zoo animals", 3, "Item 5 is…"),
    ],
)
def test_summary_prefers_topic_sentences_within_the_budget(topic, max_words, expected):
    assert offline.summary(DIALOGUE, topic, max_words=max_words) == expected


@pytest.mark.parametrize("max_words", [1, 3, 10, 25, 50, 200])
def test_summary_never_exceeds_max_words(max_words):
    for _, document in seed_summaries():
        text = offline.summary(document, "insurance plan", max_words=max_words)
        assert text
        assert len(text.split()) <= max_words


def test_summary_keeps_document_order_and_drops_speaker_labels():
    text = offline.summary(DIALOGUE, "library budget parking permits", max_words=60)
    assert "Councilmember" not in text and "Clerk:" not in text
    assert text.index("library budget has been cut") < text.index("Parking permits downtown")


@pytest.mark.parametrize("document", ["", "   ", "\n\n"])
def test_summary_of_nothing_is_empty(document):
    assert offline.summary(document, "budget") == ""


def test_summary_rejects_a_zero_budget():
    with pytest.raises(ValueError, match="max_words"):
        offline.summary(DIALOGUE, "budget", max_words=0)


# --- edits: one table row per rule ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, seed, document, expected",
    [
        (
            "entity_swap",
            SEED,
            SEED_DOCUMENT,
            "Mr. Garcia said the council will approve three new parking permits on Monday.",
        ),
        ("entity_swap", "Anna met Boris in Paris.", "", "Anna met Paris in Paris."),
        (
            "number_swap",
            SEED,
            SEED_DOCUMENT,
            "Mr. Smith said the council will approve four new parking permits on Monday.",
        ),
        ("number_swap", "The fee is 40 dollars.", "It cost 55 dollars.", "The fee is 55 dollars."),
        ("number_swap", "The fee is 40 dollars.", "", "The fee is 41 dollars."),
        ("number_swap", "It costs 14,000 dollars.", "", "It costs 13,999 dollars."),
        (
            "date_swap",
            SEED,
            SEED_DOCUMENT,
            "Mr. Smith said the council will approve three new parking permits on Friday.",
        ),
        ("date_swap", "It opened in March 2019.", "", "It opened in April 2019."),
        ("date_swap", "It opened in March 2019.", "", "It opened in March 2020."),
        ("pronoun_swap", "He thanked her for her help.", "", "She thanked her for her help."),
        ("pronoun_swap", "He thanked her for her help.", "", "He thanked him for her help."),
        ("pronoun_swap", "He thanked her for her help.", "", "He thanked her for his help."),
        ("pronoun_swap", "We're sure they said so.", "", "They're sure they said so."),
        ("negation", SEED, "", "Mr. Smith said the council will not approve three new parking permits on Monday."),
        ("negation", "The plan is not expensive.", "", "The plan is expensive."),
        ("negation", "She didn't sign it.", "", "She did sign it."),
        ("negation", "The city can pay.", "", "The city cannot pay."),
        ("negation", "The plan which covers theft.", "", "The plan which does not cover theft."),
        ("negation", "It covers theft.", "", "It does not cover theft."),
        ("negation", "The agent called the client.", "", "The agent did not call the client."),
        ("negation", "The board decided the matter.", "", "The board did not decide the matter."),
        ("negation", "The agent advised the client.", "", "The agent did not advise the client."),
        ("negation", "The city stopped the project.", "", "The city did not stop the project."),
        ("negation", "The mayor said that it works.", "", "The mayor did not say that it works."),
        ("antonym_swap", SEED, "", "Mr. Smith said the council will reject three new parking permits on Monday."),
        ("antonym_swap", "Prices increased before the vote.", "", "Prices decreased before the vote."),
        ("antonym_swap", "Prices increased before the vote.", "", "Prices increased after the vote."),
        ("antonym_swap", "More people came.", "", "Less people came."),
        ("paraphrase", SEED, "", "Mr. Smith stated the council will approve three new parking permits on Monday."),
        ("paraphrase", SEED, "", "Mr. Smith said the council will approve 3 new parking permits on Monday."),
        ("paraphrase", "They did not buy a big car.", "", "They didn't buy a big car."),
        ("paraphrase", "They did not buy a big car.", "", "They did not purchase a big car."),
        ("paraphrase", "They did not buy a big car.", "", "They did not buy a large car."),
        ("paraphrase", "It isn't 7 days.", "", "It is not 7 days."),
        ("paraphrase", "It isn't 7 days.", "", "It isn't seven days."),
        ("paraphrase", "It covers damage, theft and vandalism.", "", "It covers damage, vandalism and theft."),
        ("paraphrase", "It was also very cheap.", "", "It was very cheap."),
    ],
)
def test_each_rule_gives_its_known_edit(kind, seed, document, expected):
    assert expected in texts_of(kind, seed, document)


@pytest.mark.parametrize(
    "kind, seed",
    [
        ("negation", "How can we build agents?"),  # no "How cannot we"
        ("negation", "The insurance plans that fit."),  # "plans" after a noun may be a noun
        ("paraphrase", "It has pre-existing conditions and deductibles."),  # "conditions" has a modifier
        ("negation", "It has a comprehensive coverage."),  # "has" is not a perfect tense here
        ("negation", "Do you have insurance?"),
        ("entity_swap", "We propose the Neuro-Symbolic Concept Learner (NS-CL)."),  # an acronym is the same name
        ("antonym_swap", "They moved to New York."),  # a name, not the adjective
        ("number_swap", "Call me in 2019."),  # a year is a date
        ("pronoun_swap", "The US economy grew."),
    ],
)
def test_rules_leave_alone_what_they_cannot_edit_safely(kind, seed):
    assert texts_of(kind, seed) == set()


def test_edit_labels_follow_their_kind():
    for edit in offline.edits(SEED, SEED_DOCUMENT, n=100):
        expected = offline.CONSISTENT if edit.kind in offline.CONSISTENT_KINDS else offline.INCONSISTENT
        assert edit.expected == expected
        assert edit.kind in offline.CONSISTENT_KINDS + offline.INCONSISTENT_KINDS
        assert edit.note


def test_edits_keep_sentence_start_capitals_and_punctuation():
    texts = texts_of("pronoun_swap", "He left. Then he came back!")
    assert texts == {"She left. Then he came back!", "He left. Then she came back!"}


# --- edits: properties --------------------------------------------------------------------------


def assert_valid(edits, seed, n):
    texts = [e.text for e in edits]
    assert len(edits) <= n
    assert len(set(texts)) == len(texts)
    assert seed not in texts
    assert all(offline.word_edit_distance(seed, t) <= offline.MAX_EDIT_DISTANCE for t in texts)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 30])
def test_edits_are_minor_distinct_and_at_most_n(n):
    edits = offline.edits(SEED, SEED_DOCUMENT, n=n)
    assert len(edits) == n
    assert_valid(edits, SEED, n)


def test_edits_are_deterministic_for_a_seed_and_differ_for_another():
    first = offline.edits(SEED, SEED_DOCUMENT, n=10, rng_seed=7)
    assert first == offline.edits(SEED, SEED_DOCUMENT, n=10, rng_seed=7)
    other = offline.edits(SEED, SEED_DOCUMENT, n=10, rng_seed=8)
    assert {e.text for e in first} != {e.text for e in other}


def test_edits_mix_both_labels_about_half_and_half():
    edits = offline.edits(RICH_SEED, SEED_DOCUMENT, n=20)
    counts = Counter(e.expected for e in edits)
    assert counts[offline.CONSISTENT] == counts[offline.INCONSISTENT] == 10
    assert len({e.kind for e in edits}) == 7  # all kinds: the seed offers each one


def test_edits_return_fewer_rather_than_pad():
    edits = offline.edits("Rain fell.", n=30)
    assert edits == []  # no rule applies: no padding with duplicates
    edits = offline.edits("Prices rose before noon.", n=30)
    assert 0 < len(edits) < 30
    assert_valid(edits, "Prices rose before noon.", 30)


def test_edits_on_every_summedits_seed_are_valid_and_mixed():
    seeds = seed_summaries()
    assert len(seeds) >= 4
    per_seed = []
    for seed, document in seeds:
        edits = offline.edits(seed, document, n=30)
        assert_valid(edits, seed, 30)
        per_seed.append(edits)
    both = sum({e.expected for e in edits} == {offline.CONSISTENT, offline.INCONSISTENT} for edits in per_seed)
    assert both == len(seeds)  # measured: every sample seed gets both labels
    assert sum(len(edits) for edits in per_seed) / len(seeds) >= 20  # measured 24.5 (30, 30, 13, 25)
    kinds = Counter(e.kind for edits in per_seed for e in edits)
    assert len(kinds) >= 5
    share = kinds["paraphrase"] / sum(kinds.values())
    assert 0.3 <= share <= 0.6  # measured 0.42


def test_edited_summedits_summaries_work_as_seeds_too():
    """The released edits are realistic, varied seeds: every one must yield valid edits or none."""
    rows = [row for path in sorted(SUMMEDITS.glob("*.json")) for row in json.loads(path.read_text(encoding="utf-8"))]
    for row in rows[::4]:
        assert_valid(offline.edits(row["summary"], row["doc"], n=10), row["summary"], 10)


@pytest.mark.parametrize(
    "text",
    [
        "Élodie a dit que le café à Zürich coûte 3 €. ",
        "The 🚀 launch was on Monday 🎉 and he said 😀 it will cost 5 dollars.",
        "הוא אמר שהתוכנית תעלה 40 שקלים. قال إنه سيدفع ٣ دنانير.",
        "He said \u202ethe plan\u202c is new.",
        "e\u0301 combining accents: he is cafe\u0301 owner.",
        "!!! ??? ...",
        "\n\n\t",
    ],
)
def test_unicode_and_odd_input_does_not_crash(text):
    edits = offline.edits(text, text, n=10)
    assert_valid(edits, text, 10)
    offline.topics(text)
    summary = offline.summary(text, "plan", max_words=5)
    assert len(summary.split()) <= 5
    assert bool(summary) == bool(text.strip())


def test_empty_input_gives_empty_results():
    assert offline.edits("") == []
    assert offline.edits("   ", "document") == []
    assert offline.edits("He is here.", n=0) == []
    assert offline.topics("") == []
    assert offline.summary("", "topic") == ""
    assert offline.word_tokens("") == []
    assert offline.word_edit_distance("", "") == 0
