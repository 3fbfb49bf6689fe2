"""The real services: PostgreSQL and Redis when CI points at them, and a real Celery worker."""

import os
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from annotation.celery import app as celery_app
from annotation.corpus import services
from annotation.corpus.models import ImportJob, Summary
from tests.corpus.test_jsonl import records

REQUIRED = os.environ.get("ATTEST_REQUIRE_SERVICES") == "1"


@pytest.mark.skipif(not REQUIRED, reason="CI sets ATTEST_REQUIRE_SERVICES=1 with PostgreSQL and Redis")
def test_ci_runs_against_postgresql_and_redis(db):
    assert connection.vendor == "postgresql"
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    import redis

    assert redis.Redis.from_url(settings.REDIS_URL).ping()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_an_upload_is_imported_by_a_real_worker_with_progress(lead, project):
    import json

    body = "".join(json.dumps(r) + "\n" for r in records()).encode()
    celery_app.conf.task_always_eager = False
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            job = services.start_import(
                project=project, user=lead, format="jsonl", files=[SimpleUploadedFile("d.jsonl", body)]
            )
            deadline = time.monotonic() + 30
            while not job.is_finished() and time.monotonic() < deadline:
                time.sleep(0.2)
                job.refresh_from_db()
    finally:
        celery_app.conf.task_always_eager = True
    assert job.status == ImportJob.Status.DONE, job.errors
    assert services.import_progress(job)["percent"] == 100
    assert Summary.objects.filter(project=project).count() == 1
