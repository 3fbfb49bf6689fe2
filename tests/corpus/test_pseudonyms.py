"""Imported labels are never attributed to a person who did not give them."""

import json

import pytest

from annotation.corpus import services
from annotation.corpus.formats.base import ImportFailed
from annotation.projects import services as projects
from annotation.projects.models import Membership, Project, Role
from annotation.protocols import services as protocols
from annotation.protocols.models import Campaign, Item, Judgment, Protocol
from tests.corpus.test_jsonl import records, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(project, annotator, tmp_path):
    """The demo project with a label by its own member, the annotator (A1)."""
    services.import_data(project_slug="demo", format="jsonl", paths=[write(tmp_path, records())])
    item = Item.objects.get(campaign__project=project)
    summary = item.summaries.get()
    assignment = protocols.assign(item=item, annotator=annotator)
    Judgment.objects.create(
        assignment=assignment,
        dimension="relevance",
        summary=summary,
        target=Judgment.make_target(summary=summary),
        value=5,
    )
    return project


def exported(slug) -> list[dict]:
    return [json.loads(line) for line in services.export_lines(project=Project.objects.get(slug=slug))]


def test_members_are_signed_with_the_project_prefix_in_exports(labelled):
    annotators = {j["annotator"] for r in exported("demo") if r["type"] == "summary" for j in r["judgments"]}
    assert annotators == {"A7", f"{labelled.pseudonym_prefix}:A1"}


def test_own_export_comes_back_to_the_same_people(labelled, tmp_path):
    path = write(tmp_path, exported("demo"), "own.jsonl")
    members = Membership.objects.count()
    counts, _ = services.import_data(project_slug="demo", format="jsonl", paths=[path])
    assert counts == {} and Membership.objects.count() == members


def test_another_projects_export_never_lands_on_this_projects_people(labelled, other_project, make_user, tmp_path):
    person = make_user("someone")
    projects.add_member(project=other_project, user=person, role=Role.ANNOTATOR)  # A1 there too
    path = write(tmp_path, exported("demo"), "from-demo.jsonl")
    services.import_data(project_slug="other", format="jsonl", paths=[path])
    assert not Judgment.objects.filter(assignment__annotator=person).exists()
    stand_in = Membership.objects.get(project=other_project, pseudonym=f"{labelled.pseudonym_prefix}:A1")
    assert stand_in.is_external and not stand_in.user.is_active


def test_a_bare_pseudonym_of_a_member_is_refused(labelled, tmp_path):
    rows = records()
    rows[3]["judgments"][1]["annotator"] = "A1"
    with pytest.raises(ImportFailed) as caught:
        services.import_data(project_slug="demo", format="jsonl", paths=[write(tmp_path, rows, "bare.jsonl")])
    assert any("bare.jsonl, line 4" in str(i) and "pseudonym of a member" in str(i) for i in caught.value.issues)
    assert Campaign.objects.filter(protocol=Protocol.TOFUEVAL_TASK1).count() == 1
