"""Deployment hardening (issue 8, third part): Django's deploy checks pass with production
settings, no default credentials, Celery speaks JSON only, uploads are never served back, and
filter parameters are allow-listed."""

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import get_resolver

from annotation.agreement.models import AgreementSnapshot
from annotation.celery import app as celery_app
from annotation.corpus.models import Document
from annotation.protocols.models import Campaign, Protocol
from tests.security.test_matrix import ALL_ROUTES

ROOT = Path(settings.BASE_DIR)


def production_env(tmp_path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "REDIS_URL"))}
    return env | {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "attest.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://attest.example.org",
        "ATTEST_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "annotation.settings",
        **extra,
    }


def manage(tmp_path, *args, **extra):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=production_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_checks_pass_with_production_settings(tmp_path):
    result = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("key", ["", "changeme", "django-insecure-abc", "short-key"])
def test_production_refuses_a_missing_or_weak_secret_key(tmp_path, key):
    result = manage(tmp_path, "check", SECRET_KEY=key)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_compose_file_holds_no_default_password():
    """Every secret of docker-compose.yml must come from the environment, with no fallback value."""
    compose = (ROOT / "docker-compose.yml").read_text()
    for line in compose.splitlines():
        match = re.match(r"\s*([A-Z_]*(PASSWORD|SECRET)[A-Z_]*):\s*(.*)$", line)
        if match:
            value = match.group(3)
            assert re.fullmatch(r"\$\{\w+(:\?[^}]*|:-)\}", value), f"default credential in compose: {line.strip()}"
        for url in re.findall(r"\w+://[^\s\"']+", line):
            if "@" in url:
                assert re.search(r"://\w+:\$\{\w+:\?", url), f"password in a URL of the compose file: {line.strip()}"


def test_settings_have_no_default_secret_outside_debug(tmp_path):
    env = production_env(tmp_path)
    del env["SECRET_KEY"]
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


@pytest.mark.django_db
def test_demo_users_are_refused_without_debug(settings):
    """load_demo resets the passwords of users named lead/annotator1/... and makes `lead` a
    superuser: on a production database it must refuse."""
    from unittest import mock

    from django.core.management import call_command
    from django.core.management.base import CommandError

    settings.DEBUG = False
    with (
        mock.patch("annotation.corpus.services.import_data", side_effect=AssertionError("ran")),
        pytest.raises(CommandError),
    ):
        call_command("load_demo")


def test_celery_accepts_json_only():
    conf = celery_app.conf
    assert list(conf.accept_content) == ["json"]
    assert conf.task_serializer == "json"
    assert conf.result_serializer == "json"
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    assert conf.event_serializer == "json"


def test_celery_json_only_in_production_settings(tmp_path):
    code = (
        "import django; django.setup(); from annotation.celery import app; c = app.conf;"
        "print(list(c.accept_content), c.task_serializer, c.result_serializer)"
    )
    env = production_env(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "['json'] json json", result.stderr


# -- uploads are never served back ---------------------------------------------------------------
def test_no_route_serves_uploaded_files():
    assert settings.MEDIA_URL in ("", "/"), "MEDIA_URL set: something may serve uploads"
    patterns = [pattern for pattern, _, _ in ALL_ROUTES]
    assert not [p for p in patterns if p.startswith(("media", "uploads")) or "imports/<path" in p]


@pytest.mark.django_db
def test_an_upload_is_not_reachable_by_url(client, lead, project, tmp_path, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.corpus import services

    settings.MEDIA_ROOT = tmp_path
    upload = SimpleUploadedFile("page.jsonl", b"<script>alert(1)</script>\n", content_type="text/html")
    job = services.start_import(project=project, user=lead, format="jsonl", files=[upload])
    stored = Path(job.files[0])
    client.force_login(lead)
    for url in [f"/media/{stored.relative_to(tmp_path)}", f"/{stored.relative_to(tmp_path)}", f"/static/{stored.name}"]:
        assert client.get(url).status_code == 404, url


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/p/demo/export.jsonl", "/api/projects/demo/export.jsonl"])
def test_downloads_are_attachments_never_sniffed(client, lead, project, url):
    from django.urls import reverse

    url = {"/p/demo/export.jsonl": reverse("corpus:export", args=["demo"])}.get(
        url, reverse("api-export", args=["demo"])
    )
    Document.objects.create(
        project=project, external_id="<script>alert(1)</script>", text="<img src=x onerror=alert(1)>"
    )
    client.force_login(lead)
    response = client.get(url)
    body = b"".join(response.streaming_content)
    assert response.status_code == 200 and b"<script>" in body  # the data as it is, but never as a page
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Type"].split(";")[0] in ("application/x-ndjson", "application/json")
    assert response["X-Content-Type-Options"] == "nosniff"


# -- filter and ordering parameters ----------------------------------------------------------------
def test_no_view_passes_a_query_parameter_to_order_by_or_filter_raw():
    """Every view that reads the query string, and how it is checked; a new reader must be added."""
    checked = {
        "annotation/corpus/views.py": "DocumentFilterForm (choices from the project's data)",
        "annotation/agreement/views.py": "FilterForm (choices from the campaign's data)",
        "annotation/llm/views.py": "version: digits only; project: among the projects the user leads",
        "annotation/api/views.py": "agreement: the dashboard's FilterForm, 400 on anything else",
        "annotation/protocols/summedits_views.py": "domain: one of the campaign's domains, else 404",
        "annotation/protocols/ambiguity_views.py": "item: digits only, an item of this campaign, else 404",
    }
    readers = set()
    for path in (ROOT / "annotation").rglob("*.py"):
        text = path.read_text()
        if "migrations" in path.parts:
            continue
        if re.search(r"request\.(GET|query_params)|query_params|ordering_fields|filterset|OrderingFilter", text):
            readers.add(str(path.relative_to(ROOT)))
        assert not re.search(r"order_by\(\s*request\.|order_by\([^)]*(GET|query_params)", text), path
        assert not re.search(r"\.(filter|exclude)\(\*\*\s*request\.", text), path
        assert not re.search(
            r"\.extra\(|RawSQL\(|objects\.raw\(|execute\(\s*f[\"']|execute\([^,)]*(\.format\(|\s%\s)", text
        ), f"raw SQL in {path}"
    assert readers <= set(checked), f"new readers of query parameters to check: {readers - set(checked)}"
    assert not [v for v in get_resolver().url_patterns if "ordering" in str(v.pattern)]


@pytest.mark.django_db
def test_document_filters_take_only_the_projects_values(client, lead, project):
    Document.objects.create(project=project, external_id="doc-alpha", dataset="mediasum", split="test", text="x")
    Document.objects.create(project=project, external_id="doc-beta", dataset="meetingbank", split="dev", text="y")
    client.force_login(lead)
    url = f"/p/{project.slug}/documents/"
    assert b"doc-alpha" in client.get(url, {"dataset": "mediasum"}).content
    for bad in [{"dataset": "nope"}, {"split": "x' OR 1=1 --"}, {"dataset": ["mediasum", "__all__"]}]:
        page = client.get(url, bad).content
        assert b"No documents match" in page and b"doc-alpha" not in page and b"doc-beta" not in page
    for ignored in [{"ordering": "-text"}, {"order_by": "password"}, {"page": "-1"}, {"page": "x"}, {"q": "%"}]:
        assert client.get(url, ignored).status_code == 200


@pytest.fixture
def campaign(project):
    return Campaign.objects.create(
        project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1, rounds=["pilot", "main"]
    )


@pytest.mark.django_db
def test_api_agreement_refuses_filters_the_campaign_does_not_have(client, lead, project, campaign):
    from tests.protocols.conftest import make_item

    make_item(campaign, project, "pilot-1", "pilot")
    client.force_login(lead)
    url = f"/api/projects/{project.slug}/campaigns/{campaign.pk}/agreement/"
    assert client.get(url).status_code == 200
    assert client.get(url, {"round": "pilot"}).status_code == 200
    before = AgreementSnapshot.objects.count()
    for bad in [{"round": "made-up"}, {"dataset": "nope"}, {"exclude": "nobody"}, {"round": "x" * 5000}]:
        response = client.get(url, bad)
        assert response.status_code == 400, bad
        assert set(json.loads(response.content)) <= {"round", "dataset", "exclude"}
    assert AgreementSnapshot.objects.count() == before  # no snapshot, no recompute for made-up filters
    assert client.get(url, {"format": "json", "page": "2"}).status_code == 200  # DRF's own parameters


@pytest.mark.django_db
def test_dashboard_ignores_filters_the_campaign_does_not_have(client, lead, project, campaign):
    client.force_login(lead)
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/"
    assert client.get(url).status_code == 200
    before = AgreementSnapshot.objects.count()
    assert client.get(url, {"round": "made-up", "dataset": "<script>"}).status_code == 200
    assert AgreementSnapshot.objects.count() == before


@pytest.mark.django_db
def test_prompt_page_parameters_are_checked(client, lead, project, other_project):
    client.force_login(lead)
    url = "/llm/prompts/tofueval-summary/"
    for params in [{"version": "1 OR 1=1"}, {"version": "-1"}, {"project": other_project.slug}, {"project": "%"}]:
        response = client.get(url, params)
        assert response.status_code == 200
        assert other_project.name.encode() not in response.content
