"""Settings for the test run: the real settings, with defaults for what a developer's shell
may not set. DATABASE_URL and REDIS_URL from the environment still apply (CI sets both)."""

import os
import tempfile

os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("SECRET_KEY", "test-only-key-that-is-long-enough-0123456789")
os.environ.setdefault("ATTEST_VAR_DIR", tempfile.mkdtemp(prefix="attest-test-"))
# Threads of the tests (live server, Celery worker) close their connections after each request
# or task, so the test database can be dropped at the end.
os.environ.setdefault("DB_CONN_MAX_AGE", "0")

from annotation.settings import *  # noqa: E402,F403
