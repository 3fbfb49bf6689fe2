import pytest
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError

from annotation.corpus.models import Document, Summary
from annotation.projects import services as projects
from annotation.projects.models import Membership, Project, Role
from annotation.protocols import services as protocols
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, Protocol, Taxonomy, TaxonomyLabel

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, annotator):
    document = Document.objects.create(project=project, external_id="d1", text="Ana: hi")
    summary = Summary.objects.create(project=project, document=document, external_id="s1", text="Ana said hi.")
    sentence = summary.sentences.create(index=0, start=0, end=12, text="Ana said hi.")
    campaign = Campaign.objects.create(project=project, slug="c", name="C", protocol=Protocol.TOFUEVAL_TASK1)
    item = Item.objects.create(campaign=campaign, key="i1", document=document)
    item.summaries.add(summary)
    assignment = protocols.assign(item=item, annotator=annotator, seed=7)
    judgment = Judgment.objects.create(
        assignment=assignment,
        dimension="consistency",
        summary=summary,
        sentence=sentence,
        target=Judgment.make_target(summary=summary, sentence=sentence),
        value="consistent",
    )
    return {"document": document, "summary": summary, "item": item, "assignment": assignment, "judgment": judgment}


def test_deleting_an_annotated_summary_is_refused(world):
    with pytest.raises(ProtectedError):
        world["summary"].delete()
    assert Judgment.objects.count() == 1


def test_deleting_a_document_with_summaries_is_refused(world, project):
    with pytest.raises(RestrictedError):
        world["document"].delete()
    lone = Document.objects.create(project=project, external_id="d2", text="x")
    Summary.objects.create(project=project, document=lone, external_id="s2", text="y")
    with pytest.raises(RestrictedError):
        lone.delete()


def test_deleting_a_project_with_labels_is_refused(world, project):
    with pytest.raises(ProtectedError):
        project.delete()
    assert Project.objects.filter(pk=project.pk).exists()


def test_an_unannotated_project_can_be_deleted(other_project):
    document = Document.objects.create(project=other_project, external_id="d", text="x")
    Summary.objects.create(project=other_project, document=document, external_id="s", text="y")
    other_project.delete()
    assert not Summary.objects.exists()


def test_the_same_item_is_never_assigned_twice_to_one_annotator(world, annotator):
    assert protocols.assign(item=world["item"], annotator=annotator) == world["assignment"]
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(item=world["item"], annotator=annotator, stage="annotate")


def test_shuffled_order_is_seeded_and_recorded(world, make_user, project):
    other = make_user("ann2")
    projects.add_member(project=project, user=other, role=Role.ANNOTATOR)
    again = protocols.assign(item=world["item"], annotator=other, seed=7)
    assert again.summary_order == world["assignment"].summary_order == [world["summary"].pk]
    assert again.shuffle_seed == 7


def test_one_judgment_per_unit_and_dimension(world):
    j = world["judgment"]
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(assignment=j.assignment, dimension=j.dimension, target=j.target, value="inconsistent")


def test_units_read_back_relative_to_their_line(world):
    assert world["judgment"].unit() == "sentence:0"
    j = world["judgment"]
    j.target = Judgment.make_target(summary=j.summary, suffix="span:3")
    j.sentence = None
    assert j.unit() == "summary/span:3"


def test_members_get_pseudonyms_in_order_and_roles_can_change(project, lead, annotator, make_user):
    assert list(project.memberships.values_list("pseudonym", flat=True)) == ["A1", "A2"]
    membership = projects.add_member(project=project, user=annotator, role=Role.REVIEWER)
    assert membership.pseudonym == "A2" and membership.role == Role.REVIEWER


def test_pseudonyms_are_unique_per_project(project, lead, make_user):
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(project=project, user=make_user("x"), pseudonym="A1")


def test_double_share_must_be_a_share(project):
    with pytest.raises(IntegrityError), transaction.atomic():
        Campaign.objects.create(project=project, slug="bad", name="B", protocol=Protocol.SUMMEDITS, double_share=1.5)


def test_the_four_taxonomies_are_loaded_with_definitions():
    slugs = dict(Taxonomy.objects.filter(version=1).values_list("slug", "name"))
    assert set(slugs) == {"tofueval-error-types", "ramprasad-categories", "madisse-ambiguity", "summedits-edit-types"}
    madisse = Taxonomy.objects.get(slug="madisse-ambiguity", version=1)
    top = madisse.labels.filter(parent__isnull=True).values_list("code", flat=True)
    assert list(top) == ["implicit_reasoning", "meaning", "context", "other_evaluability"]
    assert madisse.labels.get(code="meaning").children.count() == 8
    assert not TaxonomyLabel.objects.filter(definition="").exists()
