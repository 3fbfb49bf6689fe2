"""Calling a model: the OpenAI-compatible HTTP provider (the `openai` SDK pointed at a base URL)
and the offline baseline. Both return a Completion; failures are Transient (worth a retry: 429,
5xx, timeouts, a dropped connection) or Permanent (a 4xx, a missing key: retrying cannot help).

The SDK's own retries are off: retrying is the Celery task's job, with backoff and jitter, so
that a retry frees the worker and respects the endpoint's limits.
"""

import time
from dataclasses import dataclass

import openai

from annotation.llm import offline


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    finish_reason: str = ""
    meta: dict | None = None  # what the offline rules know about their output (JSON-able)


class ProviderError(Exception):
    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class TransientError(ProviderError):
    """429, 5xx, timeouts and connection failures: retried with backoff."""


class PermanentError(ProviderError):
    """Anything a retry cannot fix: a 4xx other than 429, a missing key, a bad request."""


def complete(endpoint, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512) -> Completion:
    if endpoint.is_baseline():
        raise PermanentError("the offline baseline does not answer chat prompts; use offline_* instead")
    if not endpoint.has_key():
        raise PermanentError(f"the environment variable {endpoint.key_env} (the API key) is not set on the worker")
    client = openai.OpenAI(
        base_url=endpoint.base_url, api_key=endpoint.api_key(), timeout=endpoint.timeout_seconds, max_retries=0
    )
    started = time.monotonic()
    try:
        response = client.chat.completions.create(
            model=endpoint.model, messages=messages, temperature=temperature, max_tokens=max_tokens
        )
    except openai.APITimeoutError as error:
        raise TransientError(f"timed out after {endpoint.timeout_seconds:g} s") from error
    except openai.APIConnectionError as error:
        raise TransientError(f"could not connect: {error}") from error
    except openai.APIStatusError as error:
        message = f"HTTP {error.status_code}: {provider_message(error)}"
        if error.status_code == 429 or error.status_code >= 500:
            raise TransientError(message, status=error.status_code, retry_after=retry_after(error)) from error
        raise PermanentError(message, status=error.status_code) from error
    except openai.OpenAIError as error:  # unparseable body and the like: the server misbehaved
        raise TransientError(f"bad response: {error}") from error
    latency = int((time.monotonic() - started) * 1000)
    if not getattr(response, "choices", None):  # a body that is not a chat completion at all
        raise TransientError(f"the response is not a chat completion: {str(response)[:200]!r}")
    choice = response.choices[0]
    usage = response.usage
    return Completion(
        text=choice.message.content or "",
        input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        latency_ms=latency,
        finish_reason=choice.finish_reason or "",
    )


def provider_message(error: "openai.APIStatusError") -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
    return str(error.message)[:500]


def retry_after(error: "openai.APIStatusError") -> float | None:
    try:
        return float(error.response.headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None


# -- the offline baseline: the same unit kinds, answered by rules ------------------------------
def offline_topics(document: str, n: int) -> Completion:
    found = offline.topics(document, n=n)
    return Completion(text="\n".join(f"{i}. {t}" for i, t in enumerate(found, 1)))


def offline_summary(document: str, topic: str) -> Completion:
    return Completion(text=offline.summary(document, topic))
