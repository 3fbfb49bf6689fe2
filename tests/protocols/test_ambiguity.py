"""Ambiguity labelling (MADISSE): set-up, submission, adjudication, statistics and permissions."""

import csv
import json
import re
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.corpus import services as corpus
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import ambiguity, ambiguity_results, setup
from annotation.protocols.models import Adjudication, Assignment, Campaign, Judgment, JudgmentRevision, Protocol

pytestmark = pytest.mark.django_db


@pytest.fixture
def madisse(data, make_user):
    """The MADISSE sample (80 sentences of 2 documents) with two annotators, a reviewer and a viewer."""
    corpus.import_data(
        project_slug="amb",
        format="madisse",
        paths=[data / "madisse_sample.jsonl"],
        options={"documents": str(data / "meetingbank_documents_sample.jsonl")},
    )
    release = Campaign.objects.get(slug="release-madisse")
    people = {}
    for name, role in [
        ("ann-a", Role.ANNOTATOR),
        ("ann-b", Role.ANNOTATOR),
        ("rev", Role.REVIEWER),
        ("vic", Role.VIEWER),
    ]:
        people[name] = make_user(name)
        projects.add_member(project=release.project, user=people[name], role=role)
    return release, people


def madisse_counts(path) -> dict:
    """Counts straight from the release file, independently of the importer."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ambiguous = [r for r in rows if r["ambiguity"] == "1"]
    categories = Counter()
    for r in ambiguous:
        names = {re.sub(r"[^a-z]", "", c.lower()).removesuffix("phenomena") for c in r["category"].split("/")}
        categories.update(names)
    return {"sentences": len(rows), "ambiguous": len(ambiguous), "categories": categories}


def campaign_for(release, people, **extra) -> Campaign:
    annotators = [people["ann-a"], people["ann-b"]]
    plan = setup.Plan(name="Ambiguity", slug="amb-1", annotators=annotators, per_item=2, protocol=Protocol.AMBIGUITY)
    for key, value in extra.items():
        setattr(plan, key, value)
    return setup.create_campaign(project=release.project, plan=plan)


def answer(assignment, user, **draft):
    return ambiguity.submit(assignment=assignment, draft=draft, client_token="", user=user)


# -- the release ------------------------------------------------------------------------------------
def test_the_madisse_import_reproduces_the_release_counts(madisse, data):
    release, _ = madisse
    expected = madisse_counts(data / "madisse_sample.jsonl")
    table = ambiguity_results.table2(release)
    row = table["rows"][-1]
    assert row["sentences"] == expected["sentences"] == 80
    assert row["ambiguous"] == expected["ambiguous"] == 9
    assert row["disputed"] == 0 and table["basis"] == {"single": 80}
    found = {c["code"]: c["n"] for c in row["categories"]}
    assert found == {
        "implicit_reasoning": expected["categories"]["implicitreasoning"],
        "meaning": expected["categories"]["meaning"],
        "context": 0,
        "other_evaluability": 0,
    }
    types = {t["code"]: t["n"] for t in row["types"]}
    assert types == {
        "implicit_reasoning.deduction": 5,
        "implicit_reasoning.commonsense": 3,
        "implicit_reasoning.value_based": 1,
        "meaning.synonymy": 1,
    }
    assert row["ambiguous_share"] == round(9 / 80, 4)


def test_ambiguity_by_consistency_where_the_sentences_have_tofueval_labels(madisse, data):
    release, _ = madisse
    corpus.import_data(
        project_slug="amb",
        format="tofueval",
        paths=[data / "tofueval_sample"],
        options={"documents": str(data / "meetingbank_documents_sample.jsonl")},
    )
    table = ambiguity_results.consistency_crosstab(release)
    rows = {r["label"]: dict(zip(table["columns"], r["cells"], strict=True)) for r in table["rows"]}
    assert sum(rows["ambiguous"].values()) == 9 and sum(rows["not ambiguous"].values()) == 71
    # Independently: every MADISSE sentence whose text is a TofuEval sentence of the same document.
    with (data / "tofueval_sample/factual_consistency/meetingbank_factual_eval_test.csv").open() as f:
        labels = {}
        for r in csv.DictReader(f):
            labels.setdefault((r["doc_id"], " ".join(r["summ_sent"].split()).casefold()), set()).add(r["sent_label"])
    documents = {}
    for line in (data / "meetingbank_documents_sample.jsonl").read_text().splitlines():
        doc = json.loads(line)
        documents[tuple(doc["turns"])] = doc["doc_id"]
    matched = 0
    for line in (data / "madisse_sample.jsonl").read_text().splitlines():
        r = json.loads(line)
        key = (documents.get(tuple(r["doc"])), " ".join(r["summary"].split()).casefold())
        matched += key in labels
    found = sum(n for row in rows.values() for column, n in row.items() if column != "no label")
    assert found == matched > 0


# -- set-up and submission --------------------------------------------------------------------------
def test_one_item_per_sentence_with_two_annotators_and_the_taxonomy(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    assert campaign.items.count() == 80 and campaign.taxonomy.slug == "madisse-ambiguity"
    assert all(item.sentence_id for item in campaign.items.all())
    per_item = Counter(Assignment.objects.filter(item__campaign=campaign).values_list("item", flat=True))
    assert set(per_item.values()) == {2}


def test_a_yes_needs_a_type_and_a_description(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=people["ann-a"]).first()
    with pytest.raises(ValidationError) as error:
        answer(assignment, people["ann-a"], ambiguous="yes")
    assert set(error.value.message_dict) == {"type", "description"}
    with pytest.raises(ValidationError) as error:
        answer(assignment, people["ann-a"], ambiguous="yes", type="meaning", description="x")
    assert set(error.value.message_dict) == {"type"}  # a category with types is not itself a type
    with pytest.raises(ValidationError):
        answer(assignment, people["ann-a"])
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_answers_become_judgments_and_a_correction_keeps_history(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=people["ann-a"]).first()
    answer(assignment, people["ann-a"], ambiguous="yes", type="meaning.vagueness", description="'soon' is vague")
    rows = {j.dimension: j for j in Judgment.objects.filter(assignment=assignment)}
    assert rows["ambiguous"].value is True and rows["ambiguous"].explanation == "'soon' is vague"
    assert rows["ambiguity_types"].value == ["meaning.vagueness"]
    assert rows["ambiguity_types"].taxonomy == campaign.taxonomy
    assert rows["ambiguous"].sentence_id == assignment.item.sentence_id
    answer(assignment, people["ann-a"], ambiguous="no", type="meaning.vagueness", description="ignored")
    rows = {j.dimension: j for j in Judgment.objects.filter(assignment=assignment)}
    assert rows["ambiguous"].value is False and rows["ambiguous"].explanation == ""
    assert rows["ambiguity_types"].value is None
    assert JudgmentRevision.objects.filter(judgment__assignment=assignment).count() == 2


def test_the_same_submission_twice_records_once(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=people["ann-a"]).first()
    draft = {"ambiguous": "no"}
    for _ in range(2):
        ambiguity.submit(assignment=assignment, draft=draft, client_token="tok-1", user=people["ann-a"])
    assert Judgment.objects.filter(assignment=assignment).count() == 1
    assert not JudgmentRevision.objects.exists()


# -- adjudication -----------------------------------------------------------------------------------
def both_answer(campaign, people, item, a: dict, b: dict):
    for name, draft in (("ann-a", a), ("ann-b", b)):
        assignment = Assignment.objects.get(item=item, annotator=people[name])
        answer(assignment, people[name], **draft)


def test_the_queue_holds_fully_answered_items_disagreements_first(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    first, second, third = list(campaign.items.order_by("key"))[:3]
    assert ambiguity.queue(campaign) == []
    both_answer(campaign, people, first, {"ambiguous": "no"}, {"ambiguous": "no"})
    yes = {"ambiguous": "yes", "type": "context.conflation", "description": "two meetings merged"}
    both_answer(campaign, people, second, {"ambiguous": "no"}, yes)
    answer(Assignment.objects.get(item=third, annotator=people["ann-a"]), people["ann-a"], ambiguous="no")
    assert ambiguity.queue(campaign) == [second, first]


def test_adjudication_records_the_final_label_and_refuses_a_stale_decision(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    item = campaign.items.order_by("key").first()
    yes = {"ambiguous": "yes", "type": "context.conflation", "description": "two meetings merged"}
    both_answer(campaign, people, item, {"ambiguous": "no"}, yes)
    assert ambiguity_results.final_labels(campaign)[item.pk]["basis"] == "disputed"
    with pytest.raises(ValidationError) as error:
        ambiguity.adjudicate(item=item, ambiguous="no", type_code="", note="", expert=people["rev"], expected_version=0)
    assert "note" in error.value.message_dict  # overruling the annotator who found one needs a reason
    ambiguity.adjudicate(
        item=item,
        ambiguous="yes",
        type_code="context.conflation",
        note="B is right",
        expert=people["rev"],
        expected_version=0,
    )
    decided = {a.dimension: a for a in Adjudication.objects.filter(item=item)}
    assert decided["ambiguous"].value is True and decided["ambiguous"].note == "B is right"
    assert decided["ambiguity_types"].value == ["context.conflation"]
    assert decided["ambiguous"].decided_by == people["rev"]
    with pytest.raises(ambiguity.AdjudicationConflict):
        ambiguity.adjudicate(
            item=item, ambiguous="no", type_code="", note="no", expert=people["rev"], expected_version=0
        )
    assert Adjudication.objects.get(item=item, dimension="ambiguous").value is True
    ambiguity.adjudicate(
        item=item, ambiguous="no", type_code="", note="on reflection", expert=people["rev"], expected_version=1
    )
    assert Adjudication.objects.get(item=item, dimension="ambiguity_types").value is None
    label = ambiguity_results.final_labels(campaign)[item.pk]
    assert label == {"ambiguous": False, "types": [], "basis": "adjudicated"}
    assert item not in ambiguity.queue(campaign)


def test_kappa_on_the_label_and_the_category(madisse):
    release, people = madisse
    campaign = campaign_for(release, people)
    items = list(campaign.items.order_by("key"))[:4]
    yes = {"ambiguous": "yes", "type": "context.conflation", "description": "d"}
    meaning = {"ambiguous": "yes", "type": "meaning.lexical", "description": "d"}
    both_answer(campaign, people, items[0], yes, yes)
    both_answer(campaign, people, items[1], {"ambiguous": "no"}, {"ambiguous": "no"})
    both_answer(campaign, people, items[2], yes, meaning)
    both_answer(campaign, people, items[3], {"ambiguous": "no"}, yes)
    figures = ambiguity_results.agreement(campaign)
    # binary: pairs (y,y) (n,n) (y,y) (n,y): po = 3/4, pe = (2/4*3/4 + 2/4*1/4) = 1/2 -> kappa 0.5
    assert figures["binary"].value == pytest.approx(0.5)
    assert figures["binary"].n_items == 4
    # category: (c,c) (n,n) (c,m) (n,c): po = 2/4; pe = c: 2/4*2/4, n: 2/4*1/4, m: 0 -> 3/8; kappa = (1/2-3/8)/(5/8)
    assert figures["category"].value == pytest.approx(0.2)


# -- the screens ------------------------------------------------------------------------------------
def test_the_screen_highlights_the_sentence_and_shows_every_definition(madisse, client):
    release, people = madisse
    campaign = campaign_for(release, people)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=people["ann-a"]).first()
    client.force_login(people["ann-a"])
    url = reverse("protocols:assignment", args=[release.project.slug, assignment.pk])
    page = client.get(url).content.decode()
    sentence = assignment.item.sentence
    assert f'<mark class="judged-sentence" id="judged-sentence">{sentence.text}</mark>' in page.replace("&#x27;", "'")
    for label in campaign.taxonomy.labels.filter(children__isnull=True):
        assert f'value="{label.code}"' in page
        assert label.definition.replace("'", "&#x27;") in page
    assert "secret" not in page.lower()


def test_submitting_through_the_form_shows_errors_in_place_then_records(madisse, client):
    release, people = madisse
    campaign = campaign_for(release, people)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=people["ann-a"]).first()
    client.force_login(people["ann-a"])
    url = reverse("protocols:assignment_submit", args=[release.project.slug, assignment.pk])
    response = client.post(url, {"draft_version": "0", "client_token": "t1", "ambiguous": "yes"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Choose the type of ambiguity." in page and "Describe the ambiguity" in page
    response = client.post(
        url,
        {
            "draft_version": "1",
            "client_token": "t2",
            "ambiguous": "yes",
            "type": "implicit_reasoning.deduction",
            "description": "needs two statements",
        },
    )
    assert response.status_code == 302
    assert Judgment.objects.filter(assignment=assignment).count() == 2


def test_adjudication_page_shows_both_answers_and_records_a_decision(madisse, client):
    release, people = madisse
    campaign = campaign_for(release, people)
    item = campaign.items.order_by("key").first()
    yes = {"ambiguous": "yes", "type": "context.conflation", "description": "two meetings merged"}
    both_answer(campaign, people, item, {"ambiguous": "no"}, yes)
    client.force_login(people["rev"])
    url = reverse("protocols:ambiguity_adjudicate", args=[release.project.slug, campaign.pk])
    page = client.get(url).content.decode()
    assert "two meetings merged" in page and "they differ" in page and "Conflation" in page
    response = client.post(url, {"item": item.pk, "version": "0", "ambiguous": "yes", "type": "", "note": "x"})
    assert response.status_code == 400 and "Choose the type of ambiguity." in response.content.decode()
    response = client.post(
        url, {"item": item.pk, "version": "0", "ambiguous": "yes", "type": "context.conflation", "note": "agree with B"}
    )
    assert response.status_code == 302
    response = client.post(url, {"item": item.pk, "version": "0", "ambiguous": "no", "type": "", "note": "late"})
    assert response.status_code == 409 and "Another expert decided" in response.content.decode()
    assert Adjudication.objects.get(item=item, dimension="ambiguous").value is True


def test_who_may_adjudicate_and_read_the_statistics(madisse, client, outsider):
    release, people = madisse
    campaign = campaign_for(release, people)
    adjudicate = reverse("protocols:ambiguity_adjudicate", args=[release.project.slug, campaign.pk])
    stats = reverse("protocols:ambiguity_stats", args=[release.project.slug, campaign.pk])
    expected = {
        "ann-a": (404, 404),
        "rev": (200, 404),  # reviewers adjudicate; dashboards are for leads and viewers
        "vic": (404, 200),
    }
    for name, (adjudicate_status, stats_status) in expected.items():
        client.force_login(people[name])
        assert client.get(adjudicate).status_code == adjudicate_status, name
        assert client.get(stats).status_code == stats_status, name
    client.force_login(outsider)
    assert client.get(adjudicate).status_code == 404 and client.get(stats).status_code == 404


def test_statistics_page_and_results_command(madisse, client, capsys):
    from django.core.management import call_command

    release, people = madisse
    client.force_login(people["vic"])
    page = client.get(reverse("protocols:ambiguity_stats", args=[release.project.slug, release.pk])).content.decode()
    assert "Annotated sentences" in page and "Implicit reasoning" in page
    call_command("results", project=release.project.slug, campaign=release.slug, json=True)
    out = json.loads(capsys.readouterr().out)
    assert out["release-madisse"]["table2"]["rows"][-1]["ambiguous"] == 9
