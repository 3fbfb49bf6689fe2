"""The OpenAI-compatible provider over real HTTP against the fake server: answers, usage, and
which failures are worth a retry."""

import pytest

from annotation.llm import providers
from annotation.llm.models import Endpoint
from tests.llm import fake_openai

MESSAGES = [{"role": "user", "content": "Is the claim consistent? Answer yes or no."}]


def endpoint(url, **extra):
    return Endpoint(name="fake", base_url=url, model="fake-model", timeout_seconds=2, **extra)


def test_an_answer_with_its_token_counts():
    with fake_openai.FakeOpenAI(reply=lambda request: "yes") as server:
        got = providers.complete(endpoint(server.url), MESSAGES, temperature=0.7)
    assert (got.text, got.finish_reason) == ("yes", "stop")
    assert got.input_tokens > 0 and got.output_tokens == 1
    assert server.requests[0]["model"] == "fake-model" and server.requests[0]["temperature"] == 0.7


@pytest.mark.parametrize(
    ("behaviour", "error", "status"),
    [
        (fake_openai.status(429, "slow down", retry_after=3), providers.TransientError, 429),
        (fake_openai.status(500, "boom"), providers.TransientError, 500),
        (fake_openai.status(503, "overloaded"), providers.TransientError, 503),
        (fake_openai.status(400, "bad request"), providers.PermanentError, 400),
        (fake_openai.status(401, "bad key"), providers.PermanentError, 401),
        (fake_openai.garbage(), providers.TransientError, None),
        (fake_openai.truncate(), providers.TransientError, None),
        (fake_openai.hang(3), providers.TransientError, None),
    ],
)
def test_failures_are_transient_or_permanent(behaviour, error, status):
    with fake_openai.FakeOpenAI(script=[behaviour]) as server, pytest.raises(error) as caught:
        providers.complete(endpoint(server.url), MESSAGES)
    assert caught.value.status == status
    if status == 429:
        assert caught.value.retry_after == 3 and "slow down" in str(caught.value)


def test_a_connection_refused_is_transient():
    with pytest.raises(providers.TransientError):
        providers.complete(endpoint("http://127.0.0.1:9/v1"), MESSAGES)


def test_a_missing_key_is_permanent_and_names_the_variable(monkeypatch):
    monkeypatch.delenv("ATTEST_TEST_KEY", raising=False)
    with pytest.raises(providers.PermanentError, match="ATTEST_TEST_KEY"):
        providers.complete(endpoint("http://127.0.0.1:9/v1", key_env="ATTEST_TEST_KEY"), MESSAGES)


def test_the_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ATTEST_TEST_KEY", "sk-secret")
    with fake_openai.FakeOpenAI(reply=lambda request: "no") as server:
        providers.complete(endpoint(server.url, key_env="ATTEST_TEST_KEY"), MESSAGES)
    assert server.authorizations == ["Bearer sk-secret"]
