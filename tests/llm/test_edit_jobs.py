"""SummEdits jobs: edits of each seed from an LLM (two prompts, minor and distinct edits only)
or from the offline rules, and edit-type tagging over the <ins>/<del> diff."""

import pytest

from annotation.corpus import services as corpus
from annotation.corpus.models import EditedSummary, Origin, SeedSummary, Summary
from annotation.llm import services
from annotation.llm.models import Endpoint, Job, Prompt
from annotation.projects.models import Project
from tests.llm import fake_openai

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeds(data):
    corpus.import_data(project_slug="se", format="summedits", paths=sorted((data / "summedits_sample").glob("*.json")))
    return Project.objects.get(slug="se")


def run(capture, **kwargs):
    with capture(execute=True):
        job = services.create_job(**kwargs)
    job.refresh_from_db()
    return job


def test_llm_edits_are_minor_distinct_and_remember_both_prompts(seeds, django_capture_on_commit_callbacks):
    seed = SeedSummary.objects.filter(summary__project=seeds).order_by("pk").first()
    words = seed.summary.text.split()

    def reply(request):
        prompt = request["messages"][-1]["content"]
        if "factual inconsistency" in prompt:
            return "\n".join(
                [
                    "1. " + " ".join(["Nobody"] + words[1:]),
                    "2. " + " ".join(["Nobody"] + words[1:]),  # a repeat
                    "3. A completely different text that has nothing to do with the seed at all, really.",
                ]
            )
        return "1. " + " ".join(words[:-1] + ["indeed."])

    before = EditedSummary.objects.filter(seed=seed).count()
    with fake_openai.FakeOpenAI(reply=reply) as server:
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", requests_per_minute=10000)
        job = run(
            django_capture_on_commit_callbacks,
            project=seeds,
            kind=Job.Kind.EDITS,
            endpoint=endpoint,
            params={"seeds": [seed.pk]},
        )
    units = {u.key: u for u in job.units.all()}
    assert set(units) == {f"seed:{seed.pk}/consistent", f"seed:{seed.pk}/inconsistent"}
    assert job.params["consistent_prompt"] == Prompt.objects.get(slug="summedits-edit-consistent").pk
    refused = units[f"seed:{seed.pk}/inconsistent"].result["refused"]
    assert [r["reason"].split(":")[0] for r in refused] == ["same as the seed or an earlier edit", "not minor"]
    made = Summary.objects.filter(edit__seed=seed, origin=Origin.LLM)
    assert made.count() == 2 == EditedSummary.objects.filter(seed=seed).count() - before
    assert {s.provenance["expected"] for s in made} == {"consistent", "inconsistent"}
    assert all(s.sentences.exists() and s.topic_id == seed.summary.topic_id for s in made)


def test_offline_edits_carry_their_rule(seeds, django_capture_on_commit_callbacks):
    offline = Endpoint.objects.create(name="base", kind=Endpoint.Kind.OFFLINE)
    job = run(
        django_capture_on_commit_callbacks, project=seeds, kind=Job.Kind.EDITS, endpoint=offline, params={"n": 10}
    )
    assert job.status == "done" and services.progress(job)["failed"] == 0
    made = Summary.objects.filter(project=seeds, origin=Origin.BASELINE)
    assert made.count() >= 2 * SeedSummary.objects.filter(summary__project=seeds).count()
    assert {"rule", "expected", "rule_note"} <= set(made.first().provenance)
    assert {s.provenance["expected"] for s in made} == {"consistent", "inconsistent"}
    # A second run (other random choices) adds only edits its seed does not have yet.
    run(django_capture_on_commit_callbacks, project=seeds, kind=Job.Kind.EDITS, endpoint=offline, params={"n": 10})
    for seed in SeedSummary.objects.filter(summary__project=seeds):
        edits = Summary.objects.filter(edit__seed=seed)
        made = list(edits.filter(origin=Origin.BASELINE).values_list("text", flat=True))
        released = set(edits.exclude(origin=Origin.BASELINE).values_list("text", flat=True))
        assert len(made) == len(set(made)) and not (set(made) & (released | {seed.summary.text}))


def test_edit_types_are_tagged_over_the_diff(seeds, django_capture_on_commit_callbacks):
    edit = EditedSummary.objects.filter(summary__project=seeds).order_by("pk").first()
    seen = []

    def reply(request):
        seen.append(request["messages"][-1]["content"])
        return "antonym_swap, entity_modification"

    with fake_openai.FakeOpenAI(reply=reply) as server:
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", requests_per_minute=10000)
        job = run(
            django_capture_on_commit_callbacks,
            project=seeds,
            kind=Job.Kind.EDIT_TYPES,
            endpoint=endpoint,
            params={"seeds": [edit.seed_id]},
        )
    assert services.progress(job)["done"] == EditedSummary.objects.filter(seed=edit.seed).count()
    assert "<ins>" in seen[0] or "<del>" in seen[0]
    tags = Summary.objects.get(pk=edit.summary_id).provenance["llm_edit_types"][str(job.pk)]
    assert tags["types"] == ["antonym_swap", "entity_modification"]
