"""What each kind of job does with one unit: which units a job has, what it asks the model,
how the answer is parsed, and what it writes. Read one kind top to bottom.

A kind is four functions: `units(job)` lists (key, payload) pairs; `ask(job, unit, call)` gets
`call(messages, temperature=...)`, the rate-limited provider call, and returns a Completion;
`parse(job, unit, text)` turns the raw answer into a result or raises parsing.ParseError;
`write(job, unit, result)` runs inside the transaction that marks the unit done and creates its
artefacts idempotently (a unit written twice creates nothing new).
"""

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from annotation.corpus import text as textlib
from annotation.corpus.models import Document, EditedSummary, Origin, SeedSummary, Summary, SummarySentence, Topic
from annotation.llm import offline, parsing, prompts, providers, worddiff
from annotation.llm.models import Job, Prompt, PromptKind

DEFAULT_PROMPTS = {
    Job.Kind.TOPICS: "tofueval-topics",
    Job.Kind.SUMMARIES: "tofueval-summary",
    Job.Kind.JUDGE: "tofueval-judge-sentence",
    Job.Kind.EDITS: "summedits-edit-inconsistent",
    Job.Kind.EDIT_TYPES: "summedits-edit-types",
    Job.Kind.DEBATE: "madisse-debate-agent",
}
PROMPT_KINDS = {
    Job.Kind.TOPICS: {PromptKind.TOPICS},
    Job.Kind.SUMMARIES: {PromptKind.SUMMARY},
    Job.Kind.JUDGE: {PromptKind.JUDGE_SENTENCE, PromptKind.JUDGE_SUMMARY, PromptKind.SUMMEDITS_JUDGE},
    Job.Kind.EDITS: {PromptKind.EDIT_INCONSISTENT},
    Job.Kind.EDIT_TYPES: {PromptKind.EDIT_TYPES},
    Job.Kind.DEBATE: {PromptKind.DEBATE_AGENT},
}
OFFLINE_KINDS = {Job.Kind.TOPICS, Job.Kind.SUMMARIES, Job.Kind.EDITS}


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
    sentence_kinds = (PromptKind.JUDGE_SENTENCE, PromptKind.DEBATE_AGENT)
    return "sentence" if job.prompt and job.prompt.kind in sentence_kinds else "summary"


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


# -- edits (SummEdits section 5): about 30 minor edits of each seed, both labels -----------------
def edit_units(job: Job) -> list[tuple[str, dict]]:
    seeds = SeedSummary.objects.filter(summary__project=job.project, summary__document__text_missing=False)
    if job.params.get("seeds"):
        seeds = seeds.filter(pk__in=job.params["seeds"])
    out = []
    for pk in seeds.order_by("pk").values_list("pk", flat=True):
        if job.endpoint.is_baseline():  # the rules give both kinds in one go
            out.append((f"seed:{pk}", {"seed": pk, "expected": "both"}))
        else:
            out += [(f"seed:{pk}/{label}", {"seed": pk, "expected": label}) for label in ("consistent", "inconsistent")]
    return out


def edits_per_unit(job: Job, unit) -> int:
    n = int(job.params.get("n", 30))
    return n if unit.payload["expected"] == "both" else (n + 1) // 2


def ask_edits(job: Job, unit, call):
    seed = SeedSummary.objects.select_related("summary__document").get(pk=unit.payload["seed"]).summary
    n = edits_per_unit(job, unit)
    if job.endpoint.is_baseline():
        made = offline.edits(seed.text, seed.document.text, n=n, rng_seed=job.pk)
        text = "\n".join(f"{i}. {e.text}" for i, e in enumerate(made, 1))
        rules = {e.text: {"rule": e.kind, "expected": e.expected, "rule_note": e.note} for e in made}
        return providers.Completion(text=text, meta={"rules": rules})
    prompt = (
        job.prompt
        if unit.payload["expected"] == "inconsistent"
        else Prompt.objects.get(pk=job.params["consistent_prompt"])
    )
    values = {"document": seed.document.text, "seed": seed.text, "n": n}
    return call(prompts.messages(prompt, values), temperature=float(job.params.get("temperature", 0.7)))


def parse_edits(job: Job, unit, text: str) -> dict:
    seed = SeedSummary.objects.select_related("summary").get(pk=unit.payload["seed"]).summary
    accepted, refused = parsing.edits(text, seed=seed.text, n=edits_per_unit(job, unit))
    if not accepted:
        reasons = "; ".join(r["reason"] for r in refused[:3]) or "no edits"
        raise parsing.ParseError(f"no acceptable edit ({reasons})")
    return {"edits": accepted, "refused": refused}


def write_edits(job: Job, unit, result: dict) -> None:
    """Each new edit becomes a Summary (same document and topic as its seed) and an
    EditedSummary; an edit identical to one the seed already has is skipped."""
    seed = SeedSummary.objects.select_related("summary__document", "summary__topic").get(pk=unit.payload["seed"])
    existing = set(Summary.objects.filter(edit__seed=seed).values_list("text", flat=True)) | {seed.summary.text}
    rules = (result.get("meta") or {}).get("rules", {})
    baseline = job.endpoint.is_baseline()
    for k, text in enumerate(result["edits"], 1):
        if text in existing:
            continue
        existing.add(text)
        extra = rules.get(text) or {"expected": unit.payload["expected"]}
        summary = Summary.objects.create(
            project=job.project,
            document=seed.summary.document,
            topic=seed.summary.topic,
            external_id=f"{seed.summary.external_id}/llm-{job.pk}-{unit.key.rsplit('/', 1)[-1]}-{k}"[:255],
            system="offline-baseline" if baseline else job.endpoint.model,
            origin=Origin.BASELINE if baseline else Origin.LLM,
            text=text,
            provenance=provenance(job, unit, extra),
        )
        EditedSummary.objects.create(summary=summary, seed=seed)
        SummarySentence.objects.bulk_create(
            SummarySentence(summary=summary, index=s.index, start=s.start, end=s.end, text=s.text)
            for s in textlib.split_sentences(text)
        )


# -- edit types (SummEdits section 6.3): tag an edit over its <ins>/<del> diff ----------------------
def edit_type_units(job: Job) -> list[tuple[str, dict]]:
    edits = EditedSummary.objects.filter(summary__project=job.project)
    if job.params.get("seeds"):
        edits = edits.filter(seed__in=job.params["seeds"])
    return [(f"edit:{pk}", {"edit": pk}) for pk in edits.order_by("pk").values_list("summary_id", flat=True)]


def ask_edit_types(job: Job, unit, call):
    edit = EditedSummary.objects.select_related("summary__document", "seed__summary").get(
        summary_id=unit.payload["edit"]
    )
    seed, text = edit.seed.summary.text, edit.summary.text
    values = {
        "diff": worddiff.to_markup(worddiff.diff(seed, text)),
        "document": edit.summary.document.text,
        "seed": seed,
        "edit": text,
    }
    return call(prompts.messages(job.prompt, values), temperature=0.0)


def parse_edit_types(job: Job, unit, text: str) -> dict:
    return {"types": parsing.edit_types(text)}


def write_edit_types(job: Job, unit, result: dict) -> None:
    """The LLM's tags go on the edit's provenance (a reviewer's tags are Judgments)."""
    summary = Summary.objects.select_for_update().get(pk=unit.payload["edit"])
    tags = summary.provenance.get("llm_edit_types", {})
    tags[str(job.pk)] = {"types": result["types"], "model": job.endpoint.model, "prompt": str(job.prompt)}
    summary.provenance = {**summary.provenance, "llm_edit_types": tags}
    summary.save(update_fields=["provenance"])


# -- debates (MADISSE): agents with alternating initial stances argue over a sentence ---------------
DEBATE_DEFAULTS = {"agents": 4, "rounds": 3, "debates": 1, "adjudicators": 3, "aggregate": "debate"}


def debate_settings(job: Job) -> dict:
    return {k: job.params.get(k, v) for k, v in DEBATE_DEFAULTS.items()}


def ask_debate(job: Job, unit, call):
    """Run every debate of the unit; the Completion's text is the JSON transcript (kept as the
    raw output), its tokens the sum over all calls. A turn that does not parse ends the unit
    with the transcript so far and the reason."""
    conf = debate_settings(job)
    summary = Summary.objects.select_related("document").get(pk=unit.payload["summary"])
    sentence = summary.sentences.get(pk=unit.payload["sentence"]).text
    base = {"document": summary.document.text, "summary": summary.text, "sentence": sentence}
    adjudicator = Prompt.objects.get(pk=job.params["adjudicator_prompt"])
    usage = {"input": 0, "output": 0}

    def ask(prompt, values):
        completion = call(prompts.messages(prompt, values), temperature=float(job.params.get("temperature", 0.7)))
        usage["input"] += completion.input_tokens
        usage["output"] += completion.output_tokens
        return completion.text

    transcript = {"debates": []}
    try:
        for d in range(int(conf["debates"])):
            debate = {"turns": []}
            transcript["debates"].append(debate)  # kept, turn by turn, even if a turn fails
            run_debate(debate, job.prompt, adjudicator, base, conf, d, random.Random(f"{job.pk}/{unit.key}/{d}"), ask)
    except parsing.ParseError as error:
        transcript["error"] = str(error)
    text = json.dumps(transcript, ensure_ascii=False)
    return providers.Completion(text=text, input_tokens=usage["input"], output_tokens=usage["output"])


def run_debate(debate: dict, agent_prompt, adjudicator, base: dict, conf: dict, number: int, rng, ask) -> None:
    """One debate, written into `debate` as it goes: alternating initial stances (the first
    agent's flips from one debate to the next), rounds until all agree or R is reached, each
    round reading the earlier arguments in a shuffled order; without agreement, adjudicators vote."""
    stances = ["consistent" if (i + number) % 2 == 0 else "inconsistent" for i in range(int(conf["agents"]))]
    debate["stances"] = stances
    turns = debate["turns"]
    this_round = []
    for round_number in range(1, int(conf["rounds"]) + 1):
        earlier = turns[:]
        rng.shuffle(earlier)  # no agent always speaks first in what the others read
        history = "\n".join(f"Agent {t['agent'] + 1}: {t['argument']} (verdict: {t['verdict']})" for t in earlier)
        this_round = []
        for agent, stance in enumerate(stances):
            raw = ask(agent_prompt, base | {"stance": stance, "history": history or "(none yet)"})
            turn = {"round": round_number, "agent": agent, "raw": raw}
            debate["turns"].append(turn)
            turn.update(parsing.debate_turn(raw))
            this_round.append(turn["verdict"])
        if len(set(this_round)) == 1:
            debate["stopped"] = f"agreement after round {round_number}"
            debate["verdict"] = this_round[0]
            debate["final"] = this_round
            return
    debate["final"] = this_round
    history = "\n".join(f"Agent {t['agent'] + 1}, round {t['round']}: {t['argument']}" for t in turns)
    votes = debate["adjudicators"] = []
    for _ in range(int(conf["adjudicators"])):
        raw = ask(adjudicator, base | {"history": history})
        votes.append({"raw": raw})
        votes[-1]["verdict"] = parsing.verdict(raw)
    debate["verdict"] = majority([v["verdict"] for v in votes])


def majority(verdicts: list[str]) -> str:
    """The more frequent verdict; a tie counts as inconsistent, as for people's labels."""
    return "consistent" if verdicts.count("consistent") > verdicts.count("inconsistent") else "inconsistent"


def parse_debate(job: Job, unit, text: str) -> dict:
    transcript = json.loads(text)
    if transcript.get("error"):
        raise parsing.ParseError(transcript["error"])
    debates = transcript["debates"]
    if job.params.get("aggregate", "debate") == "agent":
        label = majority([v for d in debates for v in d["final"]])
    else:
        label = majority([d["verdict"] for d in debates])
    return {"label": label, "explanation": "", "verdicts": [d["verdict"] for d in debates]}


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
    Job.Kind.EDITS: Kind(edit_units, ask_edits, parse_edits, write_edits),
    Job.Kind.EDIT_TYPES: Kind(edit_type_units, ask_edit_types, parse_edit_types, write_edit_types),
    Job.Kind.DEBATE: Kind(judge_units, ask_debate, parse_debate, write_nothing),
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


def complete_params(kind: str, endpoint, params: dict) -> dict:
    """Fix at creation what a job will use, so that its provenance cannot drift: SummEdits edits
    use two prompts, the inconsistent one as the job's prompt and this consistent one."""
    params = dict(params)
    if kind == Job.Kind.EDITS and not endpoint.is_baseline() and not params.get("consistent_prompt"):
        consistent = Prompt.objects.filter(slug="summedits-edit-consistent").order_by("-version").first()
        if consistent is None:
            raise ValidationError({"prompt": "The consistent-edit prompt is missing."})
        params["consistent_prompt"] = consistent.pk
    if kind == Job.Kind.DEBATE:
        conf = {k: params.get(k, v) for k, v in DEBATE_DEFAULTS.items()}
        if not (2 <= int(conf["agents"]) <= 8 and 1 <= int(conf["rounds"]) <= 10 and 1 <= int(conf["debates"]) <= 10):
            raise ValidationError({"__all__": "A debate has 2-8 agents, 1-10 rounds and 1-10 simultaneous debates."})
        if int(conf["adjudicators"]) % 2 == 0 or conf["aggregate"] not in ("debate", "agent"):
            raise ValidationError({"__all__": "An odd number of adjudicators; aggregate by debate or by agent."})
        params = params | conf
        if not params.get("adjudicator_prompt"):
            adjudicator = Prompt.objects.filter(slug="madisse-adjudicator").order_by("-version").first()
            if adjudicator is None:
                raise ValidationError({"prompt": "The adjudicator prompt is missing."})
            params["adjudicator_prompt"] = adjudicator.pk
    return params


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
