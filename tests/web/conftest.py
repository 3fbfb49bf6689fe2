"""A small world for the HTML pages: one project with a member of every role, an outsider who
leads another project, an imported pseudonymous annotator, and a little data made with the ORM."""

import pytest
from django.test import Client

from annotation.corpus.models import Document, EditedSummary, SeedSummary, Summary, SummarySentence, Topic
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols.models import Assignment, Campaign, Item, Judgment

PASSWORD = "pw-correct-horse-9"


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """Hashing dominates these tests otherwise; the real hasher is not what they check."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def member(project, make_user, username, role):
    user = make_user(username)
    projects.add_member(project=project, user=user, role=role)
    return user


@pytest.fixture
def annotator2(project, make_user):
    return member(project, make_user, "ann2", Role.ANNOTATOR)


@pytest.fixture
def reviewer(project, make_user):
    return member(project, make_user, "rev", Role.REVIEWER)


@pytest.fixture
def viewer(project, make_user):
    return member(project, make_user, "viewer", Role.VIEWER)


@pytest.fixture
def imported(project):
    """The user behind an imported pseudonymous annotator: never a person who may see the project."""
    return projects.annotator_for(project=project, pseudonym="release-7")


@pytest.fixture
def world(project, lead, annotator, annotator2, reviewer, viewer, outsider, imported):
    return {
        "lead": lead,
        "annotator": annotator,
        "annotator2": annotator2,
        "reviewer": reviewer,
        "viewer": viewer,
        "outsider": outsider,
        "imported": imported,
    }


@pytest.fixture
def data(project, world):
    """Two documents (a text and a dialogue), summaries with sentences, a campaign with judgments."""
    text = Document.objects.create(
        project=project,
        external_id="news-1",
        dataset="news",
        split="test",
        text="The council met on Monday. It approved the budget.",
    )
    dialogue = Document.objects.create(
        project=project,
        external_id="meet-1",
        dataset="meetings",
        split="dev",
        kind=Document.Kind.DIALOGUE,
        turns=[{"speaker": "Ana", "text": "We meet at 4 pm."}, {"speaker": "Ben", "text": "Fine."}],
        text="Ana: We meet at 4 pm.\nBen: Fine.",
    )
    Document.objects.create(project=project, external_id="news-2", dataset="news", split="dev", text_missing=True)
    topic = Topic.objects.create(document=text, name="Budget")
    summary = Summary.objects.create(
        project=project,
        document=text,
        topic=topic,
        external_id="s1",
        system="model_A",
        text="The council met on Tuesday. It approved the budget.",
    )
    first = SummarySentence.objects.create(
        summary=summary, index=0, start=0, end=27, text="The council met on Tuesday."
    )
    SummarySentence.objects.create(summary=summary, index=1, start=28, end=52, text="It approved the budget.")
    edit = Summary.objects.create(
        project=project,
        document=text,
        external_id="s1-e1",
        system="edit",
        text="The council met on Monday. It rejected the budget.",
    )
    EditedSummary.objects.create(summary=edit, seed=SeedSummary.objects.create(summary=summary, domain="news"))
    campaign = Campaign.objects.create(
        project=project, slug="pilot", name="Pilot", protocol="tofueval_task1", status=Campaign.Status.ACTIVE
    )
    item = Item.objects.create(campaign=campaign, key="news-1/Budget", document=text, topic=topic)
    item.summaries.add(summary)
    done = Assignment.objects.create(item=item, annotator=world["annotator"], status=Assignment.Status.SUBMITTED)
    Assignment.objects.create(item=item, annotator=world["annotator2"])
    Judgment.objects.create(
        assignment=done,
        dimension="consistency",
        target=f"sentence:{first.pk}",
        summary=summary,
        sentence=first,
        value="inconsistent",
        explanation="Monday, not Tuesday",
    )
    Judgment.objects.create(
        assignment=done, dimension="relevance", target=f"summary:{summary.pk}", summary=summary, value=4
    )
    return {"text": text, "dialogue": dialogue, "summary": summary, "campaign": campaign}


@pytest.fixture
def client_for(db):
    """A signed-in test client for a user (None: anonymous)."""

    def make(user=None):
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return make
