from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.celery import app as celery_app
from annotation.projects import services as projects
from annotation.projects.models import Project, Role


@pytest.fixture(autouse=True, scope="session")
def _celery_eager():
    """Tasks run in-process by default; tests/test_services.py drives a real worker."""
    celery_app.conf.task_always_eager = True
    yield


@pytest.fixture(autouse=True)
def _reference_data(request):
    """A transactional test (transaction=True, live_server, the browser tests) ends with a flush
    that takes the data migrations load (taxonomies, default prompts) with it: put them back
    before each one. (serialized_rollback would, but it breaks on the content types that an
    earlier transactional test's flush recreated with new ids.)"""
    marker = request.node.get_closest_marker("django_db")
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    if not (transactional or {"transactional_db", "live_server"} & set(request.fixturenames)):
        return
    request.getfixturevalue("transactional_db")
    from annotation.llm import services as llm
    from annotation.protocols import taxonomy_data
    from annotation.protocols.models import Taxonomy, TaxonomyLabel

    taxonomy_data.load(Taxonomy, TaxonomyLabel)
    taxonomy_data.load(Taxonomy, TaxonomyLabel, taxonomies=taxonomy_data.TAXONOMIES_V2, version=2)
    llm.load_default_prompts()


@pytest.fixture
def make_user(db):
    def make(username: str, **extra):
        return get_user_model().objects.create_user(username, f"{username}@example.org", "pw-correct-horse-9", **extra)

    return make


@pytest.fixture
def project(db):
    return Project.objects.create(slug="demo", name="Demo")


@pytest.fixture
def other_project(db):
    return Project.objects.create(slug="other", name="Other")


@pytest.fixture
def lead(project, make_user):
    user = make_user("lead")
    projects.add_member(project=project, user=user, role=Role.LEAD)
    return user


@pytest.fixture
def annotator(project, make_user):
    user = make_user("ann1")
    projects.add_member(project=project, user=user, role=Role.ANNOTATOR)
    return user


@pytest.fixture
def outsider(other_project, make_user):
    user = make_user("outsider")
    projects.add_member(project=other_project, user=user, role=Role.LEAD)
    return user


@pytest.fixture(scope="session")
def data() -> Path:
    """The release samples bundled with the demo (copies of the shared sample folder)."""
    from annotation.corpus.management.commands.load_demo import DATA

    return DATA
