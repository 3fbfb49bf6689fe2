"""Settings for the test run: the real settings, with defaults for what a developer's shell
may not set. DATABASE_URL and REDIS_URL from the environment still apply (CI sets both)."""

import os
import tempfile

os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("SECRET_KEY", "test-only-key-that-is-long-enough-0123456789")
os.environ.setdefault("ATTEST_VAR_DIR", tempfile.mkdtemp(prefix="attest-test-"))

from annotation.settings import *  # noqa: E402,F403
