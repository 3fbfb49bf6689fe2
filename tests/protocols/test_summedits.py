"""SummEdits workflow: seed verification gates the labelling, for the verifying annotator only;
edits are generated on verification (offline rules here); labels are recorded once."""

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.corpus import services as corpus
from annotation.corpus.models import EditedSummary, SeedSummary
from annotation.projects import services as projects
from annotation.projects.models import Project, Role
from annotation.protocols import services, summedits
from annotation.protocols.models import Assignment, Judgment, JudgmentRevision

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(data, project, annotator, make_user, django_capture_on_commit_callbacks):
    corpus.import_data(
        project_slug=project.slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    other = make_user("ann2")
    projects.add_member(project=project, user=other, role=Role.ANNOTATOR)
    domain = SeedSummary.objects.filter(summary__project=project).order_by("domain").first().domain
    return summedits.create_campaign(
        project=project,
        name="SummEdits",
        slug="se",
        domain=domain,
        annotators=[annotator, other],
        double_share=1.0,
        edits_per_seed=10,
    )


def mine(campaign, user):
    return Assignment.objects.filter(item__campaign=campaign, annotator=user).order_by("pk").first()


def answer(assignment, **answers):
    return services.save_draft(assignment_id=assignment.pk, draft=answers, version=assignment.draft_version)


def test_every_seed_goes_to_two_annotators_when_doubled(campaign, annotator):
    seeds = SeedSummary.objects.filter(domain=campaign.settings["domain"]).count()
    assert campaign.items.count() == seeds
    assert Assignment.objects.filter(item__campaign=campaign).count() == 2 * seeds


def test_no_labels_before_verification(campaign, annotator):
    assignment = mine(campaign, annotator)
    edit = EditedSummary.objects.filter(seed=summedits.seed_of(assignment)).first()
    cleaned = summedits.clean_draft(
        {f"l-{edit.summary_id}": "consistent", "flaws": "no"}, [], {}, summedits.seed_of(assignment)
    )
    assert cleaned == {"flaws": "no"}
    with pytest.raises(ValidationError, match="Verify the seed first"):
        summedits.submit(assignment=assignment, draft={}, client_token="t", user=annotator)


def test_verification_needs_every_answer(campaign, annotator):
    assignment = answer(mine(campaign, annotator), flaws="no")
    with pytest.raises(ValidationError) as error:
        summedits.verify(assignment=assignment, user=annotator)
    assert set(error.value.message_dict) == {"consistent"}


def test_a_failing_seed_is_set_aside_with_its_reason(campaign, annotator):
    assignment = answer(mine(campaign, annotator), flaws="yes", consistent="yes")
    assignment = summedits.verify(assignment=assignment, user=annotator)
    assert assignment.status == Assignment.Status.SUBMITTED and summedits.verified(assignment.draft) == "fail"
    filtered = Judgment.objects.get(assignment=assignment, dimension="seed_filtered")
    assert filtered.explanation == "flawed (fluency or format)"


def test_a_passing_seed_gets_generated_edits_and_is_labelled_once(
    campaign, annotator, django_capture_on_commit_callbacks
):
    assignment = answer(mine(campaign, annotator), flaws="no", consistent="yes")
    seed = summedits.seed_of(assignment)
    released = EditedSummary.objects.filter(seed=seed).count()
    with django_capture_on_commit_callbacks(execute=True):  # the offline edits job runs on commit
        assignment = summedits.verify(assignment=assignment, user=annotator)
    assert EditedSummary.objects.filter(seed=seed).count() > released
    summedits.refresh_edits(assignment)
    assignment.refresh_from_db()
    edits = summedits.edits_in_order(assignment)
    assert len(edits) == EditedSummary.objects.filter(seed=seed).count()
    assert [e.pk for e in edits] == assignment.summary_order  # the recorded, shuffled order
    draft = assignment.draft | {f"l-{e.pk}": "consistent" for e in edits}
    draft[f"l-{edits[0].pk}"] = "borderline"
    for _ in range(2):
        summedits.submit(assignment=assignment, draft=draft, client_token="once", user=annotator)
    labels = Judgment.objects.filter(assignment=assignment, dimension="edit_label")
    assert labels.count() == len(edits) and labels.filter(value="borderline").count() == 1
    draft[f"l-{edits[0].pk}"] = "inconsistent"
    summedits.submit(assignment=assignment, draft=draft, client_token="again", user=annotator)
    assert (
        JudgmentRevision.objects.get(judgment__summary=edits[0], judgment__assignment=assignment).value == "borderline"
    )


def test_over_http_the_gate_holds_and_nobody_else_opens_my_seed(client, campaign, annotator, lead, outsider, project):
    assignment = mine(campaign, annotator)
    url = f"/p/{project.slug}/assignments/{assignment.pk}/"
    for user in (lead, outsider):
        client.force_login(user)
        assert client.get(url).status_code == 404
    client.force_login(annotator)
    page = client.get(url).content.decode()
    assert "Step 1: check the summary" in page and "Step 2" not in page
    edit = EditedSummary.objects.filter(seed=summedits.seed_of(assignment)).first()
    assert edit.summary.text not in page
    post = {"draft_version": "0", "client_token": "x", f"l-{edit.summary_id}": "consistent"}
    response = client.post(url + "submit/", post)
    assert response.status_code == 400 and "Answer this question" in response.content.decode()
    assert not Judgment.objects.filter(dimension="edit_label", assignment=assignment).exists()
    body = {"version": 1, "draft": {f"l-{edit.summary_id}": "consistent", "flaws": "no"}}
    client.post(url + "draft/", json.dumps(body), content_type="application/json")
    assert "l-" not in "".join(Assignment.objects.get(pk=assignment.pk).draft)


def test_the_whole_flow_over_http(client, campaign, annotator, project, django_capture_on_commit_callbacks):
    assignment = mine(campaign, annotator)
    url = f"/p/{project.slug}/assignments/{assignment.pk}/"
    client.force_login(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url + "submit/",
            {"draft_version": "0", "client_token": "v", "flaws": "no", "consistent": "yes", "action": "verify"},
        )
    assert response.status_code == 302 and response.url == url
    page = client.get(url).content.decode()
    assert "Step 2: label each edit" in page and "<ins>" in page
    assignment.refresh_from_db()
    post = {"draft_version": str(assignment.draft_version), "client_token": "s"}
    post |= {f"l-{pk}": "inconsistent" for pk in assignment.summary_order}
    assert client.post(url + "submit/", post).status_code == 302
    assert Judgment.objects.filter(assignment=assignment, dimension="edit_label").count() == len(
        assignment.summary_order
    )
    assert Project.objects.get(slug=project.slug)  # nothing else broke


def test_a_lead_sets_up_a_summedits_campaign(client, data, project, lead, annotator):
    corpus.import_data(
        project_slug=project.slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    client.force_login(lead)
    url = f"/p/{project.slug}/campaigns/new/summedits/"
    page = client.get(url).content.decode()
    assert "sales_call" in page
    post = {
        "name": "Sales calls",
        "domain": "sales_call",
        "annotators": [str(annotator.pk)],
        "double_share": "0.2",
        "edits_per_seed": "30",
        "generation": "on_verify",
        "warmup": "0",
    }
    response = client.post(url, post)
    assert response.status_code == 400 and "second annotator" in response.content.decode()
    response = client.post(url, post | {"double_share": "0"})
    assert response.status_code == 302
    campaign = project.campaigns.get(slug="sales-calls")
    assert campaign.settings["domain"] == "sales_call" and campaign.items.count() == 2
    client.force_login(annotator)
    assert client.get(url).status_code == 404


def test_warm_up_seeds_come_first_and_show_gold_after_submitting(
    client, data, project, lead, annotator, make_user, django_capture_on_commit_callbacks
):
    corpus.import_data(
        project_slug=project.slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    other = make_user("ann2")
    projects.add_member(project=project, user=other, role=Role.ANNOTATOR)
    campaign = summedits.create_campaign(
        project=project,
        name="S",
        slug="s",
        domain="sales_call",
        annotators=[annotator, other],
        double_share=0,
        generation="none",
        warmup=1,
    )
    warm = campaign.items.get(is_warmup=True)
    assert Assignment.objects.filter(item=warm).count() == 2  # every annotator
    first = services.next_open(campaign=campaign, user=annotator)
    assert first.item == warm
    edits = list(EditedSummary.objects.filter(seed=summedits.seed_of(first)).values_list("summary_id", flat=True))
    client.force_login(lead)
    post = {"item": str(warm.pk)} | {f"l-{pk}": "inconsistent" for pk in edits}
    assert client.post(f"/p/{project.slug}/campaigns/{campaign.pk}/warm-up/", post).status_code == 302
    first = answer(first, flaws="no", consistent="yes")
    first = summedits.verify(assignment=first, user=annotator)
    draft = first.draft | {f"l-{pk}": "inconsistent" for pk in first.summary_order}
    draft[f"l-{first.summary_order[0]}"] = "consistent"
    summedits.submit(assignment=first, draft=draft, client_token="w", user=annotator)
    client.force_login(annotator)
    page = client.get(f"/p/{project.slug}/assignments/{first.pk}/").content.decode()
    assert f"matches the gold one on {len(edits) - 1} of {len(edits)} edits" in page
    assert summedits.warmup_accuracy(campaign) == [
        {"annotator": "A2", "labelled": len(edits), "accuracy": round((len(edits) - 1) / len(edits), 3)}
    ]
    client.force_login(lead)
    assert "Same as gold" in client.get(f"/p/{project.slug}/campaigns/{campaign.pk}/warm-up/").content.decode()
    client.force_login(annotator)
    assert client.get(f"/p/{project.slug}/campaigns/{campaign.pk}/warm-up/").status_code == 404


def test_a_reviewer_types_inconsistent_edits_and_the_statistics_count_them(
    client, campaign, annotator, project, make_user
):
    from annotation.protocols import summedits_results

    reviewer = make_user("rev")
    projects.add_member(project=project, user=reviewer, role=Role.REVIEWER)
    assignment = summedits.verify(
        assignment=answer(mine(campaign, annotator), flaws="no", consistent="yes"), user=annotator
    )
    draft = assignment.draft | {f"l-{pk}": "consistent" for pk in assignment.summary_order}
    first = assignment.summary_order[0]
    draft[f"l-{first}"] = "inconsistent"
    summedits.submit(assignment=assignment, draft=draft, client_token="t", user=annotator)
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/edit-types/"
    client.force_login(annotator)
    assert client.get(url).status_code == 404
    client.force_login(reviewer)
    page = client.get(url).content.decode()
    assert "1 inconsistent edit to type" in page and "Antonym swap" in page
    bad = client.post(url, {"item": str(assignment.item_id), "edit": str(first)})
    assert bad.status_code == 400 and "Choose one or more edit types" in bad.content.decode()
    ok = client.post(url, {"item": str(assignment.item_id), "edit": str(first), "codes": ["antonym_swap"]})
    assert ok.status_code == 302
    assert "No inconsistent edit waits" in client.get(url).content.decode()
    overall = summedits_results.results(campaign)["overall"]
    assert overall["edit_types"] == [{"code": "antonym_swap", "count": 1, "share": 1.0}]


def test_two_annotators_give_both_kappas_on_the_dashboard(campaign, annotator, project):
    from annotation.agreement import services as agreement

    item = campaign.items.order_by("pk").first()
    labels = {}
    for user_labels, assignment in zip(
        (
            ["consistent", "inconsistent", "borderline", "consistent"],
            ["consistent", "inconsistent", "consistent", "inconsistent"],
        ),
        Assignment.objects.filter(item=item).order_by("pk"),
        strict=True,
    ):
        assignment = summedits.verify(
            assignment=answer(assignment, flaws="no", consistent="yes"), user=assignment.annotator
        )
        order = sorted(assignment.summary_order)[:4]
        draft = assignment.draft | {f"l-{pk}": "consistent" for pk in assignment.summary_order}
        draft |= {f"l-{pk}": value for pk, value in zip(order, user_labels, strict=True)}
        summedits.submit(assignment=assignment, draft=draft, client_token="k", user=assignment.annotator)
        labels[assignment.annotator_id] = draft
    figures = agreement.compute(campaign, n_boot=20)["metrics"]
    kappas = {
        f["variant"]: f["value"] for f in figures if f["dimension"] == "edit_label" and f["metric"] == "cohen_kappa"
    }
    assert set(kappas) == {"raw", "without_borderline"}
    assert kappas["raw"] is not None and kappas["without_borderline"] is not None
    assert kappas["without_borderline"] > kappas["raw"]  # the one borderline disagreement is dropped


def test_the_screen_shows_the_guidelines_escaped(client, campaign, annotator, project):
    campaign.guidelines = "Prefer <b>borderline</b> when unsure."
    campaign.save()
    client.force_login(annotator)
    page = client.get(f"/p/{project.slug}/assignments/{mine(campaign, annotator).pk}/").content.decode()
    assert "Prefer &lt;b&gt;borderline&lt;/b&gt; when unsure." in page


def test_batch_generation_for_verified_seeds(
    client, data, project, lead, annotator, django_capture_on_commit_callbacks
):
    from annotation.llm.models import Job

    corpus.import_data(
        project_slug=project.slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    campaign = summedits.create_campaign(
        project=project,
        name="B",
        slug="b",
        domain="sales_call",
        annotators=[annotator],
        double_share=0,
        generation="batch",
        edits_per_seed=6,
    )
    assignment = Assignment.objects.filter(item__campaign=campaign).order_by("pk").first()
    summedits.verify(assignment=answer(assignment, flaws="no", consistent="yes"), user=annotator)
    assert not Job.objects.exists()  # nothing on verification in batch mode
    client.force_login(lead)
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/"
    assert (
        "Verified seeds waiting for their edits: <strong>1</strong>" in client.get(url + "progress/").content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url + "generate/")
    job = Job.objects.get()
    assert response.status_code == 302 and job.params["seeds"] == [summedits.seed_of(assignment).pk]
    assert job.status == "done"
    assert summedits.verified_seeds_without_edits(campaign) == []
    assert client.post(url + "generate/").status_code == 302  # nothing left: a message, not an error
    client.force_login(annotator)
    assert client.post(url + "generate/").status_code == 404


def test_the_home_page_starts_the_summedits_queue(client, campaign, annotator, project):
    client.force_login(annotator)
    page = client.get("/").content.decode()
    assert f"/p/{project.slug}/campaigns/{campaign.pk}/next/" in page and "screen coming" not in page
