"""Expert review of TofuEval task 1 labels (App. F.4): the queue, keep / overturn, the second
reviewer's check, adjudication, and the pages' permissions and messages."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.corpus import services as corpus
from annotation.protocols import results, review, services
from annotation.protocols.models import Adjudication, Judgment, ReviewDecision
from tests.protocols.conftest import EXPLANATION, SECRET_SYSTEM, flag_first_sentence, keep_and_confirm, sentences

pytestmark = pytest.mark.django_db


def unit_url(world, item, sentence, action=""):
    base = (
        f"/p/{world['project'].slug}/campaigns/{world['campaign'].pk}/review/items/{item.pk}/sentences/{sentence.pk}/"
    )
    return base + (f"{action}/" if action else "")


def pseudonym(world, name: str) -> str:
    return world["project"].memberships.get(user=world[name]).pseudonym


def queue_url(world):
    return f"/p/{world['project'].slug}/campaigns/{world['campaign'].pk}/review/"


# -- services -----------------------------------------------------------------------------------
def test_queue_holds_sentences_labelled_inconsistent_in_submitted_assignments_only(review_world, flagged):
    item, first = flagged
    other = review_world["items"]["main-1"]
    draft_only = services.assign(item=other, annotator=review_world["annotator"], seed=1)
    services.save_draft(assignment_id=draft_only.pk, draft={f"s-{sentences(other)[0].pk}": "inconsistent"}, version=0)
    queues = review.queues(review_world["campaign"], review_world["rev_a"])
    assert [(u.item_id, u.sentence_id, u.flags, u.pilot) for u in queues["decide"]] == [(item.pk, first.pk, 1, True)]
    assert queues["check"] == queues["type"] == queues["waiting"] == []


def test_keep_then_confirm_adjudicates_and_leaves_the_raw_judgments_intact(review_world, flagged):
    item, first = flagged
    raw = list(Judgment.objects.filter(dimension="consistency").order_by("pk").values("pk", "value", "explanation"))
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep", note="")
    assert decision.status == "proposed"
    assert review.queues(review_world["campaign"], review_world["rev_a"])["waiting"][0].sentence_id == first.pk
    assert review.queues(review_world["campaign"], review_world["rev_b"])["check"][0].sentence_id == first.pk
    assert not Adjudication.objects.exists()

    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=True, note="Agreed.")
    decision.refresh_from_db()
    assert (decision.status, decision.checked_by, decision.check_note) == (
        "confirmed",
        review_world["rev_b"],
        "Agreed.",
    )
    adjudication = Adjudication.objects.get()
    assert (adjudication.item, adjudication.dimension, adjudication.target) == (
        item,
        "consistency",
        f"sentence:{first.pk}",
    )
    assert (adjudication.value, adjudication.decided_by, adjudication.sentence) == (
        "inconsistent",
        review_world["rev_a"],
        first,
    )
    assert adjudication.summary_id == first.summary_id
    after = list(Judgment.objects.filter(dimension="consistency").order_by("pk").values("pk", "value", "explanation"))
    assert after == raw
    review_world["campaign"].refresh_from_db()
    assert review_world["campaign"].labels_changed_at is not None


def test_overturning_needs_a_note(review_world, flagged):
    item, first = flagged
    with pytest.raises(ValidationError) as error:
        review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="overturn", note="  ")
    assert "note" in error.value.message_dict
    with pytest.raises(ValidationError):
        review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="maybe")
    assert not ReviewDecision.objects.exists()


def test_a_second_live_decision_is_refused_never_overwritten(review_world, flagged):
    item, first = flagged
    review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    with pytest.raises(ValidationError, match="Another reviewer has decided"):
        review.decide(item=item, sentence=first, reviewer=review_world["rev_b"], decision="overturn", note="Fine.")
    assert ReviewDecision.objects.get().decision == "keep"
    with pytest.raises(IntegrityError), transaction.atomic():  # the database holds the line too
        ReviewDecision.objects.create(
            item=item,
            summary_id=first.summary_id,
            sentence=first,
            target=f"sentence:{first.pk}",
            decision="keep",
            reviewer=review_world["rev_b"],
        )


def test_the_checker_must_differ_from_the_first_reviewer(review_world, flagged):
    item, first = flagged
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    with pytest.raises(ValidationError, match="cannot check your own"):
        review.check_decision(decision=decision, checker=review_world["rev_a"], confirm=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewDecision.objects.filter(pk=decision.pk).update(status="confirmed", checked_by=review_world["rev_a"])
    assert ReviewDecision.objects.get().status == "proposed" and not Adjudication.objects.exists()


def test_sending_back_needs_a_note_and_returns_the_unit_with_its_history(review_world, flagged):
    item, first = flagged
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    with pytest.raises(ValidationError) as error:
        review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=False, note="")
    assert "check_note" in error.value.message_dict
    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=False, note="Turn 1 says 4 pm?")
    assert [u.sentence_id for u in review.queues(review_world["campaign"], review_world["lead"])["decide"]] == [
        first.pk
    ]
    [old] = review.history(item, f"sentence:{first.pk}")
    assert (old.status, old.check_note, old.reviewer_name) == (
        "sent_back",
        "Turn 1 says 4 pm?",
        pseudonym(review_world, "rev_a"),
    )
    with pytest.raises(ValidationError, match="already been checked"):
        review.check_decision(decision=decision, checker=review_world["lead"], confirm=True)
    # The next decision is a new record; the sent-back one stays.
    review.decide(item=item, sentence=first, reviewer=review_world["lead"], decision="overturn", note="4 pm is right.")
    assert list(ReviewDecision.objects.order_by("pk").values_list("status", flat=True)) == ["sent_back", "proposed"]


def test_results_use_the_adjudicated_label(review_world, flagged):
    item, first = flagged
    # One of two annotators said inconsistent: a tie counts as inconsistent ...
    assert results.results(review_world["campaign"])["overall"]["n_inconsistent_sentences"] == 1
    decision = review.decide(
        item=item, sentence=first, reviewer=review_world["rev_a"], decision="overturn", note="Ana says 5 pm later."
    )
    assert results.results(review_world["campaign"])["overall"]["n_inconsistent_sentences"] == 1  # not yet checked
    review.check_decision(decision=decision, checker=review_world["lead"], confirm=True)
    # ... until the review overturns it.
    assert results.results(review_world["campaign"])["overall"]["n_inconsistent_sentences"] == 0
    assert Adjudication.objects.get().value == "consistent"


def test_progress_counts_units_without_a_confirmed_decision(review_world, flagged):
    item, first = flagged
    flag_first_sentence(review_world, "main-1")
    assert results.progress(review_world["campaign"])["waiting_for_review"] == 2
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    assert results.progress(review_world["campaign"])["waiting_for_review"] == 2
    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=True)
    assert results.progress(review_world["campaign"])["waiting_for_review"] == 1


def test_export_carries_the_adjudicated_label_beside_the_raw_judgments(review_world, flagged):
    item, first = flagged
    keep_and_confirm(item, first, reviewer=review_world["rev_a"], checker=review_world["rev_b"])
    review.type_errors(item=item, sentence=first, reviewer=review_world["rev_a"], codes=["extrinsic_information"])
    lines = [json.loads(line) for line in corpus.export_lines(project=review_world["project"])]
    [summary] = [r for r in lines if r["type"] == "summary" and r["id"] == "sum-pilot-1"]
    prefix, rev_a = review_world["project"].pseudonym_prefix, pseudonym(review_world, "rev_a")
    [adjudicated] = summary["adjudicated"]
    assert adjudicated["dimension"] == "consistency" and adjudicated["unit"] == "sentence:0"
    assert adjudicated["value"] == "inconsistent" and adjudicated["decided_by"] == f"{prefix}:{rev_a}"
    raw = [j for j in summary["judgments"] if j["dimension"] == "consistency" and j["unit"] == "sentence:0"]
    assert sorted(j["value"] for j in raw) == ["consistent", "inconsistent"]
    assert {j["stage"] for j in raw} == {"annotate"}
    [typed] = [j for j in summary["judgments"] if j["dimension"] == "error_types"]
    assert (typed["stage"], typed["annotator"], typed["value"]) == (
        "error_typing",
        f"{prefix}:{rev_a}",
        ["extrinsic_information"],
    )
    assert typed["taxonomy"]["slug"] == "tofueval-error-types"
    [line] = [r for r in lines if r["type"] == "item" and r["key"] == "pilot-1"]
    assert {(a["annotator"], a["stage"]) for a in line["assignments"]} >= {(f"{prefix}:{rev_a}", "error_typing")}


def test_exported_review_labels_validate_against_the_schema(review_world, flagged):
    import jsonschema

    from annotation.corpus.formats import jsonl

    item, first = flagged
    keep_and_confirm(item, first, reviewer=review_world["rev_a"], checker=review_world["rev_b"])
    review.type_errors(item=item, sentence=first, reviewer=review_world["rev_a"], codes=["contradiction"])
    validator = jsonschema.Draft202012Validator(json.loads(jsonl.SCHEMA_PATH.read_text()))
    for line in corpus.export_lines(project=review_world["project"]):
        validator.validate(json.loads(line))


# -- pages ----------------------------------------------------------------------------------------
def test_only_reviewers_and_leads_get_the_review_pages(client, review_world, flagged, outsider):
    item, first = flagged
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    urls = [queue_url(review_world), unit_url(review_world, item, first), queue_url(review_world) + "next/decide/"]
    posts = [unit_url(review_world, item, first, action) for action in ("decide", "check", "types")]
    for user in (review_world["annotator"], review_world["viewer"], outsider):
        client.force_login(user)
        assert [client.get(url).status_code for url in urls] == [404, 404, 404], user
        data = {"decision": "keep", "verdict": "confirm", "codes": "other", "note": "x", "check_note": "x"}
        assert [client.post(url, data).status_code for url in posts] == [404, 404, 404], user
    assert ReviewDecision.objects.get() == decision and decision.status == "proposed"
    for user in (review_world["rev_b"], review_world["lead"]):
        client.force_login(user)
        assert [client.get(url).status_code for url in urls[:2]] == [200, 200]


def test_a_sentence_nobody_flagged_is_not_a_review_page(client, review_world, flagged):
    item, _ = flagged
    client.force_login(review_world["rev_a"])
    assert client.get(unit_url(review_world, item, sentences(item)[1])).status_code == 404
    other = review_world["items"]["main-1"]
    assert client.get(unit_url(review_world, other, sentences(item)[0])).status_code == 404


def test_review_page_shows_pseudonyms_and_explanations_never_names(client, review_world, flagged):
    item, first = flagged
    client.force_login(review_world["rev_a"])
    for url in (queue_url(review_world), unit_url(review_world, item, first)):
        html = client.get(url).content.decode()
        assert SECRET_SYSTEM not in html
        assert "ann1" not in html and "yorick-annotates" not in html and "rev-b" not in html
    html = client.get(unit_url(review_world, item, first)).content.decode()
    assert EXPLANATION.replace(",", "") in html.replace(",", "")
    assert "<mark" in html and "They meet at 5 pm." in html
    for name in ("annotator", "annotator2"):  # the two annotators, by pseudonym
        assert f">{pseudonym(review_world, name)}<" in html
    assert 'name="decision"' in html and "I bring the tickets." in html  # the form, and the source


def test_overturn_without_a_note_is_a_message_in_the_form(client, review_world, flagged):
    item, first = flagged
    client.force_login(review_world["rev_a"])
    response = client.post(unit_url(review_world, item, first, "decide"), {"decision": "overturn", "note": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Say why the label is overturned" in html and 'id="decision-overturn" value="overturn"' in html
    assert 'value="overturn" data-key="o" data-then="note" checked' in html
    response = client.post(unit_url(review_world, item, first, "decide"), {})
    assert response.status_code == 400 and "Choose whether to keep or overturn" in response.content.decode()
    assert not ReviewDecision.objects.exists()


def test_deciding_goes_on_to_the_next_unit_of_the_queue(client, review_world, flagged):
    item, first = flagged
    main, main_first = flag_first_sentence(review_world, "main-1")
    client.force_login(review_world["rev_a"])
    response = client.post(unit_url(review_world, item, first, "decide"), {"decision": "keep", "note": ""})
    assert response.status_code == 302 and response["Location"].endswith("/review/next/decide/")
    assert client.get(response["Location"])["Location"] == unit_url(review_world, main, main_first)
    client.post(unit_url(review_world, main, main_first, "decide"), {"decision": "overturn", "note": "Said at 5."})
    assert client.get(queue_url(review_world) + "next/decide/")["Location"] == queue_url(review_world)
    assert ReviewDecision.objects.filter(reviewer=review_world["rev_a"]).count() == 2


def test_ones_own_decision_is_not_offered_for_checking(client, review_world, flagged):
    item, first = flagged
    review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    client.force_login(review_world["rev_a"])
    html = client.get(unit_url(review_world, item, first)).content.decode()
    assert 'name="verdict"' not in html and "This is your decision" in html
    response = client.post(unit_url(review_world, item, first, "check"), {"verdict": "confirm"})
    assert response.status_code == 400 and "cannot check your own" in response.content.decode()
    client.force_login(review_world["rev_b"])
    assert 'name="verdict"' in client.get(unit_url(review_world, item, first)).content.decode()
    response = client.post(unit_url(review_world, item, first, "check"), {"verdict": "send_back", "check_note": ""})
    assert response.status_code == 400 and "Say why you send the decision back" in response.content.decode()
    response = client.post(unit_url(review_world, item, first, "check"), {"verdict": "confirm"})
    assert response.status_code == 302 and response["Location"].endswith("/review/next/check/")
    assert ReviewDecision.objects.get().status == "confirmed"


def test_sent_back_decision_and_note_are_shown_to_the_next_reviewer(client, review_world, flagged):
    item, first = flagged
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=False, note="Check turn 1 again.")
    client.force_login(review_world["lead"])
    html = client.get(unit_url(review_world, item, first)).content.decode()
    assert "Earlier decisions, sent back" in html and "Check turn 1 again." in html and 'name="decision"' in html


def test_home_page_shows_a_reviewers_queues(client, review_world, flagged):
    item, first = flagged
    review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    client.force_login(review_world["rev_b"])
    html = client.get("/").content.decode()
    assert "Review: 0 to decide, 1 to check, 0 to type" in html and queue_url(review_world) in html
    client.force_login(review_world["annotator"])
    assert queue_url(review_world) not in client.get("/").content.decode()


def test_unit_and_queue_pages_query_count_is_flat(client, review_world, flagged, django_assert_num_queries):
    item, first = flagged
    flag_first_sentence(review_world, "main-1")
    client.force_login(review_world["rev_a"])
    # session, user, membership, nav; the unit (4); labels, history, typing, taxonomy, sentences, reviewers
    with django_assert_num_queries(19):
        client.get(unit_url(review_world, item, first))
    # session, user, membership, nav, campaign, the units (4), reviewers
    with django_assert_num_queries(10):
        client.get(queue_url(review_world))


def test_reviewed_labels_survive_an_export_import_round_trip(review_world, flagged, tmp_path):
    from annotation.projects.models import Project

    item, first = flagged
    keep_and_confirm(item, first, reviewer=review_world["rev_a"], checker=review_world["rev_b"])
    review.type_errors(item=item, sentence=first, reviewer=review_world["rev_a"], codes=["reasoning"])
    lines = list(corpus.export_lines(project=review_world["project"]))
    path = tmp_path / "export.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    corpus.import_data(project_slug="copy", format="jsonl", paths=[path])
    copy = Project.objects.get(slug="copy")
    assert Adjudication.objects.filter(item__campaign__project=copy, value="inconsistent").count() == 1
    typed = Judgment.objects.get(assignment__item__campaign__project=copy, dimension="error_types")
    assert (typed.value, typed.assignment.stage) == (["reasoning"], "error_typing")
