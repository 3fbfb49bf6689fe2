"""The command line for scripted runs: llm_endpoint add / list, llm_job --wait ending in JSON."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.corpus.models import Document, Summary, Topic
from annotation.llm import services
from annotation.llm.models import Endpoint
from tests.llm import fake_openai


def test_endpoints_are_added_changed_listed_and_checked(db, capsys, monkeypatch):
    monkeypatch.delenv("ATTEST_CLI_KEY", raising=False)
    call_command(
        "llm_endpoint",
        "add",
        "local",
        "--base-url",
        "http://127.0.0.1:8001/v1",
        "--model",
        "m",
        "--key-env",
        "ATTEST_CLI_KEY",
        "--rpm",
        "30",
    )
    call_command("llm_endpoint", "add", "local", "--base-url", "http://127.0.0.1:8002/v1", "--model", "m2")
    call_command("llm_endpoint", "add", "base", "--offline")
    call_command("llm_endpoint", "list")
    out = capsys.readouterr().out
    assert "Added endpoint local." in out and "Changed endpoint local." in out
    assert "local: m2 at http://127.0.0.1:8002/v1" in out and "base: offline baseline" in out
    with pytest.raises(CommandError, match="base_url"):
        call_command("llm_endpoint", "add", "bad", "--base-url", "ftp://x", "--model", "m")
    with pytest.raises(CommandError, match="base URL and a model"):
        call_command("llm_endpoint", "add", "bad", "--model", "m")
    assert Endpoint.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_llm_job_waits_and_prints_one_json_object(project, capsys):
    services.load_default_prompts()  # a transactional test may run after a flush
    document = Document.objects.create(project=project, external_id="d", text="Ana: The library opens in March.")
    topic = Topic.objects.create(document=document, name="library")
    with fake_openai.FakeOpenAI(reply=lambda request: "The library opens in March.") as server:
        call_command(
            "llm_endpoint",
            "add",
            "fake",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "--price-in",
            "0.5",
            "--price-out",
            "1",
        )
        call_command("llm_job", "--project", "demo", "--kind", "summaries", "--endpoint", "fake", "--wait")
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "done" and (result["done"], result["failed"]) == (1, 0)
    assert result["input_tokens"] > 0 and result["output_tokens"] > 0 and result["cost_usd"] > 0
    assert Summary.objects.get(topic=topic).text == "The library opens in March."
    with pytest.raises(CommandError, match="not judge"):
        call_command("llm_endpoint", "add", "base", "--offline")
        call_command("llm_job", "--project", "demo", "--kind", "judge", "--endpoint", "base")
