"""Strict parsing of model output: the shape the prompt asked for, or a ParseError with why."""

import pytest

from annotation.llm import parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "1. the library budget\n2. parking permits\n3. a new bus line",
            ["the library budget", "parking permits", "a new bus line"],
        ),
        ('  1) "Budget"\n\n2) Parking\n3) Buses  ', ["Budget", "Parking", "Buses"]),
    ],
)
def test_topics_accepted(text, expected):
    assert parsing.topics(text, n=3) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1. budget\n2. parking", "expected 3 topics, got 2"),
        ("1. a\n2. b\n3. c\n4. d", "expected 3 topics, got 4"),
        ("Here are the topics:\n1. a\n2. b\n3. c", "expected numbered lines"),
        ("1. a\n3. b\n4. c", "numbered 3 where 2"),
        ("1. a\n2. a very long topic that is really a whole sentence about things\n3. c", r"words \(at most 8\)"),
        ("1. Budget\n2. budget\n3. c", "repeat"),
        ("", "no numbered lines"),
    ],
)
def test_topics_refused(text, reason):
    with pytest.raises(parsing.ParseError, match=reason):
        parsing.topics(text, n=3)


def test_summary_word_limit():
    assert parsing.summary("Summary:  The council   approved the budget.") == "The council approved the budget."
    with pytest.raises(parsing.ParseError, match="51 words"):
        parsing.summary(" ".join(["word"] * 51))
    with pytest.raises(parsing.ParseError, match="empty"):
        parsing.summary("  \n ")


@pytest.mark.parametrize(("text", "label"), [("yes", "consistent"), ("No.", "inconsistent"), (" YES ", "consistent")])
def test_direct_judge(text, label):
    assert parsing.judge(text, explain=False) == {"label": label, "explanation": ""}


@pytest.mark.parametrize("text", ["yes, mostly", "The answer is yes", "maybe", "", "Yes because the document says so"])
def test_direct_judge_refuses_anything_but_yes_or_no(text):
    with pytest.raises(parsing.ParseError):
        parsing.judge(text, explain=False)


def test_explained_judge():
    text = "Explanation: The dialogue says 4 pm,\nnot 5 pm.\nAnswer: no"
    assert parsing.judge(text, explain=True) == {
        "label": "inconsistent",
        "explanation": "The dialogue says 4 pm, not 5 pm.",
    }
    with pytest.raises(parsing.ParseError, match="last line"):
        parsing.judge("Explanation: fine.\nAnswer: probably", explain=True)
    with pytest.raises(parsing.ParseError, match='no "Explanation:"'):
        parsing.judge("Answer: yes", explain=True)


def test_edits_keep_minor_distinct_ones_and_say_why_others_are_refused():
    seed = "The council approved the budget on Monday."
    text = (
        "1. The council rejected the budget on Monday.\n"
        "2. The council approved the budget on Monday.\n"
        "3. The council rejected the budget on Monday.\n"
        "4. Nobody knows what happened at the meeting, which was long and tedious for all.\n"
        "5. The council approved the budget on Tuesday."
    )
    accepted, refused = parsing.edits(text, seed=seed, n=10, max_distance=3)
    assert accepted == ["The council rejected the budget on Monday.", "The council approved the budget on Tuesday."]
    assert [r["reason"].split(":")[0] for r in refused] == [
        "same as the seed or an earlier edit",
        "same as the seed or an earlier edit",
        "not minor",
    ]


def test_edit_types_and_verdicts():
    assert parsing.edit_types("antonym_swap, entity_modification") == ["antonym_swap", "entity_modification"]
    with pytest.raises(parsing.ParseError):
        parsing.edit_types("a swap of antonyms")
    assert parsing.debate_turn("Argument: It says 4 pm.\nVerdict: inconsistent") == {
        "verdict": "inconsistent",
        "argument": "It says 4 pm.",
    }
    assert parsing.ambiguity("Description: none\nAmbiguous: no") == {"ambiguous": False, "description": ""}
    with pytest.raises(parsing.ParseError, match="says none"):
        parsing.ambiguity("Description: none\nAmbiguous: yes")


def test_untrusted_text_is_clipped_in_messages():
    with pytest.raises(parsing.ParseError) as caught:
        parsing.judge("<script>alert(1)</script>" * 50, explain=False)
    assert len(str(caught.value)) < 200
