"""The release importers end to end: parse, load into the database, and load again (nothing new)."""

from pathlib import Path

import pytest

from annotation.corpus import services
from annotation.corpus.models import Document, EditedSummary, SeedSummary, Summary, SummarySentence, Topic
from annotation.protocols.models import Campaign, Item, Judgment, Taxonomy

HERE = Path(__file__).resolve()


@pytest.fixture(autouse=True)
def taxonomies(db):
    """The data migration loads the four taxonomies the release importers refer to."""
    assert set(Taxonomy.objects.values_list("slug", flat=True)) >= {
        "tofueval-error-types",
        "summedits-edit-types",
        "madisse-ambiguity",
        "ramprasad-categories",
    }


def import_release(format: str, paths: list[Path], **options) -> tuple[dict, list]:
    return services.import_data(project_slug="x", format=format, paths=paths, options=options)


def dimension_counts() -> dict[str, int]:
    dimensions = Judgment.objects.values_list("dimension", flat=True)
    return {d: list(dimensions).count(d) for d in set(dimensions)}


def nothing_new(counts: dict) -> bool:
    return not any(counts.values())


@pytest.mark.django_db
def test_tofueval_release_imports_with_documents_and_again_adds_nothing(data):
    options = {"documents": data / "meetingbank_documents_sample.jsonl"}
    counts, warnings = import_release("tofueval", [data / "tofueval_sample"], **options)
    assert warnings == []
    assert (counts["documents"], counts["topics"], counts["summaries"], counts["items"]) == (2, 6, 36, 6)
    assert SummarySentence.objects.count() == 80
    assert dimension_counts() == {"consistency": 80, "error_types": 31, "topic_category": 6, "key_points": 6}
    assert Judgment.objects.filter(dimension="consistency", value="inconsistent").count() == 31
    campaign = Campaign.objects.get(slug="release-tofueval")
    assert (campaign.is_release, campaign.status, campaign.protocol) == (True, "closed", "tofueval_task1")
    assert Judgment.objects.filter(dimension="error_types").exclude(taxonomy__slug="tofueval-error-types").count() == 0

    again, _ = import_release("tofueval", [data / "tofueval_sample"], **options)
    assert nothing_new(again)
    assert Judgment.objects.count() == 123


@pytest.mark.django_db
def test_tofueval_placeholders_get_their_text_from_a_later_import(data):
    _, warnings = import_release("tofueval", [data / "tofueval_sample"])
    assert len(warnings) == 2
    assert Document.objects.filter(text_missing=True).count() == 2

    counts, _ = import_release(
        "tofueval", [data / "tofueval_sample"], documents=data / "meetingbank_documents_sample.jsonl"
    )
    assert counts["documents_completed"] == 2
    assert Document.objects.filter(text_missing=True).count() == 0
    assert counts.get("judgments", 0) == 0


@pytest.mark.django_db
def test_summedits_release_imports_seeds_edits_and_labels(data):
    files = sorted((data / "summedits_sample").glob("*.json"))
    counts, warnings = import_release("summedits", files)
    assert warnings == []
    assert (counts["documents"], counts["summaries"], counts["items"]) == (4, 117, 4)
    assert SeedSummary.objects.count() == 4
    assert EditedSummary.objects.count() == 113
    assert set(SeedSummary.objects.values_list("domain", flat=True)) == {"sales_call", "scitldr"}
    assert dimension_counts() == {"edit_label": 113, "seed_consistent": 4, "edit_types": 83}
    assert Judgment.objects.filter(dimension="edit_label", value="consistent").count() == 31
    assert Item.objects.get(key="sales_call_0_og").summaries.count() == 35

    assert nothing_new(import_release("summedits", files)[0])


@pytest.mark.django_db
def test_madisse_release_shares_documents_with_tofueval(data):
    documents = data / "meetingbank_documents_sample.jsonl"
    import_release("tofueval", [data / "tofueval_sample"], documents=documents)
    counts, warnings = import_release("madisse", [data / "madisse_sample.jsonl"], documents=documents)
    assert warnings == []
    assert counts.get("documents", 0) == 0  # the same two transcripts, recognised by their turns
    assert (counts["summaries"], counts["items"]) == (80, 80)
    madisse = Judgment.objects.filter(assignment__item__campaign__slug="release-madisse")
    assert madisse.filter(dimension="ambiguous").count() == 80
    assert madisse.filter(dimension="ambiguous", value=True).count() == 9
    assert madisse.filter(dimension="ambiguity_types").count() == 9
    assert Item.objects.filter(campaign__slug="release-madisse", sentence__isnull=False).count() == 80

    assert nothing_new(import_release("madisse", [data / "madisse_sample.jsonl"], documents=documents)[0])


@pytest.mark.django_db
def test_madisse_release_without_documents_names_them_by_hash(data):
    counts, _ = import_release("madisse", [data / "madisse_sample.jsonl"])
    assert counts["documents"] == 2
    assert all(d.startswith("madisse-") for d in Document.objects.values_list("external_id", flat=True))


@pytest.mark.django_db
def test_ramprasad_release_imports_spans(data):
    counts, warnings = import_release("ramprasad", [data / "ramprasad_format_example.csv"])
    assert warnings == []
    assert (counts["documents"], counts["summaries"], counts["items"]) == (2, 3, 3)
    assert dimension_counts() == {"has_inconsistency": 3, "span": 3}
    spans = Judgment.objects.filter(dimension="span", summary__external_id="900002/BART").order_by("target")
    assert [s.value["text"] for s in spans] == ["at 5 pm", "Tom"]
    assert spans[0].target.endswith("/span:0")
    assert Summary.objects.get(external_id="900002/BART").sentences.count() == 2
    assert Topic.objects.count() == 0

    assert nothing_new(import_release("ramprasad", [data / "ramprasad_format_example.csv"])[0])


@pytest.mark.django_db
def test_summaries_without_document_text_are_not_annotatable(data):
    counts, warnings = import_release("tofueval", [data / "tofueval_sample"])
    assert len(warnings) == 2 and all("not be offered for annotation" in str(w) for w in warnings)
    assert Summary.objects.count() == 36 and not Summary.objects.annotatable().exists()
    import_release("tofueval", [data / "tofueval_sample"], documents=str(data / "meetingbank_documents_sample.jsonl"))
    assert Summary.objects.annotatable().count() == 36
