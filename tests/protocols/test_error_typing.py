"""Error typing of kept inconsistent sentences (TofuEval App. G): who types what, the majority
that results count, and reviewers' agreement on the pilot set."""

import pytest
from django.core.exceptions import ValidationError

from annotation.agreement import services as agreement
from annotation.protocols import results, review
from annotation.protocols.models import Assignment, Judgment
from tests.protocols.conftest import flag_first_sentence, keep_and_confirm, submit_labels

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept(review_world, flagged):
    """The pilot sentence, kept by rev-a and confirmed by rev-b."""
    item, first = flagged
    keep_and_confirm(item, first, reviewer=review_world["rev_a"], checker=review_world["rev_b"])
    return item, first


def type_as(world, name, unit, codes, note=""):
    item, sentence = unit
    return review.type_errors(item=item, sentence=sentence, reviewer=world[name], codes=codes, note=note)


def test_types_wait_for_a_confirmed_decision_to_keep(review_world, flagged):
    item, first = flagged
    with pytest.raises(ValidationError, match="once a decision to keep"):
        type_as(review_world, "rev_a", flagged, ["reasoning"])
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="keep")
    with pytest.raises(ValidationError, match="once a decision to keep"):
        type_as(review_world, "rev_a", flagged, ["reasoning"])
    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=True)
    assert type_as(review_world, "rev_a", flagged, ["reasoning"]).value == ["reasoning"]


def test_an_overturned_sentence_gets_no_types(review_world, flagged):
    item, first = flagged
    decision = review.decide(item=item, sentence=first, reviewer=review_world["rev_a"], decision="overturn", note="ok")
    review.check_decision(decision=decision, checker=review_world["rev_b"], confirm=True)
    assert review.queues(review_world["campaign"], review_world["lead"])["type"] == []
    with pytest.raises(ValidationError):
        type_as(review_world, "lead", flagged, ["reasoning"])


def test_types_are_checked_against_the_taxonomy(review_world, kept):
    for codes, field in [([], "codes"), (["made_up"], "codes"), (["other"], "note")]:
        with pytest.raises(ValidationError) as error:
            type_as(review_world, "rev_a", kept, codes)
        assert field in error.value.message_dict, codes
    assert not Judgment.objects.filter(dimension="error_types").exists()


def test_typing_is_a_judgment_of_an_error_typing_assignment(review_world, kept):
    judgment = type_as(review_world, "rev_a", kept, ["reasoning", "extrinsic_information", "reasoning"])
    assert judgment.value == ["extrinsic_information", "reasoning"]
    assert judgment.target == f"sentence:{kept[1].pk}" and judgment.taxonomy.slug == "tofueval-error-types"
    assignment = judgment.assignment
    assert (assignment.stage, assignment.annotator, assignment.status) == (
        "error_typing",
        review_world["rev_a"],
        Assignment.Status.SUBMITTED,
    )
    again = type_as(review_world, "rev_a", kept, ["other"], note="A made-up quote.")
    assert again.pk == judgment.pk and again.value == ["other"] and again.revisions.get().value == judgment.value
    # Typing assignments are no annotation work: they are not in the reviewer's open queues.
    assert not Assignment.objects.open_for(review_world["rev_a"]).exists()


def test_pilot_sentences_are_typed_by_every_reviewer_others_once(review_world, kept):
    main = flag_first_sentence(review_world, "main-1")
    keep_and_confirm(*main, reviewer=review_world["rev_b"], checker=review_world["lead"])
    campaign = review_world["campaign"]

    def to_type(name):
        return sorted(u.item_key for u in review.queues(campaign, review_world[name])["type"])

    assert to_type("rev_a") == to_type("rev_b") == to_type("lead") == ["main-1", "pilot-1"]
    type_as(review_world, "rev_a", kept, ["reasoning"])
    type_as(review_world, "rev_a", main, ["contradiction"])
    assert to_type("rev_a") == [] and to_type("rev_b") == to_type("lead") == ["pilot-1"]
    type_as(review_world, "rev_b", kept, ["reasoning"])
    type_as(review_world, "lead", kept, ["reasoning"])
    assert to_type("rev_a") == to_type("rev_b") == to_type("lead") == []


def test_results_count_a_type_that_a_majority_of_typers_chose(review_world, kept):
    main = flag_first_sentence(review_world, "main-1")
    keep_and_confirm(*main, reviewer=review_world["rev_b"], checker=review_world["lead"])
    type_as(review_world, "rev_a", kept, ["extrinsic_information", "reasoning"])
    type_as(review_world, "rev_b", kept, ["extrinsic_information"])
    type_as(review_world, "lead", kept, ["contradiction", "extrinsic_information"])
    type_as(review_world, "lead", main, ["nuanced_meaning_shift"])  # the only typer counts
    table = results.results(review_world["campaign"])["error_types"]
    assert {r["label"]: r["count"] for r in table} == {"extrinsic_information": 1, "nuanced_meaning_shift": 1}


def test_fleiss_kappa_of_reviewers_on_the_pilot_set(review_world, kept):
    """Two pilot sentences typed by three reviewers. Per-type units (types anyone used:
    contradiction, extrinsic, reasoning), "yes" counts of 3 ratings:
      s1: 0, 3, 1   s2: 2, 0, 1
    P_i = (yes^2 + no^2 - 3) / 6: 1, 1, 1/3, 1/3, 1, 1/3, so P = 4/6; p_yes = 7/18, p_no = 11/18,
    P_e = 170/324; kappa = (216 - 170) / (324 - 170) = 46/154 = 23/77."""
    item = kept[0]
    second = item.summaries.get().sentences.get(index=1)
    # The second annotator now also finds the second sentence inconsistent (a correction).
    submit_labels(
        item, review_world["annotator2"], inconsistent={second: "Nobody says Ben brings them."}, attempt="fix"
    )
    keep_and_confirm(item, second, reviewer=review_world["rev_b"], checker=review_world["rev_a"])
    s1, s2 = kept, (item, second)
    type_as(review_world, "rev_a", s1, ["extrinsic_information"])
    type_as(review_world, "rev_b", s1, ["extrinsic_information"])
    type_as(review_world, "lead", s1, ["extrinsic_information", "reasoning"])
    type_as(review_world, "rev_a", s2, ["contradiction"])
    type_as(review_world, "rev_b", s2, ["contradiction"])
    type_as(review_world, "lead", s2, ["reasoning"])
    # A main-round sentence typed once: not part of the pilot figures.
    main = flag_first_sentence(review_world, "main-1")
    keep_and_confirm(*main, reviewer=review_world["rev_a"], checker=review_world["rev_b"])
    type_as(review_world, "rev_a", main, ["other"], note="Invented.")

    figures = agreement.compute(review_world["campaign"], {"round": agreement.PILOT_ROUNDS}, n_boot=20)
    found = {(m["variant"], m["metric"]): m for m in figures["metrics"] if m["dimension"] == "error_types"}
    per_type = found[("per_type", "fleiss_kappa")]
    assert per_type["value"] == pytest.approx(23 / 77)
    assert (per_type["n_items"], per_type["n_annotators"]) == (6, 3)
    # The raw variant compares the sets: s1 {E}, {E}, {E, R}; s2 {C}, {C}, {R}.
    assert found[("raw", "percent_agreement")]["n_items"] == 2
    # Every round: the main sentence (one typer) joins the per-type units.
    everything = agreement.compute(review_world["campaign"], {}, n_boot=20)
    types_all = [m for m in everything["metrics"] if (m["dimension"], m["variant"]) == ("error_types", "per_type")]
    assert types_all and {r["round"] for r in agreement.judgment_rows(review_world["campaign"], {})} == {
        "pilot",
        "main",
    }


def test_dashboard_offers_the_pilot_rounds_filter(client, review_world, kept):
    client.force_login(review_world["lead"])
    page = client.get(f"/p/{review_world['project'].slug}/campaigns/{review_world['campaign'].pk}/agreement/")
    html = page.content.decode()
    assert page.status_code == 200 and 'value="*pilot"' in html and "All pilot rounds" in html


def test_typing_page_shows_definitions_and_refuses_an_empty_choice(client, review_world, kept):
    item, first = kept
    url = (
        f"/p/{review_world['project'].slug}/campaigns/{review_world['campaign'].pk}/review/"
        f"items/{item.pk}/sentences/{first.pk}/"
    )
    client.force_login(review_world["lead"])
    html = client.get(url).content.decode()
    assert 'name="codes"' in html and "Stating Opinion-as-Fact" in html
    assert "Something a speaker proposed, believed or argued is presented as an established fact." in html
    response = client.post(url + "types/", {"note": ""})
    assert response.status_code == 400 and "Choose at least one error type." in response.content.decode()
    response = client.post(url + "types/", {"codes": ["reasoning", "mis_referencing"]})
    assert response.status_code == 302 and response["Location"].endswith("/review/next/type/")
    assert Judgment.objects.get(dimension="error_types").value == ["mis_referencing", "reasoning"]
    html = client.get(url).content.decode()
    assert 'value="reasoning" aria-describedby="definition-reasoning"' in html and "Update error types" in html
