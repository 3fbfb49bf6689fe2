"""Who sets an LLM base URL: a shared endpoint is changed by staff (or on the command line) only;
a project's endpoint by that project's leads, and only that project's jobs run on it. The key
variable an endpoint names is sent to its base URL, so the server's own secrets cannot be named."""

import pytest

from annotation.llm.models import Endpoint, Job
from annotation.projects import services as projects
from annotation.projects.models import Role

pytestmark = pytest.mark.django_db

FORM = {
    "kind": "openai",
    "base_url": "http://127.0.0.1:8001/v1",
    "model": "m",
    "key_env": "",
    "timeout_seconds": "30",
    "max_concurrency": "4",
    "requests_per_minute": "60",
    "price_input_per_1k": "0",
    "price_output_per_1k": "0",
    "is_active": "on",
}


@pytest.fixture
def shared(db):
    return Endpoint.objects.create(name="shared", kind="openai", base_url="http://127.0.0.1:8001/v1", model="m")


@pytest.fixture
def owned(project):
    return Endpoint.objects.create(name="demo-own", base_url="http://127.0.0.1:8002/v1", model="m", project=project)


def test_a_leads_new_endpoint_belongs_to_the_project_they_lead(client, lead, project):
    client.force_login(lead)
    assert client.post("/llm/endpoints/", FORM | {"name": "mine"}).status_code == 302
    assert Endpoint.objects.get(name="mine").project == project


def test_a_lead_of_two_projects_chooses_one_of_theirs(client, lead, project, other_project, make_user):
    projects.add_member(project=other_project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    response = client.post("/llm/endpoints/", FORM | {"name": "which"})
    assert response.status_code == 400 and "only staff add shared endpoints" in response.content.decode()
    assert client.post("/llm/endpoints/", FORM | {"name": "which", "project": other_project.pk}).status_code == 302
    assert Endpoint.objects.get(name="which").project == other_project


def test_a_lead_cannot_add_an_endpoint_to_a_project_they_do_not_lead(client, lead, other_project):
    client.force_login(lead)
    response = client.post("/llm/endpoints/", FORM | {"name": "theirs", "project": other_project.pk})
    assert response.status_code == 400 and not Endpoint.objects.filter(name="theirs").exists()


def test_a_lead_reads_but_cannot_change_a_shared_endpoint(client, lead, shared):
    client.force_login(lead)
    page = client.get(f"/llm/endpoints/{shared.pk}/")
    assert (
        page.status_code == 200
        and b"only staff change it" in page.content
        and b'method="post" class="stacked' not in page.content
    )
    response = client.post(f"/llm/endpoints/{shared.pk}/", FORM | {"name": "shared", "base_url": "http://evil.test/v1"})
    assert response.status_code == 403
    shared.refresh_from_db()
    assert shared.base_url == "http://127.0.0.1:8001/v1"


def test_staff_change_a_shared_endpoint(client, make_user, shared):
    client.force_login(make_user("staffer", is_staff=True))
    response = client.post(f"/llm/endpoints/{shared.pk}/", FORM | {"name": "shared", "base_url": "http://10.0.0.5/v1"})
    assert response.status_code == 302
    shared.refresh_from_db()
    assert shared.base_url == "http://10.0.0.5/v1" and shared.project is None


def test_a_lead_changes_their_projects_endpoint_but_cannot_move_it(client, lead, project, other_project, owned):
    client.force_login(lead)
    post = FORM | {"name": "demo-own", "base_url": "http://127.0.0.1:9000/v1", "project": other_project.pk}
    assert client.post(f"/llm/endpoints/{owned.pk}/", post).status_code == 302
    owned.refresh_from_db()
    assert owned.base_url == "http://127.0.0.1:9000/v1" and owned.project == project


def test_another_projects_lead_never_sees_nor_uses_the_endpoint(client, outsider, other_project, owned, shared):
    client.force_login(outsider)
    assert client.get(f"/llm/endpoints/{owned.pk}/").status_code == 404
    assert client.post(f"/llm/endpoints/{owned.pk}/", FORM | {"name": "demo-own"}).status_code == 404
    listing = client.get("/llm/endpoints/").content.decode()
    assert "demo-own" not in listing and "shared" in listing
    jobs_page = client.get(f"/p/{other_project.slug}/llm/jobs/").content.decode()
    assert "demo-own" not in jobs_page and "shared" in jobs_page
    refused = client.post(f"/p/{other_project.slug}/llm/jobs/", {"kind": "topics", "endpoints": [owned.pk]})
    assert refused.status_code == 400
    url = f"/api/projects/{other_project.slug}/llm/jobs/"
    api = client.post(url, {"kind": "topics", "endpoint": "demo-own"}, content_type="application/json")
    assert api.status_code == 400 and "endpoint" in api.json() and not Job.objects.exists()


def test_the_service_refuses_another_projects_endpoint_whoever_calls_it(other_project, owned):
    from django.core.exceptions import ValidationError

    from annotation.llm import services

    with pytest.raises(ValidationError, match="belongs to another project"):
        services.create_job(project=other_project, kind="topics", endpoint=owned)
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    "name",
    [
        "SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "EMAIL_HOST_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "DJANGO_SIGNING_KEY",
        "HOME",
    ],
)
def test_an_endpoint_cannot_name_a_server_secret_as_its_key(client, lead, name):
    client.force_login(lead)
    response = client.post("/llm/endpoints/", FORM | {"name": "exfil", "key_env": name})
    assert response.status_code == 400 and not Endpoint.objects.filter(name="exfil").exists()


def test_an_endpoint_names_an_api_key_variable(client, lead):
    client.force_login(lead)
    assert client.post("/llm/endpoints/", FORM | {"name": "gpt", "key_env": "OPENAI_API_KEY"}).status_code == 302


def test_only_leads_and_staff_reach_endpoint_pages(client, annotator, shared):
    client.force_login(annotator)
    assert client.get("/llm/endpoints/").status_code == 404
    assert client.get(f"/llm/endpoints/{shared.pk}/").status_code == 404
    assert client.post("/llm/endpoints/", FORM | {"name": "nope"}).status_code == 404
