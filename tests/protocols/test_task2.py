"""TofuEval task 2: key points first and frozen, then coverage per summary, completeness stored."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.corpus.models import Document, Summary, Topic
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import results, services, tofueval_task2
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, JudgmentRevision, Protocol

pytestmark = pytest.mark.django_db
SECRET_SYSTEM = "secret-model-XYZ"
SUMMARY_TEXTS = ["Ana and Ben meet at 4 pm; Ben brings the tickets.", "A meeting is planned."]


@pytest.fixture
def task(project, annotator, make_user):
    other = make_user("ann2")
    projects.add_member(project=project, user=other, role=Role.ANNOTATOR)
    document = Document.objects.create(
        project=project, external_id="d1", kind="dialogue", text="Ana: We meet at 4 pm.\nBen: I bring the tickets."
    )
    topic = Topic.objects.create(document=document, name="Meeting")
    summaries = [
        Summary.objects.create(
            project=project, document=document, topic=topic, external_id=f"s{n}", system=SECRET_SYSTEM, text=text
        )
        for n, text in enumerate(SUMMARY_TEXTS)
    ]
    campaign = Campaign.objects.create(project=project, slug="t2", name="Task 2", protocol=Protocol.TOFUEVAL_TASK2)
    item = Item.objects.create(campaign=campaign, key="i1", document=document, topic=topic)
    item.summaries.set(summaries)
    mine = services.assign(item=item, annotator=annotator, seed=1)
    theirs = services.assign(item=item, annotator=other, seed=2)
    return {"mine": mine, "theirs": theirs, "summaries": summaries, "campaign": campaign}


def write_points(assignment, *points, version=0):
    draft = {f"kp-{k}": text for k, text in enumerate(points, 1)}
    return services.save_draft(assignment_id=assignment.pk, draft=draft, version=version)


def committed(assignment, *points):
    write_points(assignment, *points)
    return tofueval_task2.commit_key_points(assignment=assignment)


def test_key_points_are_needed_before_the_commit(task):
    write_points(task["mine"], "", "  ")
    with pytest.raises(ValidationError) as error:
        tofueval_task2.commit_key_points(assignment=task["mine"])
    assert "at least one key point" in error.value.message_dict["kp-1"][0]


def test_a_repeated_key_point_is_refused(task):
    write_points(task["mine"], "They meet at 4 pm", "they meet at 4 PM")
    with pytest.raises(ValidationError) as error:
        tofueval_task2.commit_key_points(assignment=task["mine"])
    assert error.value.message_dict == {"kp-2": ["Key point 2 repeats key point 1."]}


def test_commit_renumbers_and_freezes_the_key_points(task):
    write_points(task["mine"], "", "Meeting at 4 pm", "", "Ben brings tickets")
    assignment = tofueval_task2.commit_key_points(assignment=task["mine"])
    assert tofueval_task2.key_points(assignment.draft) == ["Meeting at 4 pm", "Ben brings tickets"]
    assert assignment.draft["kp-1"] == "Meeting at 4 pm" and "kp-4" not in assignment.draft
    assert tofueval_task2.is_committed(assignment.draft)
    # A client cannot change frozen key points nor unfreeze them.
    raw = {"kp-1": "Something else", "committed": "", f"c-{task['summaries'][0].pk}-1": "on", "c-999-1": "on"}
    cleaned = tofueval_task2.clean_draft(raw, tofueval_task2.summaries_in_order(assignment), assignment.draft)
    assert cleaned["kp-1"] == "Meeting at 4 pm" and cleaned["committed"] == "on"
    assert f"c-{task['summaries'][0].pk}-1" in cleaned and "c-999-1" not in cleaned


def test_before_the_commit_a_draft_holds_only_key_points(task):
    raw = {"kp-1": "x" * 900, "kp-2": "b", "committed": "on", "kp-99": "no", "none-1": "on"}
    cleaned = tofueval_task2.clean_draft(raw, [], {})
    assert cleaned == {"kp-1": "x" * tofueval_task2.MAX_KEY_POINT_CHARS, "kp-2": "b"}


def test_rearranging_without_javascript(task):
    draft = {"kp-1": "a", "kp-2": "b", "kp-3": "c", "_focus": "kp-2"}
    assert tofueval_task2.key_points(tofueval_task2.rearrange(draft, "up-2")) == ["b", "a", "c"]
    assert tofueval_task2.key_points(tofueval_task2.rearrange(draft, "down-3")) == ["a", "b", "c"]
    assert tofueval_task2.key_points(tofueval_task2.rearrange(draft, "remove-1")) == ["b", "c"]
    assert tofueval_task2.rearrange(draft, "remove-x")["_focus"] == "kp-2"


def test_submit_needs_each_summary_ticked_or_marked_as_covering_none(task):
    assignment = committed(task["mine"], "Meeting at 4 pm", "Ben brings tickets")
    first, second = tofueval_task2.summaries_in_order(assignment)
    draft = assignment.draft | {f"c-{first.pk}-1": "on", f"none-{first.pk}": "on"}
    with pytest.raises(ValidationError) as error:
        tofueval_task2.submit(assignment=assignment, draft=draft, client_token="t", user=None)
    assert set(error.value.message_dict) == {f"cov-{first.pk}", f"cov-{second.pk}"}
    assert "none of the key points and some" in error.value.message_dict[f"cov-{first.pk}"][0]


def test_submit_stores_key_points_coverage_and_completeness_once(task, annotator):
    assignment = committed(task["mine"], "Meeting at 4 pm", "Ben brings tickets", "Station")
    full, vague = task["summaries"]
    draft = assignment.draft | {f"c-{full.pk}-1": "on", f"c-{full.pk}-2": "on", f"none-{vague.pk}": "on"}
    for _ in range(2):
        tofueval_task2.submit(assignment=assignment, draft=draft, client_token="tok", user=annotator)
    rows = {(j.dimension, j.summary_id): j.value for j in Judgment.objects.filter(assignment=assignment)}
    assert rows == {
        ("key_points", None): ["Meeting at 4 pm", "Ben brings tickets", "Station"],
        ("covered_key_points", full.pk): [1, 2],
        ("completeness", full.pk): 0.6667,
        ("covered_key_points", vague.pk): [],
        ("completeness", vague.pk): 0.0,
    }
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    # A correction of the ticks keeps the earlier value.
    draft = draft | {f"c-{full.pk}-3": "on"}
    tofueval_task2.submit(assignment=assignment, draft=draft, client_token="tok2", user=annotator)
    judgment = Judgment.objects.get(assignment=assignment, dimension="completeness", summary=full)
    assert judgment.value == 1.0
    assert JudgmentRevision.objects.get(judgment=judgment).value == 0.6667


def test_results_average_completeness_over_annotators(task, annotator):
    full, vague = task["summaries"]
    for assignment, ticks in ((task["mine"], ["1", "2"]), (task["theirs"], ["1"])):
        assignment = committed(assignment, "Meeting at 4 pm", "Ben brings tickets")
        draft = assignment.draft | {f"c-{full.pk}-{k}": "on" for k in ticks} | {f"none-{vague.pk}": "on"}
        tofueval_task2.submit(assignment=assignment, draft=draft, client_token="", user=annotator)
    by_system = results.results(task["campaign"])["by_system"]
    assert by_system[0]["completeness_mean"] == round((1.0 + 0.5 + 0.0 + 0.0) / 4, 4)


# ---- The screen over HTTP ----


def url(project, assignment, suffix=""):
    return f"/p/{project.slug}/assignments/{assignment.pk}/{suffix}"


def test_summaries_are_not_on_the_page_before_the_commit(client, project, annotator, task):
    client.force_login(annotator)
    page = client.get(url(project, task["mine"])).content.decode()
    assert "Commit key points" in page
    assert all(text not in page for text in SUMMARY_TEXTS)
    assert SECRET_SYSTEM not in page


def test_commit_over_http_then_the_summaries_and_submit(client, project, annotator, task):
    client.force_login(annotator)
    post = {"draft_version": "0", "client_token": "c1", "kp-1": "Meeting at 4 pm", "kp-2": "", "action": "commit"}
    response = client.post(url(project, task["mine"], "submit/"), post)
    assert response.status_code == 302 and response.url == url(project, task["mine"])
    page = client.get(url(project, task["mine"])).content.decode()
    assert all(text in page for text in SUMMARY_TEXTS) and SECRET_SYSTEM not in page
    assert "Meeting at 4 pm" in page and 'name="kp-1"' not in page
    version = Assignment.objects.get(pk=task["mine"].pk).draft_version
    first, second = task["summaries"]
    post = {"draft_version": str(version), "client_token": "c2", f"c-{first.pk}-1": "on"}
    response = client.post(url(project, task["mine"], "submit/"), post)
    assert response.status_code == 400
    assert "Tick the key points summary" in response.content.decode()
    post = post | {"draft_version": str(version + 1), f"none-{second.pk}": "on"}
    response = client.post(url(project, task["mine"], "submit/"), post)
    assert response.status_code == 302
    values = Judgment.objects.filter(assignment=task["mine"], dimension="completeness").values_list("value", flat=True)
    assert sorted(values) == [0.0, 1.0]


def test_an_empty_commit_comes_back_with_the_message_in_place(client, project, annotator, task):
    client.force_login(annotator)
    post = {"draft_version": "0", "client_token": "c1", "kp-1": " ", "action": "commit"}
    response = client.post(url(project, task["mine"], "submit/"), post)
    assert response.status_code == 400
    assert "Write at least one key point" in response.content.decode()


def test_buttons_move_and_remove_key_points_without_javascript(client, project, annotator, task):
    client.force_login(annotator)
    post = {"draft_version": "0", "client_token": "c", "kp-1": "a", "kp-2": "b", "kp-3": "", "action": "up-2"}
    assert client.post(url(project, task["mine"], "submit/"), post).status_code == 302
    assert tofueval_task2.key_points(Assignment.objects.get(pk=task["mine"].pk).draft) == ["b", "a"]


def test_autosave_cannot_unfreeze_key_points(client, project, annotator, task):
    assignment = committed(task["mine"], "Meeting at 4 pm")
    client.force_login(annotator)
    body = {"version": assignment.draft_version, "draft": {"kp-1": "changed", "committed": ""}}
    response = client.post(url(project, assignment, "draft/"), json.dumps(body), content_type="application/json")
    assert response.status_code == 200
    assignment.refresh_from_db()
    assert assignment.draft["kp-1"] == "Meeting at 4 pm" and tofueval_task2.is_committed(assignment.draft)


def test_nobody_else_can_open_a_task2_assignment(client, project, task, lead, outsider, make_user):
    for user in (lead, outsider, task["theirs"].annotator):
        client.force_login(user)
        assert client.get(url(project, task["mine"])).status_code == 404


def test_a_lead_can_set_up_a_task2_campaign(client, project, lead, annotator, task):
    client.force_login(lead)
    page = client.get(f"/p/{project.slug}/campaigns/new/tofueval-task2/").content.decode()
    assert "key points" in page
    post = {
        "name": "Completeness pilot",
        "annotators": [str(annotator.pk)],
        "per_item": "1",
        "double_share": "0",
        "rounds": "main",
        "pilot_items": "0",
        "guidelines": "Write key points first.",
    }
    response = client.post(f"/p/{project.slug}/campaigns/new/tofueval-task2/", post)
    assert response.status_code == 302
    campaign = Campaign.objects.get(project=project, slug="completeness-pilot")
    assert campaign.protocol == Protocol.TOFUEVAL_TASK2
    assert client.get(f"/p/{project.slug}/campaigns/new/nonsense/").status_code == 404


def test_task2_labels_round_trip_through_export_jsonl(task, annotator, tmp_path):
    from django.core.management import call_command

    assignment = committed(task["mine"], "Meeting at 4 pm", "Ben brings tickets")
    full, vague = task["summaries"]
    draft = assignment.draft | {f"c-{full.pk}-2": "on", f"none-{vague.pk}": "on"}
    tofueval_task2.submit(assignment=assignment, draft=draft, client_token="x", user=annotator)
    first = tmp_path / "first.jsonl"
    call_command("export_jsonl", project="demo", out=str(first))
    records = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    labels = [j for r in records if r["type"] in ("summary", "item") for j in r["judgments"]]
    by_dimension = {j["dimension"]: j["value"] for j in labels if j["dimension"] != "completeness"}
    assert by_dimension["key_points"] == ["Meeting at 4 pm", "Ben brings tickets"]
    assert sorted(j["value"] for j in labels if j["dimension"] == "completeness") == [0.0, 0.5]
    call_command("import_data", str(first), project="copy", format="jsonl")
    second = tmp_path / "second.jsonl"
    call_command("export_jsonl", project="copy", out=str(second))
    assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8").replace('"demo"', '"copy"')


def test_task1_results_take_completeness_from_task2_on_the_same_summaries(task, annotator, project):
    full, vague = task["summaries"]
    assignment = committed(task["mine"], "Meeting at 4 pm", "Ben brings tickets")
    draft = assignment.draft | {f"c-{full.pk}-1": "on", f"none-{vague.pk}": "on"}
    tofueval_task2.submit(assignment=assignment, draft=draft, client_token="", user=annotator)
    task1 = Campaign.objects.create(project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1)
    item = Item.objects.create(campaign=task1, key="i1", document=full.document, topic=full.topic)
    item.summaries.set([full])  # only one of the two summaries is in task 1
    tables = results.results(task1)
    assert tables["completeness_from"] == ["Task 2"]
    assert tables["overall"]["completeness_mean"] == 0.5 and tables["overall"]["n_summaries"] == 1
