import json

import pytest
from django.core.exceptions import ValidationError

from annotation.corpus.models import Document, Summary, Topic
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services, tofueval
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, JudgmentRevision, Protocol

pytestmark = pytest.mark.django_db
SECRET_SYSTEM = "secret-model-XYZ"


@pytest.fixture
def task(project, annotator, make_user):
    other = make_user("ann2")
    projects.add_member(project=project, user=other, role=Role.ANNOTATOR)
    turns = [{"speaker": "Ana", "text": "We meet at 4 pm."}, {"speaker": "Ben", "text": "I bring the tickets."}]
    document = Document.objects.create(
        project=project,
        external_id="d1",
        kind="dialogue",
        turns=turns,
        text="Ana: We meet at 4 pm.\nBen: I bring the tickets.",
    )
    topic = Topic.objects.create(document=document, name="Meeting")
    summaries = []
    for n, text in enumerate(["They meet at 5 pm. Ben brings tickets.", "Ana sets a time. Ben has the tickets."]):
        summary = Summary.objects.create(
            project=project, document=document, topic=topic, external_id=f"s{n}", system=SECRET_SYSTEM, text=text
        )
        first, second = text.split(". ", 1)
        summary.sentences.create(index=0, start=0, end=len(first) + 1, text=first + ".")
        summary.sentences.create(index=1, start=len(first) + 2, end=len(text), text=second)
        summaries.append(summary)
    campaign = Campaign.objects.create(project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1)
    item = Item.objects.create(campaign=campaign, key="i1", document=document, topic=topic)
    item.summaries.set(summaries)
    mine = services.assign(item=item, annotator=annotator, seed=1)
    theirs = services.assign(item=item, annotator=other, seed=2)
    return {"mine": mine, "theirs": theirs, "other": other, "summaries": summaries, "campaign": campaign}


def complete_draft(summaries) -> dict:
    draft = {"topic_category": "main"}
    for summary in summaries:
        draft[f"r-{summary.pk}"] = "4"
        for sentence in summary.sentences.all():
            draft[f"s-{sentence.pk}"] = "consistent"
    first = summaries[0].sentences.get(index=0)
    draft[f"s-{first.pk}"], draft[f"e-{first.pk}"] = "inconsistent", "4 pm in the dialogue, not 5 pm"
    return draft


def test_drafts_are_versioned_and_a_stale_save_is_a_conflict(task):
    saved = services.save_draft(
        assignment_id=task["mine"].pk, draft={"topic_category": "main"}, version=0, active_seconds_delta=12.5
    )
    assert (saved.draft_version, saved.status, saved.active_seconds) == (1, "in_progress", 12.5)
    with pytest.raises(services.DraftConflict) as conflict:
        services.save_draft(assignment_id=task["mine"].pk, draft={"topic_category": "irrelevant"}, version=0)
    assert conflict.value.version == 1 and conflict.value.draft == {"topic_category": "main"}


def test_active_time_per_save_is_bounded(task):
    saved = services.save_draft(assignment_id=task["mine"].pk, draft={}, version=0, active_seconds_delta=99999)
    assert saved.active_seconds == services.MAX_ACTIVE_DELTA


def test_summaries_come_in_the_recorded_order_and_are_numbered(task):
    ordered = tofueval.summaries_in_order(task["mine"])
    assert [s.pk for s in ordered] == task["mine"].summary_order
    assert [s.position for s in ordered] == [1, 2]


def test_submit_refuses_an_incomplete_draft_with_messages_by_field(task):
    draft = complete_draft(task["summaries"])
    first = task["summaries"][0].sentences.get(index=0)
    del draft[f"e-{first.pk}"]
    del draft["topic_category"]
    with pytest.raises(ValidationError) as caught:
        tofueval.submit(assignment=task["mine"], draft=draft, client_token="t1", user=None)
    assert set(caught.value.message_dict) == {f"e-{first.pk}", "topic_category"}
    assert not Judgment.objects.exists()


def test_not_a_summary_replaces_the_relevance_rating(task):
    draft = complete_draft(task["summaries"])
    summary = task["summaries"][1]
    del draft[f"r-{summary.pk}"]
    draft[f"n-{summary.pk}"] = "on"
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="t1", user=None)
    assert Judgment.objects.get(dimension="not_a_summary", summary=summary).value is True
    assert not Judgment.objects.filter(dimension="relevance", summary=summary).exists()


def test_a_correction_to_not_a_summary_withdraws_the_earlier_rating(task, annotator):
    draft = complete_draft(task["summaries"])
    summary = task["summaries"][1]
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="t1", user=annotator)
    draft[f"n-{summary.pk}"] = "on"  # the rating stays in the draft; the flag wins
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="t2", user=annotator)
    rating = Judgment.objects.get(dimension="relevance", summary=summary, assignment=task["mine"])
    assert rating.value is None
    assert list(rating.revisions.values_list("value", flat=True)) == [4]


def test_submit_records_every_label_once_even_if_sent_twice(task, annotator):
    draft = complete_draft(task["summaries"])
    for _ in range(2):
        tofueval.submit(assignment=task["mine"], draft=draft, client_token="same", user=annotator)
    counts = {
        d: Judgment.objects.filter(dimension=d).count()
        for d in ("topic_category", "consistency", "relevance", "not_a_summary")
    }
    assert counts == {"topic_category": 1, "consistency": 4, "relevance": 2, "not_a_summary": 2}
    explained = Judgment.objects.get(dimension="consistency", value="inconsistent")
    assert explained.explanation == "4 pm in the dialogue, not 5 pm"
    assignment = Assignment.objects.get(pk=task["mine"].pk)
    assert (
        assignment.status == "submitted"
        and task["campaign"].__class__.objects.get(pk=task["campaign"].pk).labels_changed_at
    )


def test_a_correction_keeps_the_earlier_label_as_history(task, annotator):
    draft = complete_draft(task["summaries"])
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="first", user=annotator)
    draft["topic_category"] = "marginal"
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="second", user=annotator)
    judgment = Judgment.objects.get(dimension="topic_category")
    assert (judgment.value, judgment.version) == ("marginal", 2)
    assert JudgmentRevision.objects.get(judgment=judgment).value == "main"


def test_drafts_keep_only_this_screens_fields(task):
    summaries = tofueval.summaries_in_order(task["mine"])
    cleaned = tofueval.clean_draft(
        {"topic_category": "main", "evil": "<script>", "s-999999": "x", "_focus": "r-1"}, summaries
    )
    assert cleaned == {"topic_category": "main", "_focus": "r-1"}


# -- the endpoints ----------------------------------------------------------------------------------
def autosave(client, project, assignment, draft, version=0, delta=1.0):
    return client.post(
        f"/p/{project.slug}/assignments/{assignment.pk}/draft/",
        json.dumps({"version": version, "draft": draft, "active_seconds_delta": delta}),
        content_type="application/json",
    )


def test_autosave_returns_the_new_version_and_409_on_a_conflict(client, project, annotator, task):
    client.force_login(annotator)
    first = autosave(client, project, task["mine"], {"topic_category": "main"})
    assert first.status_code == 200 and first.json()["version"] == 1
    stale = autosave(client, project, task["mine"], {"topic_category": "irrelevant"}, version=0)
    assert stale.status_code == 409 and stale.json()["draft"] == {"topic_category": "main"}
    assert "another tab" in stale.json()["message"]


def test_a_bad_autosave_is_a_400_not_a_500(client, project, annotator, task):
    client.force_login(annotator)
    url = f"/p/{project.slug}/assignments/{task['mine'].pk}/draft/"
    assert client.post(url, "not json", content_type="application/json").status_code == 400
    assert client.post(url, json.dumps({"draft": {}}), content_type="application/json").status_code == 400
    assert client.post(url, json.dumps({"version": 0, "draft": []}), content_type="application/json").status_code == 400


def test_nobody_else_can_open_or_save_an_assignment(client, project, annotator, task, outsider, lead):
    url = f"/p/{project.slug}/assignments/{task['mine'].pk}/"
    assert client.get(url).status_code == 302  # anonymous: to login
    for user in (task["other"], outsider, lead):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert autosave(client, project, task["mine"], {"topic_category": "main"}).status_code == 404
        assert client.post(url + "submit/", {"client_token": "x"}).status_code == 404
    assert Assignment.objects.get(pk=task["mine"].pk).draft == {}


def test_next_goes_to_my_open_item_then_home(client, project, annotator, task):
    client.force_login(annotator)
    url = f"/p/{project.slug}/campaigns/{task['campaign'].pk}/next/"
    assert client.get(url)["Location"] == f"/p/{project.slug}/assignments/{task['mine'].pk}/"
    tofueval.submit(assignment=task["mine"], draft=complete_draft(task["summaries"]), client_token="t", user=annotator)
    assert client.get(url)["Location"] == "/"


def test_lead_sees_progress_and_what_waits_for_review(client, project, annotator, lead, task):
    from annotation.protocols import results

    draft = complete_draft(task["summaries"])
    services.save_draft(assignment_id=task["mine"].pk, draft=draft, version=0, active_seconds_delta=120)
    tofueval.submit(assignment=task["mine"], draft=draft, client_token="t", user=annotator)
    progress = results.progress(task["campaign"])
    rows = {r["annotator"]: r for r in progress["annotators"]}
    mine, theirs = (project.memberships.get(user=u).pseudonym for u in (annotator, task["other"]))
    assert rows[mine]["submitted"] == 1 and rows[mine]["median_minutes_per_item"] == 2.0
    assert rows[theirs]["open"] == 1 and progress["waiting_for_review"] == 1
    client.force_login(lead)
    assert client.get(f"/p/{project.slug}/campaigns/{task['campaign'].pk}/progress/").status_code == 200
    client.force_login(annotator)
    assert client.get(f"/p/{project.slug}/campaigns/{task['campaign'].pk}/progress/").status_code == 404
