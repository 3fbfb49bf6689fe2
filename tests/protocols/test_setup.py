from collections import Counter

import pytest

from annotation.corpus import services as corpus
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import setup
from annotation.protocols.models import Assignment, Campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def tofu(data, make_user):
    """The TofuEval sample (6 items of 6 summaries) and three annotators."""
    corpus.import_data(
        project_slug="tofu",
        format="tofueval",
        paths=[data / "tofueval_sample"],
        options={"documents": str(data / "meetingbank_documents_sample.jsonl")},
    )
    project = Campaign.objects.get(slug="release-tofueval").project
    people = []
    for name in ("a1", "a2", "a3"):
        user = make_user(name)
        projects.add_member(project=project, user=user, role=Role.ANNOTATOR)
        people.append(user)
    return project, people


def plan(people, **extra):
    return setup.Plan(name="Pilot", slug="pilot", annotators=people, **extra)


def test_every_item_by_k_annotators_with_balanced_load_and_no_repeats(tofu):
    project, people = tofu
    campaign = setup.create_campaign(project=project, plan=plan(people, per_item=2))
    assignments = Assignment.objects.filter(item__campaign=campaign)
    assert campaign.items.count() == 6 and assignments.count() == 12
    per_item = Counter(assignments.values_list("item", flat=True))
    assert set(per_item.values()) == {2}
    load = Counter(assignments.values_list("annotator", flat=True))
    assert max(load.values()) - min(load.values()) <= 1
    assert all(len(a.summary_order) == 6 and a.shuffle_seed is not None for a in assignments)


def test_a_share_of_items_twice_and_the_rest_once(tofu):
    project, people = tofu
    campaign = setup.create_campaign(project=project, plan=plan(people, per_item=1, double_share=0.5))
    per_item = Counter(Assignment.objects.filter(item__campaign=campaign).values_list("item", flat=True))
    assert sorted(per_item.values()) == [1, 1, 1, 2, 2, 2]


def test_filters_rounds_and_summaries(tofu):
    project, people = tofu
    campaign = setup.create_campaign(
        project=project, plan=plan(people, systems=["model_A", "model_B"], rounds=["pilot-1", "main"], pilot_items=2)
    )
    assert all(item.summaries.count() == 2 for item in campaign.items.all())
    assert Counter(campaign.items.values_list("round", flat=True)) == {"pilot-1": 2, "main": 4}
    assert "Topic category" in campaign.guidelines and campaign.status == "active"


def test_bad_plans_are_refused_with_messages(tofu):
    project, people = tofu
    with pytest.raises(Exception) as caught:
        setup.create_campaign(project=project, plan=plan(people[:1], per_item=2))
    assert "More annotators per item" in str(caught.value)
    with pytest.raises(Exception, match="No summaries"):
        setup.create_campaign(project=project, plan=plan(people, datasets=["nope"]))
    assert not Campaign.objects.filter(slug="pilot").exists()


def test_lead_sets_up_a_campaign_in_the_browser_form(tofu, client, make_user):
    project, people = tofu
    lead = make_user("boss")
    projects.add_member(project=project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    url = f"/p/{project.slug}/campaigns/new/tofueval-task1/"
    assert "Summarizers" in client.get(url).content.decode()
    bad = client.post(
        url,
        {
            "name": "Pilot",
            "annotators": [str(people[0].pk)],
            "per_item": 3,
            "double_share": 0,
            "rounds": "main",
            "pilot_items": 0,
            "guidelines": "g",
        },
    )
    assert bad.status_code == 400 and "More annotators per item" in bad.content.decode()
    good = client.post(
        url,
        {
            "name": "Pilot",
            "annotators": [str(p.pk) for p in people],
            "per_item": 2,
            "double_share": 0,
            "rounds": "pilot-1, main",
            "pilot_items": 2,
            "guidelines": "g",
        },
    )
    assert good.status_code == 302 and Campaign.objects.get(slug="pilot").items.count() == 6
    client.force_login(people[0])
    assert client.get(url).status_code == 404
