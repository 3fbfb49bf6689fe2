import pytest

from annotation.corpus import text

SPLITS = [
    ("One. Two three.", ["One.", "Two three."]),
    (
        "Dr. Smith met Mr. Jones at 5 p.m. on Monday. They agreed.",
        ["Dr. Smith met Mr. Jones at 5 p.m. on Monday.", "They agreed."],
    ),
    (
        "  Leading space.  Two spaces between.\nNew line here.",
        ["Leading space.", "Two spaces between.", "New line here."],
    ),
    ("Emoji 🎉 fine. Next 👩‍👩‍👧 one.", ["Emoji 🎉 fine.", "Next 👩‍👩‍👧 one."]),
    ("Cafe\u0301 is open. It closes late.", ["Cafe\u0301 is open.", "It closes late."]),
    ("", []),
    ("No final stop", ["No final stop"]),
]


@pytest.mark.parametrize(("source", "expected"), SPLITS)
def test_sentences_map_back_into_the_text_exactly(source, expected):
    sentences = text.split_sentences(source)
    assert [s.text for s in sentences] == expected
    assert all(source[s.start : s.end] == s.text for s in sentences)
    assert [s.index for s in sentences] == list(range(len(expected)))


def test_locating_a_sentence_that_is_not_there_is_an_error():
    with pytest.raises(ValueError, match="sentence 2 does not occur"):
        text.locate_sentences("A b. C d.", ["A b.", "X y."])


@pytest.mark.parametrize(
    ("line", "speaker", "said"),
    [
        ("Speaker 0: Hello there.", "Speaker 0", "Hello there."),
        ("Ben:Fine", "", "Ben:Fine"),
        ("The vote is at 10:30 tonight", "", "The vote is at 10:30 tonight"),
        ("Greta: I have to stay late again today :(", "Greta", "I have to stay late again today :("),
        ("no speaker at all", "", "no speaker at all"),
    ],
)
def test_turns_are_split_on_the_speaker_colon_only(line, speaker, said):
    assert text.parse_turn(line) == {"speaker": speaker, "text": said}


def test_dialogue_round_trips_through_its_canonical_text():
    turns = text.parse_dialogue("Ana: Hi\n\nBen: Hello: again")
    assert turns == [{"speaker": "Ana", "text": "Hi"}, {"speaker": "Ben", "text": "Hello: again"}]
    assert text.turns_text(turns) == "Ana: Hi\nBen: Hello: again"


def test_find_span_skips_taken_ranges():
    assert text.find_span("Tom and Tom", "Tom") == (0, 3)
    assert text.find_span("Tom and Tom", "Tom", [(0, 3)]) == (8, 11)
    assert text.find_span("Tom and Tom", "Tim") is None
