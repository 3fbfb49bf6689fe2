"""The API fuzzed against its own OpenAPI schema (schemathesis, in process over WSGI): every
operation, as a lead with a token, on a project that holds data. For every generated request:
no server error, a status code the schema documents, and a body that matches the schema.

Path parameters are pinned to the world's objects plus one that does not exist, so that the
requests reach the views' real work rather than stopping at 404 every time.
"""

import json

import pytest
import schemathesis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.serializers.json import DjangoJSONEncoder as JSONEncoder
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.corpus import services as corpus
from annotation.llm import services as llm
from annotation.llm.models import Endpoint
from annotation.protocols.models import Campaign
from tests.corpus.test_jsonl import records

MISSING = 999_999


@pytest.fixture
def keep_connection():
    """As Django's test client does: a request must not close the connection that holds the
    test's transaction (the WSGI handler does so at its start and end)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(keep_connection, project, lead, tmp_path):
    """The demo project with the toy JSONL imported, an import job, an LLM job and the lead's token."""
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    corpus.import_data(project_slug=project.slug, format="jsonl", paths=[path])
    endpoint = Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    job = llm.create_job(project=project, kind="summaries", endpoint=endpoint, user=lead, params={})
    upload = SimpleUploadedFile("toy.jsonl", path.read_bytes())
    import_job = corpus.start_import(project=project, user=lead, format="jsonl", files=[upload])
    return {
        "slug": project.slug,
        "token": Token.objects.create(user=lead).key,
        "ids": {
            "agreement": Campaign.objects.get(project=project, slug="pilot").pk,
            "imports": import_job.pk,
            "llm": job.pk,
        },
    }


def pinned(raw: dict) -> dict:
    """The schema with path parameters limited to the world's objects (the test maps the
    placeholder id 1 to the real one) and one missing object each."""
    for operations in raw["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] == "slug":
                    parameter["schema"] = {"type": "string", "enum": ["demo", "no-such-project"]}
                elif parameter["in"] == "path" and parameter["name"] == "id":
                    parameter["schema"] = {"type": "integer", "enum": [1, MISSING]}
    job = raw["components"]["schemas"]["LlmJobRequest"]["properties"]
    job["endpoint"] = {**job["endpoint"], "enum": ["base", "no-such-endpoint"]}
    return raw


def load_schema(mode: GenerationMode):
    """The schema the API serves at /api/schema/ (tests/api/test_api.py checks it is served),
    generated here because collection runs before any database exists. Valid requests go to
    the world's objects; invalid ones keep the schema's own parameters, to break them."""
    raw = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), cls=JSONEncoder))
    schema = schemathesis.openapi.from_dict(pinned(raw) if mode == GenerationMode.POSITIVE else raw)
    schema.config.generation.update(modes=[mode])
    schema.app = get_wsgi_application()
    return schema


valid, invalid = load_schema(GenerationMode.POSITIVE), load_schema(GenerationMode.NEGATIVE)
FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def call(case, world, checks):
    if case.path_parameters and case.path_parameters.get("id") == 1:
        kind = next(k for k in world["ids"] if f"/{k}/" in case.path)
        case.path_parameters["id"] = world["ids"][kind]
    return case.call_and_validate(headers={"Authorization": f"Token {world['token']}"}, checks=checks)


@pytest.mark.slow
@pytest.mark.django_db
@valid.parametrize()
@FUZZ
def test_valid_requests_get_documented_answers(case, world):
    call(
        case,
        world,
        [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
    )


@pytest.mark.slow
@pytest.mark.django_db
@invalid.parametrize()
@FUZZ
def test_invalid_requests_are_refused_without_a_server_error(case, world):
    """Values the schema rules out: a 4xx, never a 5xx. (Not checked against the schema: a path
    outside the URL patterns is not an API URL, and Django answers it with the site's HTML 404.)"""
    response = call(case, world, [not_a_server_error])
    assert response.status_code < 500
