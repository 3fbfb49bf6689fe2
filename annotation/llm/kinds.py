"""What each kind of job does with one unit: which units a job has, what it asks the model,
how the answer is parsed, and what it writes. Read one kind top to bottom.

A kind is four functions: `units(job)` lists (key, payload) pairs; `ask(job, unit, call)` gets
`call(messages, temperature=...)`, the rate-limited provider call, and returns a Completion;
`parse(job, unit, text)` turns the raw answer into a result or raises parsing.ParseError;
`write(job, unit, result)` runs inside the transaction that marks the unit done and creates its
artefacts idempotently (a unit written twice creates nothing new).
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotation.corpus import text as textlib
from annotation.corpus.models import Document, Origin, Summary, SummarySentence, Topic
from annotation.llm import parsing, prompts, providers
from annotation.llm.models import Job, Prompt, PromptKind

DEFAULT_PROMPTS = {
    Job.Kind.TOPICS: "tofueval-topics",
    Job.Kind.SUMMARIES: "tofueval-summary",
    Job.Kind.JUDGE: "tofueval-judge-sentence",
}
PROMPT_KINDS = {
    Job.Kind.TOPICS: {PromptKind.TOPICS},
    Job.Kind.SUMMARIES: {PromptKind.SUMMARY},
    Job.Kind.JUDGE: {PromptKind.JUDGE_SENTENCE, PromptKind.JUDGE_SUMMARY, PromptKind.SUMMEDITS_JUDGE},
}
OFFLINE_KINDS = {Job.Kind.TOPICS, Job.Kind.SUMMARIES}


def provenance(job: Job, unit, extra: dict | None = None) -> dict:
    endpoint = job.endpoint
    return {
        "job": job.pk,
        "unit": unit.key,
        "endpoint": endpoint.name,
        "provider": endpoint.kind,
        "model": endpoint.model or "offline-baseline",
        "baseline": endpoint.is_baseline(),
        "prompt": f"{job.prompt.slug} v{job.prompt.version}" if job.prompt_id else "",
        "params": job.params,
        "raw": unit.raw_output,
        "input_tokens": unit.input_tokens,
        "output_tokens": unit.output_tokens,
        "latency_ms": unit.latency_ms,
        **(extra or {}),
    }


# -- topics (TofuEval C.1): 3 per document -------------------------------------------------------
def topic_units(job: Job) -> list[tuple[str, dict]]:
    documents = Document.objects.filter(project=job.project, text_missing=False)
    if job.params.get("documents"):
        documents = documents.filter(pk__in=job.params["documents"])
    return [(f"document:{pk}", {"document": pk}) for pk in documents.order_by("pk").values_list("pk", flat=True)]


def ask_topics(job: Job, unit, call):
    document = Document.objects.get(pk=unit.payload["document"])
    n = int(job.params.get("n", 3))
    if job.endpoint.is_baseline():
        return providers.offline_topics(document.text, n)
    return call(prompts.messages(job.prompt, {"document": document.text, "n": n}), temperature=0.0)


def parse_topics(job: Job, unit, text: str) -> dict:
    return {"topics": parsing.topics(text, n=int(job.params.get("n", 3)))}


def write_topics(job: Job, unit, result: dict) -> None:
    origin = Origin.BASELINE if job.endpoint.is_baseline() else Origin.LLM
    for name in result["topics"]:
        Topic.objects.get_or_create(
            document_id=unit.payload["document"],
            name=name[:500],
            defaults={"origin": origin, "provenance": provenance(job, unit)},
        )


# -- summaries (TofuEval C.2): one per (document, topic) and endpoint, temperature 0.7 -------------
def summary_units(job: Job) -> list[tuple[str, dict]]:
    topics = Topic.objects.filter(document__project=job.project, document__text_missing=False)
    if job.params.get("topics"):
        topics = topics.filter(pk__in=job.params["topics"])
    return [(f"topic:{pk}", {"topic": pk}) for pk in topics.order_by("pk").values_list("pk", flat=True)]


def ask_summaries(job: Job, unit, call):
    topic = Topic.objects.select_related("document").get(pk=unit.payload["topic"])
    if job.endpoint.is_baseline():
        return providers.offline_summary(topic.document.text, topic.name)
    values = {"document": topic.document.text, "topic": topic.name}
    return call(prompts.messages(job.prompt, values), temperature=float(job.params.get("temperature", 0.7)))


def parse_summaries(job: Job, unit, text: str) -> dict:
    return {"summary": parsing.summary(text)}


def write_summaries(job: Job, unit, result: dict) -> None:
    topic = Topic.objects.select_related("document").get(pk=unit.payload["topic"])
    baseline = job.endpoint.is_baseline()
    summary, created = Summary.objects.get_or_create(
        project=job.project,
        external_id=f"llm-{job.pk}-{unit.key.replace(':', '-')}",
        defaults={
            "document": topic.document,
            "topic": topic,
            "system": "offline-baseline" if baseline else job.endpoint.model,
            "origin": Origin.BASELINE if baseline else Origin.LLM,
            "text": result["summary"],
            "provenance": provenance(job, unit),
        },
    )
    if created:
        SummarySentence.objects.bulk_create(
            SummarySentence(summary=summary, index=s.index, start=s.start, end=s.end, text=s.text)
            for s in textlib.split_sentences(summary.text)
        )


# -- judge (TofuEval C.3 / SummEdits zero-shot): a label per sentence or per summary --------------
def judge_units(job: Job) -> list[tuple[str, dict]]:
    summaries = Summary.objects.annotatable().filter(project=job.project)
    if job.params.get("campaign"):
        summaries = summaries.filter(items__campaign_id=job.params["campaign"]).distinct()
    if job.params.get("summaries"):
        summaries = summaries.filter(pk__in=job.params["summaries"])
    if level(job) == "summary":
        return [(f"summary:{pk}", {"summary": pk}) for pk in summaries.order_by("pk").values_list("pk", flat=True)]
    out = []
    for summary in summaries.order_by("pk").prefetch_related("sentences"):
        out += [(f"sentence:{s.pk}", {"summary": summary.pk, "sentence": s.pk}) for s in summary.sentences.all()]
    return out


def level(job: Job) -> str:
    return "sentence" if job.prompt and job.prompt.kind == PromptKind.JUDGE_SENTENCE else "summary"


def explains(prompt: Prompt) -> bool:
    return "Explanation:" in prompt.template


def ask_judge(job: Job, unit, call):
    summary = Summary.objects.select_related("document").get(pk=unit.payload["summary"])
    values = {"document": summary.document.text, "summary": summary.text}
    if "sentence" in unit.payload:
        values["claim"] = summary.sentences.get(pk=unit.payload["sentence"]).text
    return call(prompts.messages(job.prompt, values), temperature=float(job.params.get("temperature", 0.0)))


def parse_judge(job: Job, unit, text: str) -> dict:
    return parsing.judge(text, explain=explains(job.prompt))


def write_nothing(job: Job, unit, result: dict) -> None:
    """Judge labels stay on the unit (unit.result): they are predictions, not people's labels."""


@dataclass(frozen=True)
class Kind:
    units: Callable
    ask: Callable
    parse: Callable
    write: Callable


KINDS = {
    Job.Kind.TOPICS: Kind(topic_units, ask_topics, parse_topics, write_topics),
    Job.Kind.SUMMARIES: Kind(summary_units, ask_summaries, parse_summaries, write_summaries),
    Job.Kind.JUDGE: Kind(judge_units, ask_judge, parse_judge, write_nothing),
}


def check(*, kind: str, endpoint, prompt: Prompt | None) -> None:
    """Refuse a job that cannot run, with a message for the form."""
    if kind not in KINDS:
        raise ValidationError({"kind": f"Jobs of kind {kind!r} are not available yet."})
    if endpoint.is_baseline() and kind not in OFFLINE_KINDS:
        raise ValidationError({"endpoint": "The offline baseline can generate topics and summaries, not judge."})
    if not endpoint.is_active:
        raise ValidationError({"endpoint": "This endpoint is switched off."})
    if prompt is None and not endpoint.is_baseline():
        raise ValidationError({"prompt": "Choose a prompt: this kind has no default prompt in the database."})
    if prompt is not None and prompt.kind not in PROMPT_KINDS[kind]:
        raise ValidationError({"prompt": f"A {prompt.get_kind_display()} prompt cannot drive a {kind} job."})


def default_prompt(kind: str) -> Prompt | None:
    slug = DEFAULT_PROMPTS.get(kind)
    return Prompt.objects.filter(slug=slug).order_by("-version").first() if slug else None


def preview_values(prompt_kind: str, project) -> tuple[dict, str] | None:
    """Values to render a prompt of this kind on a real item of the project, and what it is;
    None when the project has nothing of that shape."""
    from annotation.llm import worddiff

    summaries = Summary.objects.annotatable().filter(project=project).select_related("document", "topic")
    if prompt_kind == PromptKind.TOPICS:
        document = Document.objects.filter(project=project, text_missing=False).order_by("pk").first()
        return ({"document": document.text, "n": 3}, f"document {document.external_id}") if document else None
    if prompt_kind == PromptKind.SUMMARY:
        topic = Topic.objects.filter(document__project=project, document__text_missing=False).order_by("pk").first()
        if topic is None:
            return None
        return {
            "document": topic.document.text,
            "topic": topic.name,
        }, f"topic {topic.name!r} of {topic.document.external_id}"
    if prompt_kind in (PromptKind.EDIT_CONSISTENT, PromptKind.EDIT_INCONSISTENT, PromptKind.EDIT_TYPES):
        seed = summaries.filter(seed__isnull=False).order_by("pk").first()
        if seed is None:
            return None
        edit = Summary.objects.filter(edit__seed__summary=seed).order_by("pk").first()
        values = {"document": seed.document.text, "seed": seed.text, "n": 15}
        if edit is not None:
            values |= {"edit": edit.text, "diff": worddiff.to_markup(worddiff.diff(seed.text, edit.text))}
        return values, f"seed {seed.external_id}"
    summary = summaries.filter(sentences__isnull=False).order_by("pk").first()
    if summary is None:
        return None
    sentence = summary.sentences.order_by("index").first()
    history = "Agent 1: (arguments of earlier rounds appear here)"
    values = {
        "document": summary.document.text,
        "summary": summary.text,
        "claim": sentence.text,
        "sentence": sentence.text,
        "stance": "consistent",
        "history": history,
    }
    return values, f"summary {summary.external_id}, sentence 1"
