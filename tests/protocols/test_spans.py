"""Span-level inconsistencies (Ramprasad et al.): the draft, submit, corrections, offsets in code
points, and who may open what."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.agreement import registry
from annotation.agreement import services as agreement
from annotation.corpus.models import Document, Summary
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import setup, spans
from annotation.protocols.models import Assignment, Campaign, Judgment, JudgmentRevision, Protocol

pytestmark = pytest.mark.django_db
SECRET_SYSTEM = "secret-summarizer-sigma"
TURNS = [
    {"speaker": "Lena", "text": "Let's meet at half past four at the station."},
    {"speaker": "Tom", "text": "Fine. Can you bring the tickets?"},
    {"speaker": "Lena", "text": "Sure, I have them."},
]
TEXT = "Lena and Tom will meet at 5 pm at the station. Tom will bring the tickets."


def make_summary(project, text: str, n: int = 0) -> Summary:
    document = Document.objects.create(
        project=project,
        external_id=f"dlg-{n}",
        kind="dialogue",
        turns=TURNS,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in TURNS),
    )
    return Summary.objects.create(
        project=project, document=document, external_id=f"s-{n}", system=SECRET_SYSTEM, text=text
    )


@pytest.fixture
def world(project, annotator, lead, make_user):
    second = make_user("ann2")
    projects.add_member(project=project, user=second, role=Role.ANNOTATOR)
    viewer = make_user("viewer")
    projects.add_member(project=project, user=viewer, role=Role.VIEWER)
    make_summary(project, TEXT)
    plan = setup.Plan(name="Spans", slug="spans", annotators=[annotator, second], per_item=2, protocol=Protocol.SPANS)
    campaign = setup.create_campaign(project=project, plan=plan)
    mine = Assignment.objects.get(item__campaign=campaign, annotator=annotator)
    theirs = Assignment.objects.get(item__campaign=campaign, annotator=second)
    return {"campaign": campaign, "mine": mine, "theirs": theirs, "second": second, "viewer": viewer}


def span(text: str, quoted: str, ident: int = 0, **extra) -> dict:
    start = text.index(quoted)
    value = {"id": ident, "start": start, "end": start + len(quoted), "text": quoted}
    return (
        value
        | {"category": "logical_error", "error_class": "intrinsic", "evidence": [0], "no_evidence": False, "note": ""}
        | extra
    )


def draft_of(*items, **extra) -> dict:
    return {"spans": json.dumps(list(items))} | extra


def submit(assignment, draft: dict, attempt: str = "t1"):
    cleaned = spans.clean_draft(draft, assignment)
    return spans.submit(assignment=assignment, draft=cleaned, client_token=attempt, user=assignment.annotator)


def judgments(assignment) -> dict:
    return {j.target.partition("/")[2] or j.dimension: j for j in Judgment.objects.filter(assignment=assignment)}


# -- setup and submit ---------------------------------------------------------------------------------
def test_a_campaign_has_one_item_per_summary_and_the_ramprasad_categories(world):
    campaign = world["campaign"]
    item = campaign.items.get()
    assert item.key == f"summary:{item.summaries.get().pk}"
    assert campaign.taxonomy.slug == "ramprasad-categories"
    assert len(spans.labels_of(campaign.taxonomy)) == 6


def test_submit_records_each_span_and_the_summary_label(world):
    mine = world["mine"]
    at5 = span(TEXT, "at 5 pm", 3, note="Half past four, not 5.")
    tom = span(
        TEXT, "Tom will", 4, category="referential_error", error_class="extrinsic", evidence=[], no_evidence=True
    )
    submit(mine, draft_of(tom, at5))
    found = judgments(mine)
    summary = mine.item.summaries.get()
    assert found["has_inconsistency"].value is True
    assert found["has_inconsistency"].target == f"summary:{summary.pk}"
    assert found["span:3"].target == f"summary:{summary.pk}/span:3"
    assert found["span:3"].value == {
        "start": 23,
        "end": 30,
        "text": "at 5 pm",
        "category": "logical_error",
        "error_class": "intrinsic",
        "evidence": {"text": "Lena: Let's meet at half past four at the station.", "turns": [0]},
    }
    assert found["span:3"].explanation == "Half past four, not 5."
    assert found["span:3"].taxonomy == world["campaign"].taxonomy
    assert found["span:4"].value["evidence"] == {"text": None, "turns": []}
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.SUBMITTED
    assert world["campaign"].__class__.objects.get(pk=world["campaign"].pk).labels_changed_at is not None


def test_submit_is_idempotent_on_the_client_token(world):
    mine = world["mine"]
    submit(mine, draft_of(span(TEXT, "at 5 pm")))
    submit(mine, draft_of(span(TEXT, "at 5 pm"), span(TEXT, "Tom will", 1)))  # the same token again
    assert Judgment.objects.filter(assignment=mine, dimension="span").count() == 1


@pytest.mark.parametrize(
    "text, quoted",
    [
        ("Party 🎉 with 👩‍👩‍👧 at 5 pm, said Tom.", "at 5 pm"),  # astral emoji and a ZWJ sequence before the span
        ("Tom 👍🏽 will bring the tickets.", "👍🏽 will"),  # an emoji with a skin tone inside the span
        ("Cafe\u0301 at 5 pm, then Tom.", "Cafe\u0301"),  # a combining accent
        ("לנה ותום ייפגשו ב-5 בערב at the station.", "ב-5 בערב"),  # right-to-left text
        ("مرحبا Tom, at 5 pm.", "at 5 pm"),  # Arabic before the span
        ("Lena and Tom.\nThey meet\r\nat 5 pm.", "They meet\r\nat 5 pm"),  # line breaks, one of them CRLF
    ],
)
def test_offsets_are_code_points_checked_against_the_summary(project, world, text, quoted):
    summary = make_summary(project, text, n=7)
    item = world["mine"].item
    item.summaries.set([summary])
    submit(world["mine"], draft_of(span(text, quoted)))
    value = judgments(world["mine"])["span:0"].value
    assert text[value["start"] : value["end"]] == quoted
    utf16_start = len(text[: value["start"]].encode("utf-16-le")) // 2
    if any(ord(c) > 0xFFFF for c in text[: value["start"]]):
        assert utf16_start != value["start"]  # the unit matters: UTF-16 offsets would be wrong here


def test_a_span_whose_text_does_not_match_is_refused_on_save_and_on_submit(world):
    mine = world["mine"]
    wrong = span(TEXT, "at 5 pm") | {"start": 24, "end": 31}
    draft = spans.clean_draft(draft_of(wrong, span(TEXT, "Tom will", 1)), mine)
    assert [s["text"] for s in json.loads(draft["spans"])] == ["Tom will"]
    assert "reads “t 5 pm ”" in draft["refused"][0] and "not “at 5 pm”" in draft["refused"][0]
    with pytest.raises(ValidationError) as caught:
        spans.submit(assignment=mine, draft=draft, client_token="t", user=mine.annotator)
    assert "mark it again" in caught.value.message_dict["spans"][0]
    assert not Judgment.objects.filter(assignment=mine).exists()
    # The check holds for a draft that never went through clean_draft too.
    with pytest.raises(ValidationError, match="outside the summary"):
        spans.submit(
            assignment=mine, draft=draft_of(span(TEXT, "Tom") | {"end": 500}), client_token="u", user=mine.annotator
        )


def test_overlapping_spans_are_refused_with_a_message(world):
    draft = spans.clean_draft(draft_of(span(TEXT, "at 5 pm"), span(TEXT, "5 pm at the", 1)), world["mine"])
    assert len(json.loads(draft["spans"])) == 1
    assert "may not overlap" in draft["refused"][0]


def test_no_span_needs_the_explicit_confirmation(world):
    mine = world["mine"]
    with pytest.raises(ValidationError) as caught:
        submit(mine, {})
    assert "confirm that this summary has no inconsistency" in caught.value.message_dict["no_inconsistency"][0]
    submit(mine, {"no_inconsistency": "on"})
    assert judgments(mine)["has_inconsistency"].value is False
    assert not Judgment.objects.filter(assignment=mine, dimension="span").exists()


def test_spans_and_the_confirmation_together_are_refused(world):
    with pytest.raises(ValidationError) as caught:
        submit(world["mine"], draft_of(span(TEXT, "at 5 pm"), no_inconsistency="on"))
    assert "untick the box" in caught.value.message_dict["no_inconsistency"][0]


def test_an_incomplete_span_says_what_it_lacks(world):
    bare = span(TEXT, "at 5 pm", 2, category="", error_class="", evidence=[])
    with pytest.raises(ValidationError) as caught:
        submit(world["mine"], draft_of(bare))
    assert caught.value.message_dict["span-2"] == [
        "Span 1 (“at 5 pm”): choose its category, intrinsic or extrinsic, its evidence (or that there is none)."
    ]


def test_a_correction_sets_a_removed_span_to_null_and_keeps_its_history(world):
    mine = world["mine"]
    submit(mine, draft_of(span(TEXT, "at 5 pm"), span(TEXT, "Tom will", 1)), attempt="first")
    submit(mine, draft_of(span(TEXT, "at 5 pm", category="world_knowledge")), attempt="second")
    found = judgments(mine)
    assert found["span:1"].value is None
    assert found["span:0"].value["category"] == "world_knowledge"
    assert JudgmentRevision.objects.get(judgment=found["span:1"]).value["text"] == "Tom will"
    submit(mine, {"no_inconsistency": "on"}, attempt="third")
    found = judgments(mine)
    assert (found["span:0"].value, found["span:1"].value, found["has_inconsistency"].value) == (None, None, False)
    assert JudgmentRevision.objects.filter(judgment=found["has_inconsistency"]).get().value is True
    # Nulls count as "marked nothing" for span F1, never as a span.
    rows = [r for r in agreement.judgment_rows(world["campaign"], {}) if r["dimension"] == "span"]
    assert {ratings[2] for ratings in registry.spans(rows)} == {()}


def test_the_agreement_dashboard_reads_these_judgments(world):
    submit(world["mine"], draft_of(span(TEXT, "at 5 pm")))
    submit(world["theirs"], draft_of(span(TEXT, "5 pm")))
    figures = agreement.compute(world["campaign"], n_boot=20)
    by_metric = {(m["dimension"], m["metric"]): m for m in figures["metrics"]}
    assert by_metric[("span", "pairwise_span_f1")]["value"] == pytest.approx(2 * 2 / (3 + 2))
    assert ("has_inconsistency", "krippendorff_alpha") in by_metric
    assert by_metric[("has_inconsistency", "percent_agreement")]["value"] == 1.0


def test_an_annotator_who_marked_nothing_takes_part_in_span_f1(world):
    submit(world["mine"], draft_of(span(TEXT, "at 5 pm")))
    submit(world["theirs"], draft_of(no_inconsistency="on"))
    figures = agreement.compute(world["campaign"], n_boot=20)
    f1 = next(m for m in figures["metrics"] if m["metric"] == "pairwise_span_f1")
    assert f1["value"] == 0.0 and f1["n_annotators"] == 2


# -- untrusted drafts ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw",
    [
        {"spans": "not json"},
        {"spans": "{}"},
        {"spans": '[1, null, "x", []]'},
        {"spans": 5},
        {"spans": [{"id": "1", "start": 0, "end": 4, "text": "Lena"}]},
        {"spans": [{"id": 1, "start": True, "end": 4, "text": "Lena"}]},
        {"spans": [{"id": 1, "start": 0, "end": 4, "text": "Lena", "evidence": [7]}]},
        {"spans": [{"id": 1, "start": 0, "end": 4, "text": "Lena", "evidence": "0"}]},
        {"spans": [{"id": 1, "start": 0, "end": 4, "text": "Lena", "category": "made_up"}]},
        {"spans": [{"id": 1, "start": 0, "end": 4, "text": "Lena", "error_class": ["intrinsic"]}]},
        {"spans": [{"id": -1, "start": 0, "end": 4, "text": "Lena"}]},
        {"spans": "[" + ",".join(["{}"] * 50_000) + "]"},
        {"spans": [span(TEXT, "Lena", n) | {"start": 0, "end": 4} for n in range(150)]},
        {"spans": None, "no_inconsistency": ["on"], "_focus": {"x": 1}, "other": "kept out"},
        "not a dict",
    ],
)
def test_clean_draft_never_crashes_and_keeps_only_checked_spans(world, raw):
    draft = spans.clean_draft(raw, world["mine"])
    assert set(draft) <= {"spans", "refused", "no_inconsistency", "_focus"}
    kept = json.loads(draft.get("spans", "[]"))
    assert len(kept) <= 1 and all(TEXT[s["start"] : s["end"]] == s["text"] for s in kept)


def test_a_long_note_is_cut_and_evidence_is_sorted_once(world):
    draft = spans.clean_draft(draft_of(span(TEXT, "at 5 pm", note="x" * 3000, evidence=[2, 0, 2])), world["mine"])
    (kept,) = json.loads(draft["spans"])
    assert len(kept["note"]) == spans.MAX_NOTE and kept["evidence"] == [0, 2]


# -- the views ----------------------------------------------------------------------------------------
def url(assignment, what: str = "") -> str:
    return f"/p/demo/assignments/{assignment.pk}/{what}"


def test_the_annotator_sees_the_summary_and_the_turns_but_not_the_system(client, world):
    client.force_login(world["mine"].annotator)
    response = client.get(url(world["mine"]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Lena and Tom will meet" in html and "half past four" in html and "Circumstantial Inference" in html
    assert SECRET_SYSTEM not in html
    assert 'id="spans-config"' in html and "<script>" not in html.replace(
        '<script id="spans-config" type="application/json">', ""
    )


def test_autosave_cleans_the_draft_and_a_stale_version_is_a_conflict(client, world):
    mine = world["mine"]
    client.force_login(mine.annotator)
    body = {"version": 0, "draft": draft_of(span(TEXT, "at 5 pm"), _focus="spans")}
    response = client.post(url(mine, "draft/"), json.dumps(body), content_type="application/json")
    assert response.status_code == 200 and response.json()["version"] == 1
    mine.refresh_from_db()
    assert json.loads(mine.draft["spans"])[0]["text"] == "at 5 pm"
    stale = client.post(url(mine, "draft/"), json.dumps(body), content_type="application/json")
    assert stale.status_code == 409
    garbage = {"version": 1, "draft": {"spans": '[{"id": {}}]'}}
    response = client.post(url(mine, "draft/"), json.dumps(garbage), content_type="application/json")
    assert response.status_code == 200
    mine.refresh_from_db()
    assert "spans" not in mine.draft and mine.draft["refused"]


def test_submitting_the_form_records_the_spans_or_shows_what_is_missing(client, world):
    mine = world["mine"]
    client.force_login(mine.annotator)
    incomplete = {"draft_version": "0", "client_token": "a", "spans": ""}
    response = client.post(url(mine, "submit/"), incomplete)
    assert response.status_code == 400
    assert "confirm that this summary has no inconsistency" in response.content.decode()
    complete = {"draft_version": "1", "client_token": "b", "spans": json.dumps([span(TEXT, "at 5 pm")])}
    response = client.post(url(mine, "submit/"), complete)
    assert response.status_code == 302
    assert judgments(mine)["span:0"].value["text"] == "at 5 pm"
    page = client.get(url(mine)).content.decode()
    assert "You submitted this summary" in page and "at 5 pm" in page


def test_another_annotator_and_an_outsider_get_404(client, world, outsider):
    mine = world["mine"]
    for user in (world["second"], outsider):
        client.force_login(user)
        assert client.get(url(mine)).status_code == 404
        assert client.post(url(mine, "draft/"), "{}", content_type="application/json").status_code == 404
        assert client.post(url(mine, "submit/"), {"no_inconsistency": "on"}).status_code == 404
    assert not Judgment.objects.exists()


def test_the_statistics_are_for_leads_and_viewers_only(client, world, lead, outsider):
    campaign = world["campaign"]
    stats = f"/p/demo/campaigns/{campaign.pk}/spans/"
    for user, status in ((lead, 200), (world["viewer"], 200), (world["mine"].annotator, 404), (outsider, 404)):
        client.force_login(user)
        assert client.get(stats).status_code == status
    client.force_login(lead)
    other = Campaign.objects.create(project=campaign.project, slug="t1", name="T1", protocol=Protocol.TOFUEVAL_TASK1)
    assert client.get(f"/p/demo/campaigns/{other.pk}/spans/").status_code == 404


def test_evidence_in_a_source_that_is_not_a_dialogue_points_at_its_sentences(project, world):
    document = world["mine"].item.document
    document.kind, document.turns = "text", []
    document.text = "Lena and Tom meet at half past four. Tom asks Lena to bring the tickets. She has them."
    document.save()
    assert [u["text"] for u in spans.evidence_units(document)][1] == "Tom asks Lena to bring the tickets."
    draft = spans.clean_draft(
        draft_of(span(TEXT, "at 5 pm", evidence=[2]), span(TEXT, "Tom will", 1, evidence=[3])), world["mine"]
    )
    assert [s["text"] for s in json.loads(draft["spans"])] == ["at 5 pm"] and "does not exist" in draft["refused"][0]
