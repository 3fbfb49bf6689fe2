"""Span statistics (Ramprasad et al. 2024, Figures 2-3): the release sample reproduces the counts
computed straight from its CSV, spans the import cannot locate are reported, and platform
campaigns use adjudications when there are any, else every annotator's labels."""

import ast
import csv
from collections import Counter, defaultdict

import pytest

from annotation.corpus import services as corpus
from annotation.corpus.formats import ramprasad
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import setup, spans
from annotation.protocols.models import Adjudication, Assignment, Campaign, Protocol
from tests.protocols.test_spans import TEXT, make_summary, span, submit

pytestmark = pytest.mark.django_db
SAMPLE = "ramprasad_format_example.csv"


def from_csv(path) -> dict:
    """Per model, from the CSV alone: rows, rows with factual_error 1, and span categories."""
    out = defaultdict(lambda: {"rows": 0, "errors": 0, "categories": Counter()})
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            model = out[row["model"]]
            model["rows"] += 1
            model["errors"] += row["factual_error"] == "1"
            model["categories"].update(
                c.lower().replace(" ", "_") for c in ast.literal_eval(row["linguistic_categories"])
            )
    return out


def import_sample(path, slug: str = "release") -> tuple[Campaign, list]:
    _, warnings = corpus.import_data(project_slug=slug, format="ramprasad", paths=[path])
    return Campaign.objects.get(project__slug=slug, slug=ramprasad.CAMPAIGN), warnings


def test_the_release_sample_reproduces_the_counts_of_its_csv(data):
    expected = from_csv(data / SAMPLE)
    campaign, warnings = import_sample(data / SAMPLE)
    assert warnings == [] and campaign.is_release
    tables = spans.statistics(campaign)
    assert tables["source"] == "annotators" and tables["unlocated"] == []
    rows = {r["system"]: r for r in tables["by_system"]}
    assert set(rows) == set(expected)
    for model, counts in expected.items():
        row = rows[model]
        assert (row["summaries"], row["labels"], row["with_inconsistency"]) == (
            counts["rows"],
            counts["rows"],
            counts["errors"],
        )
        assert row["share"] == counts["errors"] / counts["rows"]
        assert {c["code"]: c["count"] for c in row["categories"] if c["count"]} == dict(counts["categories"])
        assert row["spans"] == sum(counts["categories"].values())
    overall = tables["overall"]
    total = sum(c["rows"] for c in expected.values())
    assert (overall["summaries"], overall["with_inconsistency"]) == (total, sum(c["errors"] for c in expected.values()))
    shares = {c["code"]: c["share"] for c in overall["categories"]}
    assert shares["logical_error"] == pytest.approx(1 / 3) and shares["nonsensical"] == 0
    # One "annotator" (the release): agreement is undefined, and says so.
    assert overall["alpha"].value is None and overall["alpha"].note
    assert overall["span_f1"].value is None


def test_spans_the_import_cannot_locate_are_reported_and_listed(data, tmp_path, client, make_user):
    text = (data / SAMPLE).read_text(encoding="utf-8")
    broken = tmp_path / SAMPLE
    broken.write_text(text.replace("['at 5 pm', 'Tom']", "['at five pm', 'Tom']"), encoding="utf-8")
    campaign, warnings = import_sample(broken)
    assert [w.message for w in warnings] == ["span 'at five pm' is not in the summary; kept without offsets"]
    tables = spans.statistics(campaign)
    assert tables["unlocated"] == [{"summary": "900002/BART", "system": "BART", "text": "at five pm"}]
    bart = next(r for r in tables["by_system"] if r["system"] == "BART")
    assert bart["spans"] == 2  # still counted in the category shares
    lead = make_user("boss")
    projects.add_member(project=campaign.project, user=lead, role=Role.LEAD)
    client.force_login(lead)
    page = client.get(f"/p/{campaign.project.slug}/campaigns/{campaign.pk}/spans/").content.decode()
    assert "1 span could not be located" in page and "at five pm" in page
    assert "labels of the public release" in page and "Logical Error" in page and "GPT-4" in page


@pytest.fixture
def platform(project, annotator, make_user):
    """Two summaries of two systems, each labelled by two annotators."""
    second = make_user("ann2")
    projects.add_member(project=project, user=second, role=Role.ANNOTATOR)
    make_summary(project, TEXT, n=1)
    other = make_summary(project, "Lena brings the tickets to the party.", n=2)
    other.system = "other-system"
    other.save()
    plan = setup.Plan(name="Spans", slug="spans", annotators=[annotator, second], per_item=2, protocol=Protocol.SPANS)
    campaign = setup.create_campaign(project=project, plan=plan)
    return campaign, annotator, second


def assignment_of(campaign, user, system):
    return Assignment.objects.get(item__campaign=campaign, annotator=user, item__summaries__system=system)


def test_a_platform_campaign_counts_every_annotators_labels_and_their_agreement(platform):
    campaign, first, second = platform
    sigma = "secret-summarizer-sigma"
    submit(assignment_of(campaign, first, sigma), {"spans": [span(TEXT, "at 5 pm")]})
    submit(assignment_of(campaign, second, sigma), {"spans": [span(TEXT, "5 pm", category="world_knowledge")]})
    submit(assignment_of(campaign, first, "other-system"), {"no_inconsistency": "on"})
    quoted = span("Lena brings the tickets to the party.", "to the party", evidence=[], no_evidence=True)
    submit(assignment_of(campaign, second, "other-system"), {"spans": [quoted]})
    tables = spans.statistics(campaign)
    rows = {r["system"]: r for r in tables["by_system"]}
    assert (rows[sigma]["summaries"], rows[sigma]["labels"], rows[sigma]["with_inconsistency"]) == (1, 2, 2)
    assert rows["other-system"]["share"] == 0.5 and rows["other-system"]["no_evidence"] == 1
    assert {c["code"]: c["count"] for c in rows[sigma]["categories"] if c["count"]} == {
        "logical_error": 1,
        "world_knowledge": 1,
    }
    # F1 on sigma: "at 5 pm" vs "5 pm" -> 3 and 2 tokens, 2 shared; on the other: nothing vs 3 tokens -> 0.
    assert rows[sigma]["span_f1"].value == pytest.approx(0.8)
    assert rows["other-system"]["span_f1"].value == 0.0
    assert tables["overall"]["span_f1"].value == pytest.approx(0.4)
    assert tables["overall"]["alpha"].value is not None


def test_adjudicated_labels_are_used_when_there_are_any(platform, lead):
    campaign, first, _ = platform
    item = campaign.items.filter(summaries__system="other-system").get()
    summary = item.summaries.get()
    submit(assignment_of(campaign, first, "other-system"), {"no_inconsistency": "on"})
    Adjudication.objects.create(
        item=item, dimension="has_inconsistency", target=f"summary:{summary.pk}", summary=summary, value=True
    )
    tables = spans.statistics(campaign)
    assert tables["source"] == "adjudicated"
    assert [(r["system"], r["labels"], r["with_inconsistency"]) for r in tables["by_system"]] == [
        ("other-system", 1, 1)
    ]


def test_the_results_command_prints_the_same_statistics(data, capsys):
    import json

    from django.core.management import call_command

    campaign, _ = import_sample(data / "ramprasad_format_example.csv")
    call_command("results", project=campaign.project.slug, campaign=campaign.slug, json=True)
    out = json.loads(capsys.readouterr().out)[campaign.slug]
    expected = from_csv(data / "ramprasad_format_example.csv")
    assert out["overall"]["summaries"] == sum(m["rows"] for m in expected.values()) == 3
    assert out["overall"]["with_inconsistency"] == sum(m["errors"] for m in expected.values()) == 2
    found = {c["code"]: c["count"] for c in out["overall"]["categories"] if c["count"]}
    assert found == dict(sum((m["categories"] for m in expected.values()), Counter()))
    assert out["overall"]["span_f1"]["value"] is None  # one "annotator": the release
