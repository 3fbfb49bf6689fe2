"""Word diff of a seed summary and its edit: known chunks, round trips, escaped markup."""

import pytest

from annotation.llm import offline, worddiff

EQ, DEL, INS = "equal", "delete", "insert"


@pytest.mark.parametrize(
    "a, b, chunks",
    [
        ("same text.", "same text.", [(EQ, "same text.")]),
        (
            "The Gold plan is cheap.",
            "The Silver plan is cheap.",
            [(EQ, "The "), (DEL, "Gold "), (INS, "Silver "), (EQ, "plan is cheap.")],
        ),
        ("the sales agent called", "the agent called", [(EQ, "the "), (DEL, "sales "), (EQ, "agent called")]),
        ("the agent called", "the agent called him", [(EQ, "the agent called"), (INS, " him")]),
        ("He didn't call.", "He did not call.", [(EQ, "He "), (DEL, "didn't "), (INS, "did not "), (EQ, "call.")]),
        (
            "costs $XXX a month.",
            "costs $YYY a month!",
            [(EQ, "costs $"), (DEL, "XXX "), (INS, "YYY "), (EQ, "a month"), (DEL, "."), (INS, "!")],
        ),
        ("big red car", "small blue car", [(DEL, "big red "), (INS, "small blue "), (EQ, "car")]),
        ("", "new text", [(INS, "new text")]),
        ("old text", "", [(DEL, "old text")]),
        ("", "", []),
    ],
)
def test_diff_table(a, b, chunks):
    assert worddiff.diff(a, b) == chunks


def joined(chunks, keep):
    return "".join(text for op, text in chunks if op in keep)


ROUND_TRIPS = [
    ("The Gold plan costs $XXX a month.", "The Silver plan costs $YYY a month!"),
    ("  leading and trailing  ", "leading, and trailing"),
    ("a  b\tc\nd", "a b c d"),
    ("Punctuation... (lots) of it?!", "Punctuation. [lots] of it!"),
    ("Élodie a dit: « ça coûte 3 € ».", "Élodie a dit : « ça coûte 4 € »."),
    ("Launch 🚀 on Monday 🎉", "Launch 🚀🚀 on Friday"),
    ("הוא אמר שהתוכנית תעלה 40 שקלים.", "היא אמרה שהתוכנית תעלה 50 שקלים."),
    ("قال إنه سيدفع ٣ دنانير", "قال إنه لن يدفع ٣ دنانير"),
    ("cafe\u0301 owner", "café owner"),
    ("snake_case_name here", "snake_case_other here"),
    ("", "x"),
]


@pytest.mark.parametrize("a, b", ROUND_TRIPS)
def test_diff_round_trips(a, b):
    chunks = worddiff.diff(a, b)
    assert joined(chunks, {EQ, DEL}) == a
    assert joined(chunks, {EQ, INS}) == b
    assert all(text for _, text in chunks)
    assert all(x[0] != y[0] for x, y in zip(chunks, chunks[1:], strict=False))  # same-op neighbours merged


@pytest.mark.parametrize(
    "seed, document",
    [
        (
            "Mr. Smith said the city will buy three big parking lots on Monday; he also said it is able to increase the budget.",
            "Mayor: Ms. Garcia met Mr. Lee in Oakland on Friday.",
        ),
        ("We can't stop the 12 buses before 2019, she said.", "The 14 buses ran in 2018."),
    ],
)
def test_diff_round_trips_on_generated_edits(seed, document):
    for edit in offline.edits(seed, document, n=30):
        chunks = worddiff.diff(seed, edit.text)
        assert joined(chunks, {EQ, DEL}) == seed
        assert joined(chunks, {EQ, INS}) == edit.text
        assert any(op != EQ for op, _ in chunks)


@pytest.mark.parametrize(
    "a, b, markup",
    [
        ("The Gold plan.", "The Silver plan.", "The <del>Gold</del><ins>Silver</ins> plan."),
        ("the sales agent", "the agent", "the <del>sales</del> agent"),
        ("he called", "he called her", "he called<ins> her</ins>"),
        ("same", "same", "same"),
        (
            "<script>alert(1)</script> ok",
            "<script>alert(2)</script> ok",
            "&lt;script&gt;alert(<del>1</del><ins>2</ins>)&lt;/script&gt; ok",
        ),
        ("a & b", "a &amp; b", "a &amp;<del> </del><ins>amp; </ins>b"),
        ("plain", "<b>bold</b>", "<del>plain</del><ins>&lt;b&gt;bold&lt;/b&gt;</ins>"),
        ('it\'s "quoted"', "it's 'quoted'", "it's <del>\"</del><ins>'</ins>quoted<del>\"</del><ins>'</ins>"),
    ],
)
def test_markup_table(a, b, markup):
    assert worddiff.to_markup(worddiff.diff(a, b)) == markup


def test_markup_never_lets_a_tag_through():
    markup = worddiff.to_markup(worddiff.diff("safe text", "<script>evil()</script> text"))
    assert "<script>" not in markup
    assert "&lt;script&gt;" in markup
    stripped = markup.replace("<ins>", "").replace("</ins>", "").replace("<del>", "").replace("</del>", "")
    assert "<" not in stripped


def test_markup_of_nothing_is_empty():
    assert worddiff.to_markup([]) == ""
    assert worddiff.to_markup(worddiff.diff("", "")) == ""
