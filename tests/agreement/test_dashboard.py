import io
import json
import random

import pytest
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score

from annotation.agreement import services
from annotation.agreement.models import AgreementSnapshot
from annotation.corpus import services as corpus
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services as protocols
from annotation.protocols.models import Campaign, Judgment

pytestmark = pytest.mark.django_db
PASSWORD = "pw-correct-horse-9"


def labels_file(tmp_path, n_items=30, seed=3):
    rng = random.Random(seed)
    lines = []
    for i in range(n_items):
        truth = rng.choice(["yes", "no"])
        for annotator, noise in (("ann-a", 0.0), ("ann-b", 0.2), ("ann-c", 0.3)):
            value = truth if rng.random() >= noise else ("no" if truth == "yes" else "yes")
            lines.append(
                {
                    "item": f"q{i}",
                    "annotator": annotator,
                    "dimension": "faithful",
                    "value": value,
                    "round": "pilot" if i < 10 else "main",
                }
            )
            lines.append(
                {
                    "item": f"q{i}",
                    "annotator": annotator,
                    "dimension": "fluency",
                    "level": "ordinal",
                    "value": rng.randint(3, 5),
                }
            )
    path = tmp_path / "study.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, lines


@pytest.fixture
def campaign(project, tmp_path):
    path, _ = labels_file(tmp_path)
    corpus.import_data(project_slug=project.slug, format="labels", paths=[path])
    return Campaign.objects.get(slug="labels-study")


@pytest.fixture
def signed_in(client, make_user, project):
    def sign_in(role):
        user = make_user(f"user-{role}")
        projects.add_member(project=project, user=user, role=role)
        client.force_login(user)
        return client

    return sign_in


def figure(rows, dimension, variant, metric):
    return next(r for r in rows if (r["dimension"], r["variant"], r["metric"]) == (dimension, variant, metric))


def test_figures_match_an_independent_computation(campaign, tmp_path):
    _, lines = labels_file(tmp_path)
    results = services.compute(campaign, {"exclude": ["ann-c"]}, n_boot=200)
    a = [line["value"] for line in lines if line["dimension"] == "faithful" and line["annotator"] == "ann-a"]
    b = [line["value"] for line in lines if line["dimension"] == "faithful" and line["annotator"] == "ann-b"]
    kappa = figure(results["metrics"], "faithful", "raw", "cohen_kappa")
    assert kappa["value"] == pytest.approx(cohen_kappa_score(a, b))
    assert (kappa["n_items"], kappa["n_annotators"]) == (30, 2)
    assert kappa["low"] <= kappa["value"] <= kappa["high"]
    fluency = [r["metric"] for r in results["metrics"] if r["dimension"] == "fluency"]
    assert fluency == ["percent_agreement", "krippendorff_alpha"]  # ordinal, as the file declared


def test_filters_by_round_and_annotator(campaign):
    pilot = services.compute(campaign, {"round": "pilot"}, n_boot=50)
    assert figure(pilot["metrics"], "faithful", "raw", "fleiss_kappa")["n_items"] == 10
    two = services.compute(campaign, {"exclude": ["ann-b"]}, n_boot=50)
    assert figure(two["metrics"], "faithful", "raw", "fleiss_kappa")["n_annotators"] == 2
    rounds = next(b for b in pilot["by_round"] if b["dimension"] == "faithful")["rounds"]
    assert [r["round"] for r in rounds] == ["pilot"]


def test_command_json_is_what_the_page_shows(campaign, signed_in, project, django_capture_on_commit_callbacks):
    client = signed_in(Role.LEAD)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/")
    snapshot = AgreementSnapshot.objects.get(campaign=campaign)
    assert snapshot.status == "ready"
    out = io.StringIO()
    call_command("agreement", project=project.slug, campaign=campaign.slug, json=True, stdout=out)
    printed = json.loads(out.getvalue())
    shown = [{"campaign": campaign.slug, **row} for row in snapshot.results["metrics"]]
    assert [{k: v for k, v in r.items() if k not in ("low", "high", "note")} for r in printed] == [
        {k: v for k, v in r.items() if k not in ("low", "high", "note")} for r in shown
    ]
    assert all({"dimension", "variant", "metric", "value", "n_items", "n_annotators"} <= set(r) for r in printed)
    page = client.get(f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/").content.decode()
    assert "As of" in page and f"{figure(shown, 'faithful', 'raw', 'cohen_kappa')['value']:.3f}" in page


def test_new_labels_make_the_figures_stale_and_a_worker_recomputes(
    campaign, signed_in, project, django_capture_on_commit_callbacks
):
    client = signed_in(Role.VIEWER)
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/"
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url)
    first = AgreementSnapshot.objects.get(campaign=campaign)
    Judgment.objects.filter(dimension="faithful").first().delete()
    protocols.labels_changed(campaign_ids=[campaign.pk])  # what every label-writing service does
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.get(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'hx-trigger="every 2s"' in response.content.decode()
    assert AgreementSnapshot.objects.get(pk=first.pk).status == "computing" and len(queued) == 1
    queued[0]()  # the worker runs
    done = client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 286  # htmx stops polling
    assert AgreementSnapshot.objects.get(pk=first.pk).version != first.version


@pytest.mark.parametrize(
    ("role", "status"), [(Role.LEAD, 200), (Role.VIEWER, 200), (Role.ANNOTATOR, 404), (Role.REVIEWER, 404)]
)
def test_leads_and_viewers_read_dashboards(campaign, signed_in, project, role, status):
    assert signed_in(role).get(f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/").status_code == status


def test_outsiders_get_404_and_anonymous_users_login(campaign, client, outsider, project):
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/"
    assert client.get(url).status_code == 302
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    assert client.get(f"/p/other/campaigns/{campaign.pk}/agreement/").status_code == 404


def test_charts_are_png_with_their_numbers_on_the_page(
    campaign, signed_in, project, django_capture_on_commit_callbacks
):
    client = signed_in(Role.LEAD)
    base = f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/"
    with django_capture_on_commit_callbacks(execute=True):
        client.get(base)  # schedules the recompute, which runs once the response is out
    page = client.get(base).content.decode()
    assert "Agreement by round" in page and "Label distributions" in page
    rounds = client.get(base + "rounds.png")
    labels = client.get(base + "labels.png?dimension=faithful&variant=raw")
    assert rounds["Content-Type"] == labels["Content-Type"] == "image/png"
    assert rounds.content[:4] == b"\x89PNG" and labels.content[:4] == b"\x89PNG"
    assert client.get(base + "labels.png?dimension=nope&variant=raw").status_code == 404
    assert client.get(base + "other.png").status_code == 404


def test_an_import_of_new_labels_recomputes_existing_snapshots(
    campaign, project, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        services.dashboard(campaign)
    before = AgreementSnapshot.objects.get(campaign=campaign)
    more = tmp_path / "study.jsonl"
    more.write_text(json.dumps({"item": "q99", "annotator": "ann-a", "dimension": "faithful", "value": "yes"}) + "\n")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_data", str(more), project=project.slug, format="labels", stdout=io.StringIO())
    after = AgreementSnapshot.objects.get(pk=before.pk)
    assert after.status == "ready" and after.version != before.version


def test_the_api_serves_the_same_figures(campaign, project, make_user, django_capture_on_commit_callbacks):
    from rest_framework.test import APIClient

    viewer, annotator = make_user("v"), make_user("a")
    projects.add_member(project=project, user=viewer, role=Role.VIEWER)
    projects.add_member(project=project, user=annotator, role=Role.ANNOTATOR)
    client = APIClient()
    client.force_authenticate(viewer)
    url = f"/api/projects/{project.slug}/campaigns/{campaign.pk}/agreement/"
    with django_capture_on_commit_callbacks(execute=True):
        assert client.get(url).json()["status"] == "computing"
    body = client.get(url).json()
    assert body["status"] == "ready" and not body["stale"]
    assert body["metrics"] == AgreementSnapshot.objects.get(campaign=campaign).results["metrics"]
    client.force_authenticate(annotator)
    assert client.get(url).status_code == 404


def test_a_warm_dashboard_takes_a_fixed_number_of_queries(
    campaign, signed_in, project, django_assert_num_queries, django_capture_on_commit_callbacks
):
    client = signed_in(Role.LEAD)
    url = f"/p/{project.slug}/campaigns/{campaign.pk}/agreement/"
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url)
    client.get(url)
    with django_assert_num_queries(12):  # session, guard, filters, snapshot, labels version, nav
        assert client.get(url).status_code == 200


def test_pair_heat_map_is_a_symmetric_grid(campaign):
    results = services.compute(campaign, n_boot=20)
    block = next(b for b in results["pairs"] if b["dimension"] == "faithful")
    assert block["names"] == ["ann-a", "ann-b", "ann-c"]
    grid = block["grid"]
    assert all(grid[i][i] is None for i in range(3))
    assert all(grid[i][j] == grid[j][i] for i in range(3) for j in range(3))
    by_pair = {(p["a"], p["b"]): p["kappa"] for p in block["pairs"]}
    assert grid[0][1] == by_pair[("ann-a", "ann-b")]
