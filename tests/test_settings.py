"""Settings refuse to run a production instance with a missing or known-insecure key."""

import os
import subprocess
import sys

import pytest


def load_settings(**env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")}
    return subprocess.run(
        [sys.executable, "-c", "import annotation.settings"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("key", [None, "", "changeme", "django-insecure-abc", "insecure-dev-key", "short"])
def test_insecure_secret_key_is_refused_when_debug_is_off(key):
    env = {"DEBUG": "0"} | ({"SECRET_KEY": key} if key is not None else {})
    result = load_settings(**env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set to a long random value" in result.stderr


def test_a_long_random_key_is_accepted_when_debug_is_off():
    assert load_settings(DEBUG="0", SECRET_KEY="k" * 50).returncode == 0


def test_debug_needs_no_key():
    assert load_settings(DEBUG="1").returncode == 0


def test_production_settings_pass_the_deployment_checks(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG",)}
    env |= {"SECRET_KEY": "p" * 20 + "Q9-x" * 10, "ALLOWED_HOSTS": "attest.example.org", "DEBUG": "0"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
