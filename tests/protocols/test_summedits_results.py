"""SummEdits statistics (Laban et al. 2023, Table 8) and the benchmark export: on the imported
release sample against its JSON files, and on a small two-annotator campaign against figures
computed by hand."""

import io
import json
from collections import Counter, defaultdict

import pytest
from django.core.management import call_command

from annotation.corpus import services as corpus
from annotation.corpus.models import Document, EditedSummary, SeedSummary, Summary
from annotation.projects import services as projects
from annotation.protocols import services, summedits_results
from annotation.protocols.models import Adjudication, Assignment, Campaign, Item, Protocol

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(data):
    corpus.import_data(
        project_slug="edits", format="summedits", paths=sorted((data / "summedits_sample").glob("*.json"))
    )
    return Campaign.objects.get(slug="release-summedits")


def by_hand(data) -> dict:
    """Per domain, straight from the files: N, consistent edits, and inconsistent typed edits per code."""
    expected = {}
    for path in sorted((data / "summedits_sample").glob("summedits_*.json")):
        edits = [r for r in json.loads(path.read_text()) if not r["id"].endswith("_og")]
        typed = [r for r in edits if r["label"] == 0 and r["edit_types"]]
        codes = Counter(code for r in typed for code in set(r["edit_types"]))
        expected[path.stem.removeprefix("summedits_")] = {
            "n": len(edits),
            "n_consistent": sum(r["label"] == 1 for r in edits),
            "consistent_share": round(sum(r["label"] == 1 for r in edits) / len(edits), 4),
            "edit_types": {code: round(n / len(typed), 4) for code, n in codes.items()},
        }
    return expected


def test_per_domain_n_and_consistent_share_match_the_files(release, data):
    tables = summedits_results.results(release)
    got = {r["domain"]: r for r in tables["by_domain"]}
    expected = by_hand(data)
    assert set(got) == set(expected) == {"sales_call", "scitldr"}
    for domain, figures in expected.items():
        row = got[domain]
        assert (row["n"], row["n_consistent"], row["consistent_share"]) == (
            figures["n"],
            figures["n_consistent"],
            figures["consistent_share"],
        ), domain
        assert {t["code"]: t["share"] for t in row["edit_types"]} == figures["edit_types"], domain
        assert row["n_borderline"] == 0
    assert tables["overall"]["n"] == sum(f["n"] for f in expected.values())


def test_the_release_has_no_agreement_verification_or_time(release):
    overall = summedits_results.results(release)["overall"]
    assert overall["kappa"] is None and overall["kappa_without_borderline"] is None
    assert overall["seed_pass_rate"] is None and overall["n_seeds_verified"] == 0
    assert overall["minutes_per_seed"] is None and overall["minutes_per_100_edit_labels"] is None


def test_export_has_n_lines_per_domain_without_borderline(release, data):
    expected = by_hand(data)
    for domain, figures in expected.items():
        lines = list(summedits_results.benchmark_lines(release, domain))
        assert len(lines) == figures["n"]
        records = [json.loads(line) for line in lines]
        assert {r["domain"] for r in records} == {domain}
        assert {r["label"] for r in records} <= {"consistent", "inconsistent"}
        assert sum(r["label"] == "consistent" for r in records) == figures["n_consistent"]
        assert all(r["seed"]["id"].endswith("_og") and r["document"]["text"] for r in records)
        assert all("<ins>" in r["diff"] or "<del>" in r["diff"] for r in records)
    everything = list(summedits_results.benchmark_lines(release))
    assert len(everything) == sum(f["n"] for f in expected.values())
    assert everything == list(summedits_results.benchmark_lines(release))  # deterministic


def test_export_line_matches_the_raw_row(release, data):
    raw = {r["id"]: r for r in json.loads((data / "summedits_sample" / "summedits_scitldr.json").read_text())}
    record = json.loads(next(summedits_results.benchmark_lines(release, "scitldr")))
    row = raw[record["id"]]
    assert record["edit"] == row["summary"] and record["seed"]["text"] == row["original_summary"]
    assert record["label"] == {1: "consistent", 0: "inconsistent"}[row["label"]]
    assert sorted(record["edit_types"]) == sorted(row["edit_types"])


def test_results_command_prints_summedits_campaigns(release):
    out = io.StringIO()
    call_command("results", project="edits", json=True, stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["release-summedits"] == json.loads(json.dumps(summedits_results.results(release)))


# -- pages ----------------------------------------------------------------------------------------
@pytest.fixture
def people(release, make_user):
    roles = {"lead": "lead", "viewer": "viewer", "annotator": "annotator"}
    users = {name: make_user(name) for name in roles}
    for name, role in roles.items():
        projects.add_member(project=release.project, user=users[name], role=role)
    return users


def stats_url(campaign) -> str:
    return f"/p/edits/campaigns/{campaign.pk}/summedits/"


def test_viewer_sees_the_table_with_download_links(release, people, client):
    client.force_login(people["viewer"])
    page = client.get(stats_url(release))
    html = page.content.decode()
    assert page.status_code == 200
    assert "scitldr" in html and "sales_call" in html and "0.128" in html  # 6 of 47 consistent
    assert "benchmark.jsonl?domain=scitldr" in html


def test_lead_downloads_one_domain_as_an_attachment(release, people, client, data):
    client.force_login(people["lead"])
    response = client.get(stats_url(release) + "benchmark.jsonl", {"domain": "sales_call"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"].startswith("attachment;")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == by_hand(data)["sales_call"]["n"]
    assert all(json.loads(line)["domain"] == "sales_call" for line in lines)


def test_download_of_every_domain(release, people, client, data):
    client.force_login(people["viewer"])
    response = client.get(stats_url(release) + "benchmark.jsonl")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == sum(f["n"] for f in by_hand(data).values())


def test_unknown_domain_is_404(release, people, client):
    client.force_login(people["lead"])
    assert client.get(stats_url(release) + "benchmark.jsonl", {"domain": "nope"}).status_code == 404


def test_annotator_gets_404_on_stats_and_export(release, people, client):
    client.force_login(people["annotator"])
    assert client.get(stats_url(release)).status_code == 404
    assert client.get(stats_url(release) + "benchmark.jsonl").status_code == 404


def test_outsider_gets_404_on_stats_and_export(release, outsider, client):
    client.force_login(outsider)
    assert client.get(stats_url(release)).status_code == 404
    assert client.get(stats_url(release) + "benchmark.jsonl").status_code == 404


def test_a_campaign_of_another_protocol_is_404(release, people, client):
    other = Campaign.objects.create(project=release.project, slug="t1", name="T1", protocol=Protocol.TOFUEVAL_TASK1)
    client.force_login(people["lead"])
    assert client.get(stats_url(other)).status_code == 404


# -- two annotators, by hand ----------------------------------------------------------------------
#         A             B
LABELS = {
    "e1": ("consistent", "consistent"),
    "e2": ("consistent", "consistent"),
    "e3": ("inconsistent", "inconsistent"),
    "e4": ("inconsistent", "consistent"),  # a tie, adjudicated inconsistent below
    "e5": ("borderline", "inconsistent"),  # a tie with borderline: borderline
    "e6": ("inconsistent", "inconsistent"),
    "e7": ("consistent", None),  # only A
}


def make_seed(project, key: str, domain: str) -> tuple[Summary, SeedSummary]:
    document = Document.objects.create(
        project=project, external_id=f"doc-{key}", text="The museum opens at 9 am and closes at 5 pm."
    )
    summary = Summary.objects.create(
        project=project, document=document, external_id=key, text="The museum opens at 9 am."
    )
    return summary, SeedSummary.objects.create(summary=summary, domain=domain)


def make_item(campaign, summary) -> Item:
    item = Item.objects.create(campaign=campaign, key=summary.external_id, document=summary.document)
    item.summaries.set([summary])
    return item


def submit(item, annotator, *, seconds: float, answers: dict, labels: dict) -> None:
    assignment = services.assign(item=item, annotator=annotator, seed=1)
    seed = item.summaries.get()
    for dimension, value in answers.items():
        services.record_judgment(assignment=assignment, dimension=dimension, summary=seed, value=value)
    for edit, label in labels.items():
        services.record_judgment(assignment=assignment, dimension="edit_label", summary=edit, value=label)
    assignment.status, assignment.active_seconds = Assignment.Status.SUBMITTED, seconds
    assignment.save()


@pytest.fixture
def doubled(project, annotator, make_user):
    """Domain "museums": seed s1 verified and labelled by A and B, s2 failed by A, s3 untouched."""
    b = make_user("bea")
    projects.add_member(project=project, user=b, role="annotator")
    campaign = Campaign.objects.create(project=project, slug="se", name="SummEdits", protocol=Protocol.SUMMEDITS)
    s1, seed = make_seed(project, "s1", "museums")
    edits = {}
    for key in LABELS:
        text = f"The museum opens at {key[1]} am."
        summary = Summary.objects.create(project=project, document=s1.document, external_id=key, text=text)
        EditedSummary.objects.create(summary=summary, seed=seed)
        edits[key] = summary
    items = [make_item(campaign, s1)] + [make_item(campaign, make_seed(project, k, "museums")[0]) for k in ("s2", "s3")]
    passing = {"seed_flawless": True, "seed_consistent": True}
    for index, user, seconds in ((0, annotator, 600), (1, b, 300)):
        labels = {edits[k]: pair[index] for k, pair in LABELS.items() if pair[index]}
        submit(items[0], user, seconds=seconds, answers=passing, labels=labels)
    submit(items[1], annotator, seconds=60, answers={"seed_flawless": False, "seed_consistent": True}, labels={})
    services.assign(item=items[2], annotator=b, seed=1)  # open: neither verified nor timed
    Assignment.objects.filter(item=items[2]).update(active_seconds=100)
    types = {"e3": (["negation_insertion_removal"], ["negation_insertion_removal", "entity_modification"])}
    types["e6"] = (["antonym_swap"], None)
    for key, pair in types.items():
        for user, value in zip((annotator, b), pair, strict=True):
            if value:
                assignment = Assignment.objects.get(item=items[0], annotator=user)
                services.record_judgment(assignment=assignment, dimension="edit_types", summary=edits[key], value=value)
    Adjudication.objects.create(
        item=items[0],
        dimension="edit_label",
        target=f"summary:{edits['e4'].pk}",
        summary=edits["e4"],
        value="inconsistent",
    )
    return campaign


def test_final_labels_take_adjudications_and_make_ties_borderline(doubled):
    row = summedits_results.results(doubled)["by_domain"][0]
    # finals: e1 c, e2 c, e3 i, e4 i (adjudicated), e5 borderline, e6 i, e7 c
    assert row["domain"] == "museums" and row["n_seeds"] == 3
    assert (row["n_labelled_edits"], row["n"], row["n_consistent"]) == (7, 6, 3)
    assert row["consistent_share"] == 0.5
    assert (row["n_borderline"], row["borderline_share"]) == (1, round(1 / 7, 4))
    assert row["n_doubly_labelled"] == 6


def test_kappas_with_and_without_borderline_match_hand_values(doubled):
    row = summedits_results.results(doubled)["overall"]
    # all three labels, e1-e6: po = 4/6, pe = 2/6*3/6 + 3/6*3/6 = 15/36, kappa = 3/7
    assert row["kappa"] == round(3 / 7, 4)
    # e5 dropped: po = 4/5, pe = 2/5*3/5 + 3/5*2/5 = 12/25, kappa = 0.32 / 0.52 = 8/13
    assert row["kappa_without_borderline"] == round(8 / 13, 4)


def test_seed_pass_rate_counts_verified_seeds_only(doubled):
    row = summedits_results.results(doubled)["overall"]
    assert (row["n_seeds_verified"], row["seed_pass_rate"]) == (2, 0.5)


def test_edit_types_take_the_typers_majority(doubled):
    row = summedits_results.results(doubled)["overall"]
    # e3: negation by both, entity by one of two -> negation; e6: antonym by its only typer
    assert row["n_typed_inconsistent"] == 2
    assert {t["code"]: t["share"] for t in row["edit_types"]} == {
        "antonym_swap": 0.5,
        "negation_insertion_removal": 0.5,
    }


def test_minutes_come_from_submitted_assignments(doubled):
    row = summedits_results.results(doubled)["overall"]
    # 600 + 300 + 60 s = 16 min over 3 submitted assignments and 7 + 6 edit labels
    assert row["minutes_per_seed"] == round(16 / 3, 2)
    assert row["minutes_per_100_edit_labels"] == round(16 / 13 * 100, 2)


def test_export_leaves_out_borderline_edits(doubled):
    records = [json.loads(line) for line in summedits_results.benchmark_lines(doubled, "museums")]
    assert [r["id"] for r in records] == ["e1", "e2", "e3", "e4", "e6", "e7"]
    labels = defaultdict(list)
    for r in records:
        labels[r["label"]].append(r["id"])
    assert labels == {"consistent": ["e1", "e2", "e7"], "inconsistent": ["e3", "e4", "e6"]}
    assert records[0]["diff"] == "The museum opens at <del>9</del><ins>1</ins> am."
    assert records[2]["edit_types"] == ["negation_insertion_removal"]
