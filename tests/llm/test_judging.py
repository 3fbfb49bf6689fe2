"""LLM judges scored against the human labels: balanced accuracy by known values, and a judge
run over the imported TofuEval sample compared with what the CSV says."""

import csv

import pytest

from annotation.corpus import services as corpus
from annotation.llm import judging, services
from annotation.llm.models import Endpoint, Job, Prompt
from annotation.projects.models import Project
from tests.llm import fake_openai

C, I = "consistent", "inconsistent"  # noqa: E741 - read as the paper's table


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([(C, C), (I, I)], 1.0),
        ([(C, C), (C, C), (C, C), (I, C)], 0.5),  # "always consistent" scores 0.5 however skewed
        ([(C, I), (I, C)], 0.0),
        ([(C, C), (C, I), (I, I), (I, I), (I, C)], round((0.5 + 2 / 3) / 2, 4)),
        ([(C, C), (C, I)], None),  # no inconsistent example: recall undefined
        ([], None),
    ],
)
def test_balanced_accuracy(pairs, expected):
    assert judging.balanced_accuracy(pairs) == expected


def test_confusion_counts_every_cell():
    assert judging.confusion([(C, C), (I, C), (I, C), (I, I)]) == {C: {C: 1, I: 0}, I: {C: 2, I: 1}}


@pytest.mark.django_db
def test_a_sentence_judge_over_the_tofueval_sample(data, django_capture_on_commit_callbacks):
    corpus.import_data(
        project_slug="tofu",
        format="tofueval",
        paths=[data / "tofueval_sample"],
        options={"documents": str(data / "meetingbank_documents_sample.jsonl")},
    )
    path = data / "tofueval_sample" / "factual_consistency" / "meetingbank_factual_eval_test.csv"
    rows = list(csv.DictReader(path.open()))
    inconsistent_claims = {
        r["summ_sent"] for r in rows if r["sent_label"].strip().lower() in ("no", "0", "inconsistent")
    }

    def oracle(request):
        claim = request["messages"][-1]["content"].split("Claim:")[1].split("Is the claim")[0].strip()
        return "no" if claim in inconsistent_claims else "yes"

    with fake_openai.FakeOpenAI(reply=oracle) as server:
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", requests_per_minute=10000)
        with django_capture_on_commit_callbacks(execute=True):
            job = services.create_job(
                project=Project.objects.get(slug="tofu"),
                kind=Job.Kind.JUDGE,
                endpoint=endpoint,
                prompt=Prompt.objects.get(slug="tofueval-judge-sentence", version=1),
            )
    scores = judging.judge_scores(job)
    sentence = scores["sentence"]["overall"]
    assert sentence["n"] == len(rows) and scores["unmatched"] == 0
    assert sentence["balanced_accuracy"] == 1.0  # the oracle says what the CSV says
    assert set(scores["sentence"]["by_dataset"]) == {"meetingbank"}
    assert scores["summary"]["overall"]["balanced_accuracy"] == 1.0
    assert sum(sum(row.values()) for row in scores["summary"]["overall"]["confusion"].values()) == len(
        {(r["doc_id"], r["annotation_id"], r["topic"], r["model_name"]) for r in rows}
    )


@pytest.mark.django_db
def test_a_summary_judge_over_summedits_edits_is_scored_per_domain(data, django_capture_on_commit_callbacks):
    import json

    corpus.import_data(project_slug="se", format="summedits", paths=sorted((data / "summedits_sample").glob("*.json")))
    expected = {}
    for path in sorted((data / "summedits_sample").glob("*.json")):
        rows = [r for r in json.loads(path.read_text()) if not r["id"].endswith("_og")]
        expected[path.stem] = rows
    with fake_openai.FakeOpenAI(reply=lambda request: "yes") as server:  # "consistent" to everything
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", requests_per_minute=100000)
        with django_capture_on_commit_callbacks(execute=True):
            job = services.create_job(
                project=Project.objects.get(slug="se"),
                kind=Job.Kind.JUDGE,
                endpoint=endpoint,
                prompt=Prompt.objects.get(slug="summedits-judge", version=1),
            )
    scores = judging.judge_scores(job)["summedits"]
    labelled = sum(len(rows) for rows in expected.values())
    assert scores["overall"]["n"] == labelled
    assert scores["overall"]["balanced_accuracy"] == 0.5  # always "consistent" scores 0.5
    inconsistent = sum(1 for rows in expected.values() for r in rows if r["label"] == 0)
    assert scores["overall"]["confusion"]["inconsistent"]["consistent"] == inconsistent
    assert len(scores["by_domain"]) == 2
