"""Rating LLM judges' explanations (SummEdits App. B, TofuEval App. H): two judge jobs with
explanations run against the fake server, the campaign over their units, the blind rating
screen, revisions, the shares per judge and the pages' permissions."""

import random

import pytest
from django.core.exceptions import ValidationError

from annotation.llm import services as llm
from annotation.llm.models import Endpoint, Job, Prompt
from annotation.protocols import explanations
from annotation.protocols.models import Assignment, Judgment, JudgmentRevision, Protocol
from tests.llm import fake_openai
from tests.protocols.conftest import EXPLANATION, SECRET_SYSTEM, flag_first_sentence, sentences

pytestmark = pytest.mark.django_db

ALPHA_ON_TIME = "Ana proposes 4 pm in the dialogue, so 5 pm is wrong."
BETA_ON_TIME = "The meeting time in the dialogue differs from the claim."
ALPHA_ON_TICKETS = "Ben says he brings the tickets."
BETA_ON_TICKETS = "Ben offers to bring the tickets himself."
HIDDEN = ["endpoint-alpha", "endpoint-beta", "model-alpha-7b", "model-beta-70b", "tofueval-judge-sentence", "LLM judge"]


def judge_answer(request) -> str:
    """What each fake model answers: alpha and beta explain (differently), direct only answers."""
    model = request["model"]
    content = request["messages"][-1]["content"]
    if model == "model-direct":
        return "no"
    claim = content.split("Claim:")[1].split("First explain")[0].strip()
    on_time, on_tickets = {
        "model-alpha-7b": (ALPHA_ON_TIME, ALPHA_ON_TICKETS),
        "model-beta-70b": (BETA_ON_TIME, BETA_ON_TICKETS),
    }[model]
    return f"Explanation: {on_time}\nAnswer: no" if "5 pm" in claim else f"Explanation: {on_tickets}\nAnswer: yes"


@pytest.fixture
def judged(review_world, django_capture_on_commit_callbacks):
    """Alpha explains every sentence of both items; beta only the pilot item's two sentences; a
    direct (unexplained) judge too. The pilot item's first sentence is flagged by an annotator."""
    flag_first_sentence(review_world, "pilot-1")
    explain = Prompt.objects.get(slug="tofueval-judge-sentence-explain", version=1)
    direct = Prompt.objects.get(slug="tofueval-judge-sentence", version=1)
    pilot_summary = review_world["items"]["pilot-1"].summaries.get()
    runs = [
        ("alpha", "endpoint-alpha", "model-alpha-7b", explain, None),
        ("beta", "endpoint-beta", "model-beta-70b", explain, {"summaries": [pilot_summary.pk]}),
        ("direct", "endpoint-direct", "model-direct", direct, None),
    ]
    jobs = {}
    with fake_openai.FakeOpenAI(reply=judge_answer) as server:
        for name, endpoint_name, model, prompt, params in runs:
            endpoint = Endpoint.objects.create(
                name=endpoint_name, base_url=server.url, model=model, requests_per_minute=10000
            )
            with django_capture_on_commit_callbacks(execute=True):
                jobs[name] = llm.create_job(
                    project=review_world["project"],
                    kind=Job.Kind.JUDGE,
                    endpoint=endpoint,
                    prompt=prompt,
                    params=params,
                )
            jobs[name].refresh_from_db()
            assert jobs[name].status == Job.Status.DONE
    return {**review_world, **jobs}


def make_campaign(world, *, per_item=2, name="Explanations", seed=0):
    return explanations.create_campaign(
        project=world["project"],
        name=name,
        jobs=[world["alpha"], world["beta"]],
        reviewers=[world["rev_a"], world["rev_b"]],
        per_item=per_item,
        seed=seed,
    )


def assignment_of(campaign, user, sentence) -> Assignment:
    return Assignment.objects.get(item__campaign=campaign, item__key=f"sentence:{sentence.pk}", annotator=user)


def posted(assignment, ratings_by_job: dict) -> dict:
    """The form fields (by letter) that rate each job's explanation as given."""
    shown = explanations.screen(assignment)
    return {f"rating-{e.letter}": ratings_by_job[e.job_id] for e in shown.explanations}


def screen_url(world, assignment) -> str:
    return f"/p/{world['project'].slug}/explanations/{assignment.pk}/"


# -- the campaign ---------------------------------------------------------------------------------
def test_one_item_per_explained_sentence_with_its_summary_and_sentence(judged):
    campaign = make_campaign(judged)
    pilot, main = judged["items"]["pilot-1"], judged["items"]["main-1"]
    expected = {f"sentence:{s.pk}": s for s in sentences(pilot) + sentences(main)}
    items = {item.key: item for item in campaign.items.prefetch_related("summaries")}
    assert set(items) == set(expected)
    for key, item in items.items():
        assert item.sentence == expected[key]
        assert list(item.summaries.all()) == [expected[key].summary]
        assert item.document_id == expected[key].summary.document_id
    assert campaign.protocol == Protocol.EXPLANATION_RATING
    assert campaign.settings == {"jobs": sorted([judged["alpha"].pk, judged["beta"].pk])}
    assert Assignment.objects.filter(item__campaign=campaign).count() == 8  # 4 items x 2 reviewers


def test_items_are_balanced_between_reviewers(judged):
    campaign = make_campaign(judged, per_item=1)
    counts = [
        Assignment.objects.filter(item__campaign=campaign, annotator=judged[r]).count() for r in ("rev_a", "rev_b")
    ]
    assert counts == [2, 2]


def test_a_direct_judge_has_nothing_to_rate(judged):
    assert [job.pk for job in explanations.explaining_jobs(judged["project"])] == [
        judged["beta"].pk,
        judged["alpha"].pk,
    ]
    with pytest.raises(ValidationError) as error:
        explanations.create_campaign(
            project=judged["project"], name="Direct", jobs=[judged["direct"]], reviewers=[judged["rev_a"]]
        )
    assert "jobs" in error.value.message_dict


@pytest.mark.parametrize(
    ("people", "per_item", "field"),
    [(["rev_a"], 2, "per_item"), ([], 1, "reviewers"), (["annotator"], 1, "reviewers"), (["viewer"], 1, "reviewers")],
)
def test_reviewers_must_review_and_be_enough(judged, people, per_item, field):
    with pytest.raises(ValidationError) as error:
        explanations.create_campaign(
            project=judged["project"],
            name="Too few",
            jobs=[judged["alpha"]],
            reviewers=[judged[p] for p in people],
            per_item=per_item,
        )
    assert field in error.value.message_dict


def test_a_summary_judge_gives_summary_items_with_every_flagged_sentence(
    client, judged, django_capture_on_commit_callbacks
):
    prompt = Prompt.objects.get(slug="tofueval-judge-summary-explain", version=1)
    with fake_openai.FakeOpenAI(reply=lambda request: "Explanation: The time is wrong.\nAnswer: no") as server:
        endpoint = Endpoint.objects.create(name="endpoint-gamma", base_url=server.url, model="model-gamma")
        with django_capture_on_commit_callbacks(execute=True):
            job = llm.create_job(project=judged["project"], kind=Job.Kind.JUDGE, endpoint=endpoint, prompt=prompt)
    campaign = explanations.create_campaign(
        project=judged["project"], name="Summaries", jobs=[job], reviewers=[judged["rev_a"]]
    )
    pilot = judged["items"]["pilot-1"].summaries.get()
    assert sorted(campaign.items.values_list("key", "sentence")) == sorted(
        (f"summary:{s.pk}", None) for s in (pilot, judged["items"]["main-1"].summaries.get())
    )
    assignment = Assignment.objects.get(item__campaign=campaign, item__key=f"summary:{pilot.pk}")
    client.force_login(judged["rev_a"])
    html = client.get(screen_url(judged, assignment)).content.decode()
    assert "The time is wrong." in html and f"Sentence 1:</span> {EXPLANATION}" in html
    assert "<mark" not in html and "model-gamma" not in html
    explanations.submit(assignment=assignment, posted={"rating-A": "partially_correct"}, user=judged["rev_a"])
    judgment = Judgment.objects.get(dimension="explanation_rating")
    assert (judgment.target, judgment.summary, judgment.sentence) == (f"summary:{pilot.pk}/job:{job.pk}", pilot, None)
    assert judgment.unit() == f"summary/job:{job.pk}"


# -- the screen -----------------------------------------------------------------------------------
def test_the_screen_hides_the_judges_and_shows_the_human_explanation(client, judged):
    campaign = make_campaign(judged)
    first = sentences(judged["items"]["pilot-1"])[0]
    assignment = assignment_of(campaign, judged["rev_a"], first)
    client.force_login(judged["rev_a"])
    response = client.get(screen_url(judged, assignment))
    html = response.content.decode()
    assert response.status_code == 200
    assert ALPHA_ON_TIME in html and BETA_ON_TIME in html
    assert "Explanation A" in html and "Explanation B" in html
    assert EXPLANATION in html  # the annotator's, without a name
    for secret in [*HIDDEN, SECRET_SYSTEM, "yorick", "ann1", f"job:{judged['alpha'].pk}", f"job:{judged['beta'].pk}"]:
        assert secret not in html, secret
    assert f'<mark id="under-review">{first.text}</mark>' in html
    for letter in "AB":
        for code in explanations.CODES:
            assert f'name="rating-{letter}" id="rating-{letter}-{code}" value="{code}" required' in html


def test_the_screen_takes_a_fixed_number_of_queries(client, judged, django_assert_num_queries):
    campaign = make_campaign(judged)
    assignment = assignment_of(campaign, judged["rev_a"], sentences(judged["items"]["pilot-1"])[0])
    client.force_login(judged["rev_a"])
    with django_assert_num_queries(10):  # session, user, membership x2, assignment, 5 for the screen
        assert client.get(screen_url(judged, assignment)).status_code == 200


def test_a_sentence_nobody_flagged_shows_no_human_explanation(client, judged):
    campaign = make_campaign(judged)
    second = sentences(judged["items"]["pilot-1"])[1]
    client.force_login(judged["rev_a"])
    html = client.get(screen_url(judged, assignment_of(campaign, judged["rev_a"], second))).content.decode()
    assert "No annotator labelled this sentence inconsistent" in html
    assert ALPHA_ON_TICKETS in html and BETA_ON_TICKETS in html


def shown_order(html: str) -> list[str]:
    """The judges' explanations in the order the page shows them."""
    texts = [ALPHA_ON_TIME, BETA_ON_TIME, ALPHA_ON_TICKETS, BETA_ON_TICKETS]
    return sorted((t for t in texts if t in html), key=html.index)


def test_the_order_is_shuffled_per_assignment_and_stable_on_reload(client, judged):
    campaign = make_campaign(judged)
    first = sentences(judged["items"]["pilot-1"])[0]
    alpha, beta = judged["alpha"].pk, judged["beta"].pk
    seeds = {}
    for seed in range(50):  # a seed for each order of the two jobs
        order = sorted([alpha, beta])
        random.Random(seed).shuffle(order)
        seeds.setdefault(tuple(order), seed)
    assert len(seeds) == 2
    shown = []
    for user, (order, seed) in zip(["rev_a", "rev_b"], seeds.items(), strict=True):
        assignment = assignment_of(campaign, judged[user], first)
        Assignment.objects.filter(pk=assignment.pk).update(shuffle_seed=seed)
        assignment.refresh_from_db()
        assert explanations.job_order(assignment, [alpha, beta]) == list(order)
        client.force_login(judged[user])
        page = shown_order(client.get(screen_url(judged, assignment)).content.decode())
        assert page == shown_order(client.get(screen_url(judged, assignment)).content.decode())  # a reload
        assert page == [ALPHA_ON_TIME if job == alpha else BETA_ON_TIME for job in order]
        shown.append(page)
    assert shown[0] != shown[1]


# -- rating ---------------------------------------------------------------------------------------
def test_a_missing_rating_is_refused_in_the_form(client, judged):
    campaign = make_campaign(judged)
    assignment = assignment_of(campaign, judged["rev_a"], sentences(judged["items"]["pilot-1"])[0])
    client.force_login(judged["rev_a"])
    response = client.post(screen_url(judged, assignment), {"rating-A": "correct"})
    html = response.content.decode()
    assert response.status_code == 400
    assert '<a href="#field-rating-B">Rate explanation B.</a>' in html
    assert 'id="rating-A-correct" value="correct" required checked' in html  # what was chosen stays
    assert not Judgment.objects.filter(dimension="explanation_rating").exists()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.PENDING


def test_an_unknown_rating_is_refused(client, judged):
    campaign = make_campaign(judged)
    assignment = assignment_of(campaign, judged["rev_a"], sentences(judged["items"]["pilot-1"])[0])
    client.force_login(judged["rev_a"])
    response = client.post(screen_url(judged, assignment), {"rating-A": "correct", "rating-B": "brilliant"})
    assert response.status_code == 400
    assert "Rate explanation B." in response.content.decode()


def test_submitting_records_one_judgment_per_explanation_then_goes_on(client, judged):
    campaign = make_campaign(judged)
    reviewer = judged["rev_a"]
    first = sentences(judged["items"]["pilot-1"])[0]
    assignment = assignment_of(campaign, reviewer, first)
    ratings = {judged["alpha"].pk: "correct", judged["beta"].pk: "incorrect"}
    client.force_login(reviewer)
    response = client.post(screen_url(judged, assignment), posted(assignment, ratings))
    assert response.status_code == 302
    assert response.url == f"/p/{judged['project'].slug}/campaigns/{campaign.pk}/explanations/next/"
    following = client.get(response.url)
    still_open = Assignment.objects.open_for(reviewer).filter(item__campaign=campaign)
    assert following.url == screen_url(judged, still_open.order_by("status", "item__key").first())
    rows = Judgment.objects.filter(assignment=assignment, dimension="explanation_rating")
    assert {(j.target, j.value) for j in rows} == {(f"sentence:{first.pk}/job:{job}", v) for job, v in ratings.items()}
    for judgment in rows:
        assert (judgment.summary, judgment.sentence) == (first.summary, first)
        assert judgment.unit() == f"sentence:0/job:{explanations.job_of(judgment.target)}"  # as exported
    assignment.refresh_from_db()
    campaign.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and campaign.labels_changed_at is not None


def test_the_last_assignment_leads_home(client, judged):
    campaign = make_campaign(judged, per_item=1)
    reviewer = judged["rev_b"]
    client.force_login(reviewer)
    for assignment in Assignment.objects.filter(item__campaign=campaign, annotator=reviewer):
        shown = explanations.screen(assignment)
        response = client.post(
            screen_url(judged, assignment),
            posted(assignment, dict.fromkeys([e.job_id for e in shown.explanations], "unrelated")),
        )
        assert response.status_code == 302
    assert client.get(response.url).url == "/"


def test_resubmitting_is_harmless_and_a_changed_rating_keeps_a_revision(client, judged):
    campaign = make_campaign(judged)
    assignment = assignment_of(campaign, judged["rev_a"], sentences(judged["items"]["pilot-1"])[0])
    alpha, beta = judged["alpha"].pk, judged["beta"].pk
    client.force_login(judged["rev_a"])
    url = screen_url(judged, assignment)
    client.post(url, posted(assignment, {alpha: "correct", beta: "unrelated"}))
    client.post(url, posted(assignment, {alpha: "correct", beta: "unrelated"}))
    assert Judgment.objects.filter(dimension="explanation_rating").count() == 2
    assert not JudgmentRevision.objects.exists()
    html = client.get(url).content.decode()
    assert "Update ratings" in html and 'value="unrelated" required checked' in html

    client.post(url, posted(assignment, {alpha: "correct", beta: "partially_correct"}))
    changed = Judgment.objects.get(dimension="explanation_rating", target__endswith=f"/job:{beta}")
    assert (changed.value, changed.version) == ("partially_correct", 2)
    revision = JudgmentRevision.objects.get()
    assert (revision.judgment, revision.version, revision.value, revision.changed_by) == (
        changed,
        1,
        "unrelated",
        judged["rev_a"],
    )
    assert Judgment.objects.get(target__endswith=f"/job:{alpha}").version == 1


# -- shares ---------------------------------------------------------------------------------------
def test_shares_per_judge_from_known_ratings(judged):
    campaign = make_campaign(judged)
    alpha, beta = judged["alpha"], judged["beta"]
    pilot_first = sentences(judged["items"]["pilot-1"])[0]
    main_first = sentences(judged["items"]["main-1"])[0]
    rate = [
        ("rev_a", pilot_first, {alpha.pk: "correct", beta.pk: "partially_correct"}),
        ("rev_b", pilot_first, {alpha.pk: "correct", beta.pk: "incorrect"}),
        ("rev_a", main_first, {alpha.pk: "unrelated"}),
    ]
    for user, sentence, ratings in rate:
        assignment = assignment_of(campaign, judged[user], sentence)
        explanations.submit(assignment=assignment, posted=posted(assignment, ratings), user=judged[user])
    rows = {row["job"]: row for row in explanations.shares(campaign)}
    assert (rows[alpha.pk]["model"], rows[alpha.pk]["endpoint"], rows[alpha.pk]["prompt"]) == (
        "model-alpha-7b",
        "endpoint-alpha",
        "tofueval-judge-sentence-explain v1",
    )
    assert rows[alpha.pk]["n"] == 3
    assert rows[alpha.pk]["shares"] == {
        "correct": 0.6667,
        "partially_correct": 0.0,
        "unrelated": 0.3333,
        "incorrect": 0.0,
        "no_explanation": 0.0,
    }
    assert rows[beta.pk]["n"] == 2
    assert rows[beta.pk]["shares"]["partially_correct"] == rows[beta.pk]["shares"]["incorrect"] == 0.5
    assert rows[beta.pk]["counts"]["correct"] == 0
    assert explanations.shares_for_job(beta)["shares"] == rows[beta.pk]["shares"]
    assert explanations.shares_for_job(judged["direct"]) is None


def test_no_ratings_yet_gives_no_shares(judged):
    campaign = make_campaign(judged)
    assert [row["n"] for row in explanations.shares(campaign)] == [0, 0]
    assert all(share is None for row in explanations.shares(campaign) for share in row["shares"].values())
    assert explanations.shares_for_job(judged["alpha"]) is None


def test_the_shares_page_names_the_models_for_leads_and_viewers(client, judged):
    campaign = make_campaign(judged)
    assignment = assignment_of(campaign, judged["rev_a"], sentences(judged["items"]["main-1"])[0])
    explanations.submit(assignment=assignment, posted={"rating-A": "correct"}, user=judged["rev_a"])
    url = f"/p/{judged['project'].slug}/campaigns/{campaign.pk}/explanation-shares/"
    for user in ("lead", "viewer"):
        client.force_login(judged[user])
        response = client.get(url)
        assert response.status_code == 200
        html = response.content.decode()
        assert "model-alpha-7b" in html and "model-beta-70b" in html and "100% <span" in html


# -- the lead's form ------------------------------------------------------------------------------
def new_url(world) -> str:
    return f"/p/{world['project'].slug}/campaigns/new/explanation-rating/"


def test_a_lead_creates_a_campaign_from_the_form(client, judged):
    client.force_login(judged["lead"])
    page = client.get(new_url(judged)).content.decode()
    assert "endpoint-alpha" in page and "endpoint-beta" in page and "endpoint-direct" not in page
    data = {
        "name": "Judges explained",
        "jobs": [judged["alpha"].pk, judged["beta"].pk],
        "reviewers": [judged["rev_a"].pk, judged["rev_b"].pk],
        "per_item": 1,
    }
    response = client.post(new_url(judged), data)
    assert response.status_code == 302
    campaign = judged["project"].campaigns.get(slug="judges-explained")
    assert campaign.protocol == Protocol.EXPLANATION_RATING and campaign.items.count() == 4
    again = client.post(new_url(judged), data)
    assert again.status_code == 400 and "already has a campaign" in again.content.decode()


def test_the_form_refuses_more_reviewers_per_item_than_reviewers(client, judged):
    client.force_login(judged["lead"])
    data = {"name": "Too many", "jobs": [judged["alpha"].pk], "reviewers": [judged["rev_a"].pk], "per_item": 3}
    response = client.post(new_url(judged), data)
    assert response.status_code == 400
    assert "Between 1 and the 1 reviewer(s) chosen." in response.content.decode()
    assert not judged["project"].campaigns.filter(protocol=Protocol.EXPLANATION_RATING).exists()


# -- permissions ----------------------------------------------------------------------------------
def test_only_the_assignments_reviewer_opens_the_screen(client, judged, outsider):
    campaign = make_campaign(judged, per_item=1)
    assignment = Assignment.objects.filter(item__campaign=campaign, annotator=judged["rev_a"]).first()
    url = screen_url(judged, assignment)
    for user in (judged["annotator"], judged["viewer"], outsider, judged["rev_b"], judged["lead"]):
        client.force_login(user)
        assert client.get(url).status_code == 404, user
        assert client.post(url, {"rating-A": "correct"}).status_code == 404, user
    assert not Judgment.objects.filter(dimension="explanation_rating").exists()
    client.force_login(judged["rev_a"])
    assert client.get(url).status_code == 200


def test_only_leads_create_and_only_leads_and_viewers_read_shares(client, judged, outsider):
    campaign = make_campaign(judged)
    shares_url = f"/p/{judged['project'].slug}/campaigns/{campaign.pk}/explanation-shares/"
    for user in (judged["annotator"], judged["rev_a"], judged["viewer"], outsider):
        client.force_login(user)
        assert client.get(new_url(judged)).status_code == 404, user
        assert client.post(new_url(judged), {"name": "x"}).status_code == 404, user
    for user in (judged["annotator"], judged["rev_a"], outsider):
        client.force_login(user)
        assert client.get(shares_url).status_code == 404, user
