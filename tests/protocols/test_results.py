"""TofuEval results reproduce, on the imported release sample, what one computes from its CSVs."""

import csv
import io
import json
from collections import defaultdict

import pytest
from django.core.management import call_command

from annotation.corpus import services
from annotation.protocols import results
from annotation.protocols.models import Campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(data):
    services.import_data(
        project_slug="tofu",
        format="tofueval",
        paths=[data / "tofueval_sample"],
        options={"documents": str(data / "meetingbank_documents_sample.jsonl")},
    )
    return Campaign.objects.get(slug="release-tofueval")


def by_hand(data) -> dict:
    """Per system, straight from the CSV: summaries, sentences, inconsistent ones, summaries with any, words."""
    path = data / "tofueval_sample" / "factual_consistency" / "meetingbank_factual_eval_test.csv"
    summaries = defaultdict(lambda: defaultdict(list))
    for row in csv.DictReader(path.open()):
        summaries[row["model_name"]][(row["doc_id"], row["annotation_id"], row["topic"])].append(row)
    expected = {}
    for system, by_summary in summaries.items():
        texts = [
            " ".join(r["summ_sent"] for r in sorted(v, key=lambda r: int(r["sent_idx"]))) for v in by_summary.values()
        ]
        sentences = [r for v in by_summary.values() for r in v]
        expected[system] = {
            "n_summaries": len(by_summary),
            "n_sentences": len(sentences),
            "n_inconsistent_sentences": sum(r["sent_label"] == "no" for r in sentences),
            "inconsistent_summary_share": round(
                sum(any(r["sent_label"] == "no" for r in v) for v in by_summary.values()) / len(by_summary), 4
            ),
            "mean_words": round(sum(len(t.split()) for t in texts) / len(texts), 4),
        }
    return expected


def test_per_summarizer_figures_match_the_csv(release, data):
    got = {row["system"]: row for row in results.results(release)["by_system"]}
    expected = by_hand(data)
    assert set(got) == set(expected) == {"Model-Extra", "model_A", "model_B", "model_C", "model_D", "model_E"}
    for system, figures in expected.items():
        assert {k: got[system][k] for k in figures} == figures, system
    assert got["model_B"]["sentence_error_rate"] == round(7 / 12, 4)


def test_error_types_and_topic_categories_match_the_release(release):
    tables = results.results(release)
    assert {r["label"]: r["count"] for r in tables["error_types"]} == {
        "extrinsic_information": 28,
        "nuanced_meaning_shift": 2,
        "tense_aspect_modality": 1,
    }
    assert {r["label"]: r["count"] for r in tables["topic_categories"]} == {"main": 2, "marginal": 4}
    main = [r for r in tables["by_system_and_topic_type"] if r["topic_type"] == "main"]
    assert sum(r["n_summaries"] for r in main) == 12  # two main topics x six summarizers


def test_results_command_prints_the_same_json(release):
    out = io.StringIO()
    call_command("results", project="tofu", json=True, stdout=out)
    assert json.loads(out.getvalue())["release-tofueval"] == json.loads(json.dumps(results.results(release)))


def test_results_page_for_leads_and_viewers_only(release, client, make_user):
    from annotation.projects import services as projects

    url = f"/p/tofu/campaigns/{release.pk}/results/"
    viewer, annotator = make_user("viewer"), make_user("annot")
    projects.add_member(project=release.project, user=viewer, role="viewer")
    projects.add_member(project=release.project, user=annotator, role="annotator")
    client.force_login(viewer)
    page = client.get(url)
    assert page.status_code == 200 and "model_B" in page.content.decode() and "0.583" in page.content.decode()
    client.force_login(annotator)
    assert client.get(url).status_code == 404
