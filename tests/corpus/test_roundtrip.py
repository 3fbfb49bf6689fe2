"""Done-when check of the foundation: the four release samples import, and export -> import
into an empty project -> export gives identical content."""

import json

import pytest
from django.core.management import call_command

from annotation.corpus import services
from annotation.corpus.models import Summary
from annotation.protocols.models import Judgment


def import_samples(data, slug="release"):
    documents = {"documents": str(data / "meetingbank_documents_sample.jsonl")}
    services.import_data(project_slug=slug, format="tofueval", paths=[data / "tofueval_sample"], options=documents)
    services.import_data(
        project_slug=slug, format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    services.import_data(project_slug=slug, format="madisse", paths=[data / "madisse_sample.jsonl"], options=documents)
    services.import_data(project_slug=slug, format="ramprasad", paths=[data / "ramprasad_format_example.csv"])


def export_file(slug, path):
    call_command("export_jsonl", project=slug, out=str(path))
    return path.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_the_four_samples_round_trip_through_export_jsonl(data, tmp_path):
    import_samples(data)
    first = export_file("release", tmp_path / "first.jsonl")
    call_command("import_data", str(tmp_path / "first.jsonl"), project="copy", format="jsonl")
    second = export_file("copy", tmp_path / "second.jsonl")
    assert second == first
    records = [json.loads(line) for line in first.splitlines()]
    summaries = [r for r in records if r["type"] == "summary"]
    assert len(summaries) == Summary.objects.filter(project__slug="release").count() == 36 + 117 + 80 + 3
    judgments = sum(len(r["judgments"]) for r in records if r["type"] in ("summary", "item"))
    assert judgments == Judgment.objects.filter(assignment__item__campaign__project__slug="release").count()
    assert {r["slug"] for r in records if r["type"] == "campaign"} == {
        "release-madisse",
        "release-ramprasad",
        "release-summedits",
        "release-tofueval",
    }


@pytest.mark.django_db
def test_importing_the_samples_twice_changes_nothing(data, tmp_path):
    import_samples(data)
    first = export_file("release", tmp_path / "a.jsonl")
    import_samples(data)
    assert export_file("release", tmp_path / "b.jsonl") == first
