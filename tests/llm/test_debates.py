"""MADISSE debates: alternating initial stances, early stop on agreement, shuffled history,
adjudicators' majority without agreement, several debates aggregated; a readable transcript."""

import json

import pytest

from annotation.corpus import text as textlib
from annotation.corpus.models import Document, Summary, SummarySentence
from annotation.llm import kinds, services
from annotation.llm.models import Endpoint, Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def sentence(project):
    document = Document.objects.create(project=project, external_id="d", text="Ana: We meet at 4 pm.")
    text = "They meet at 5 pm."
    summary = Summary.objects.create(project=project, document=document, external_id="s", text=text)
    SummarySentence.objects.bulk_create(
        SummarySentence(summary=summary, index=s.index, start=s.start, end=s.end, text=s.text)
        for s in textlib.split_sentences(text)
    )
    return summary.sentences.get()


def agent_says(request, *, converge_in_round: int | None):
    prompt = request["messages"][-1]["content"]
    if "Weigh the arguments" in prompt:  # an adjudicator
        return "The dialogue says 4 pm.\nVerdict: inconsistent"
    stance = prompt.split("holding that the sentence is ")[1].split(";")[0]
    history = prompt.split("Arguments so far:")[1]
    round_number = 1 if "(none yet)" in history else history.count("Agent ") // 4 + 1
    verdict = "inconsistent" if converge_in_round and round_number >= converge_in_round else stance
    return f"Argument: I hold it is {verdict} (round {round_number}).\nVerdict: {verdict}"


def run(server_reply, project, capture, **params):
    from tests.llm import fake_openai

    with fake_openai.FakeOpenAI(reply=server_reply) as server:
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", requests_per_minute=100000)
        with capture(execute=True):
            job = services.create_job(project=project, kind=Job.Kind.DEBATE, endpoint=endpoint, params=params)
    return job, server


def test_a_debate_stops_when_the_agents_agree(project, sentence, django_capture_on_commit_callbacks):
    job, server = run(
        lambda r: agent_says(r, converge_in_round=2), project, django_capture_on_commit_callbacks, rounds=4
    )
    unit = job.units.get()
    assert unit.key == f"sentence:{sentence.pk}" and unit.result["label"] == "inconsistent"
    debate = json.loads(unit.raw_output)["debates"][0]
    assert debate["stances"] == ["consistent", "inconsistent", "consistent", "inconsistent"]
    assert debate["stopped"] == "agreement after round 2" and len(debate["turns"]) == 8
    assert "adjudicators" not in debate and len(server.requests) == 8
    assert unit.input_tokens > 0  # summed over the calls


def test_without_agreement_the_adjudicators_vote(project, sentence, django_capture_on_commit_callbacks):
    job, server = run(
        lambda r: agent_says(r, converge_in_round=None), project, django_capture_on_commit_callbacks, rounds=2
    )
    debate = json.loads(job.units.get().raw_output)["debates"][0]
    assert len(debate["turns"]) == 8 and [v["verdict"] for v in debate["adjudicators"]] == ["inconsistent"] * 3
    assert debate["verdict"] == "inconsistent" and len(server.requests) == 8 + 3


def test_several_debates_flip_the_first_stance_and_aggregate(project, sentence, django_capture_on_commit_callbacks):
    job, _ = run(
        lambda r: agent_says(r, converge_in_round=1),
        project,
        django_capture_on_commit_callbacks,
        debates=2,
        aggregate="agent",
    )
    transcript = json.loads(job.units.get().raw_output)
    assert [d["stances"][0] for d in transcript["debates"]] == ["consistent", "inconsistent"]
    assert job.units.get().result["verdicts"] == ["inconsistent", "inconsistent"]


def test_a_turn_that_does_not_parse_fails_the_unit_and_keeps_the_transcript(
    project, sentence, django_capture_on_commit_callbacks, client, lead
):
    job, _ = run(lambda r: "I think it is fine.", project, django_capture_on_commit_callbacks)
    unit = job.units.get()
    assert unit.status == "failed" and "Verdict:" in unit.error
    assert json.loads(unit.raw_output)["debates"][0]["turns"][0]["raw"] == "I think it is fine."
    client.force_login(lead)
    page = client.get(f"/p/{project.slug}/llm/jobs/{job.pk}/units/{unit.pk}/").content.decode()
    assert "I think it is fine." in page and "Round 1, agent 1" in page


def test_debate_settings_are_checked(project, sentence):
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(Exception, match="odd number"):
        services.create_job(project=project, kind=Job.Kind.DEBATE, endpoint=endpoint, params={"adjudicators": 2})
    assert kinds.majority(["consistent", "inconsistent"]) == "inconsistent"
