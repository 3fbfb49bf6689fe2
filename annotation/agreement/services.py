"""Agreement of a campaign: extract its judgments once, compute every registered figure, keep
the result as a snapshot that a Celery job refreshes when the judgments change.

The dashboard, the API and `manage.py agreement` all read `compute()`'s output, so the command's
JSON is exactly what the page shows.
"""

import hashlib
import json
from collections import Counter, defaultdict
from itertools import combinations

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.agreement import metrics, registry
from annotation.agreement.models import AgreementSnapshot
from annotation.corpus.models import Summary
from annotation.protocols.models import Adjudication, Campaign, Judgment

BOOTSTRAP_SAMPLES = 1000
ADJUDICATED = "adjudicated"
PILOT_ROUNDS = "*pilot"  # the round filter's value for every round before the campaign's last
TYPING_STAGE = "error_typing"  # reviewers' error types (TofuEval App. G) are rated at this stage
METRIC_LABELS = {
    "percent_agreement": "Percent agreement",
    "cohen_kappa": "Cohen's kappa (mean over pairs)",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "pairwise_span_f1": "Pairwise span F1",
}


# -- extraction ---------------------------------------------------------------------------------
def judgment_rows(campaign: Campaign, filters: dict) -> list[dict]:
    """The campaign's annotation judgments as plain rows, in one query; error types are the
    reviewers' (error typing stage) when there are any, else those that came with the labels."""
    pseudonyms = dict(campaign.project.memberships.values_list("user_id", "pseudonym"))
    rows = Judgment.objects.filter(assignment__item__campaign=campaign).filter(
        Q(assignment__stage="annotate") | Q(assignment__stage=TYPING_STAGE, dimension="error_types")
    )
    if filters.get("round") == PILOT_ROUNDS:
        rows = rows.filter(assignment__item__round__in=pilot_rounds(campaign))
    elif filters.get("round"):
        rows = rows.filter(assignment__item__round=filters["round"])
    if filters.get("dataset"):
        rows = rows.filter(assignment__item__document__dataset=filters["dataset"])
    values = rows.values(
        "dimension",
        "target",
        "value",
        "summary_id",
        annotator_id=F("assignment__annotator_id"),
        item_key=F("assignment__item__key"),
        round=F("assignment__item__round"),
        stage=F("assignment__stage"),
    )
    excluded = set(filters.get("exclude") or ())
    out, typed = [], []
    for r in values.iterator(chunk_size=5000):
        annotator = pseudonyms.get(r["annotator_id"], str(r["annotator_id"]))
        if annotator in excluded:
            continue
        (typed if r["stage"] == TYPING_STAGE else out).append(row(r, annotator))
    if typed:
        out = [r for r in out if r["dimension"] != "error_types"] + typed
    return out


def pilot_rounds(campaign: Campaign) -> list[str]:
    """Every round before the campaign's last (the main one)."""
    return list((campaign.rounds or [])[:-1])


def row(r: dict, annotator: str) -> dict:
    unit = r["item_key"] if r["target"] == "item" else r["target"]
    return {
        "dimension": r["dimension"],
        "unit": unit,
        "annotator": annotator,
        "value": r["value"],
        "summary": r["summary_id"],
        "round": r["round"],
    }


def adjudicated_rows(campaign: Campaign) -> list[dict]:
    rows = Adjudication.objects.filter(item__campaign=campaign).values(
        "dimension", "target", "value", "summary_id", item_key=F("item__key"), round=F("item__round")
    )
    return [row(r, ADJUDICATED) for r in rows]


# -- computation --------------------------------------------------------------------------------
def compute(campaign: Campaign, filters: dict | None = None, *, n_boot: int = BOOTSTRAP_SAMPLES, progress=None) -> dict:
    """Every figure of the dashboard for a campaign, as JSON-ready data."""
    filters = normalized(filters)
    rows = judgment_rows(campaign, filters)
    by_dimension = defaultdict(list)
    for r in rows:
        by_dimension[r["dimension"]].append(r)
    if "span" in by_dimension:
        by_dimension["span"] += marked_nothing(by_dimension["span"], by_dimension.get("has_inconsistency", []))
    adjudicated = defaultdict(list)
    for r in adjudicated_rows(campaign):
        adjudicated[r["dimension"]].append(r)
    levels = (campaign.settings or {}).get("levels", {})
    out = {"metrics": [], "pairs": [], "annotators": [], "confusions": [], "by_round": [], "distributions": []}
    names = sorted(by_dimension)
    for n, name in enumerate(names, 1):
        dim = registry.dimension(name, levels.get(name, "nominal"))
        for variant in dim.variants:
            figures(out, dim, variant, by_dimension[name], adjudicated.get(name, []), campaign, n_boot)
        if progress:
            progress(n, len(names))
    out["annotator_names"] = sorted({r["annotator"] for r in rows})
    out["rounds"] = sorted({r["round"] for r in rows}, key=round_order(campaign))
    return out


def marked_nothing(span_rows: list[dict], verdicts: list[dict]) -> list[dict]:
    """An annotator who judged a summary and marked no span in it takes part in span F1 as
    "marked nothing": an empty span row for each such (summary, annotator)."""
    marked = {(r["summary"], r["annotator"]) for r in span_rows}
    return [
        {**r, "dimension": "span", "unit": f"{r['unit']}/span:none", "value": None}
        for r in verdicts
        if r["summary"] is not None and (r["summary"], r["annotator"]) not in marked
    ]


def round_order(campaign: Campaign):
    """Rounds in the campaign's own order (pilot 1..n, main), unknown ones after, by name."""
    position = {name: n for n, name in enumerate(campaign.rounds or [])}
    return lambda name: (position.get(name, len(position)), name)


def figures(out: dict, dim, variant, rows: list[dict], adjudicated: list[dict], campaign, n_boot: int) -> None:
    ratings = variant.transform(rows)
    key = {"dimension": dim.name, "dimension_label": dim.label, "variant": variant.name, "level": variant.level}
    if variant.level == "spans":
        texts = dict(Summary.objects.filter(pk__in={r[0] for r in ratings}).values_list("pk", "text"))
        result = metrics.pairwise_span_f1([(u, a, list(s)) for u, a, s in ratings], texts)
        out["metrics"].append(metric_row(key, "pairwise_span_f1", result))
        return
    for metric in variant.metrics:
        kwargs = {"level": variant.level} if metric == "krippendorff_alpha" else {}
        result = metrics.with_interval(getattr(metrics, metric), ratings, n_boot=n_boot, **kwargs)
        out["metrics"].append(metric_row(key, metric, result))
    out["distributions"].append({**key, "counts": label_counts(ratings)})
    if variant.level != "nominal":
        return
    pair_results = metrics.pairs(ratings)
    out["pairs"].append(
        {**key, "pairs": [pair_row(a, b, r) for (a, b), r in sorted(pair_results.items())], **pair_matrix(pair_results)}
    )
    out["annotators"].append(
        {**key, "annotators": per_annotator(ratings, pair_results, variant.transform(adjudicated))}
    )
    out["confusions"].append({**key, "matrices": confusions(ratings)})
    out["by_round"].append({**key, "rounds": by_round(rows, variant, round_order(campaign))})


def metric_row(key: dict, metric: str, result) -> dict:
    return {
        **key,
        "metric": metric,
        "metric_label": METRIC_LABELS[metric],
        "value": result.value,
        "low": result.low,
        "high": result.high,
        "n_items": result.n_items,
        "n_annotators": result.n_annotators,
        "note": result.note,
    }


def pair_matrix(pair_results: dict) -> dict:
    """The pairs as a symmetric annotator x annotator grid of kappas (None on the diagonal)."""
    names = sorted({name for pair in pair_results for name in pair})
    kappa = {frozenset(pair): r.value for pair, r in pair_results.items()}
    grid = [[None if a == b else kappa.get(frozenset((a, b))) for b in names] for a in names]
    return {"names": names, "grid": grid}


def pair_row(a: str, b: str, result) -> dict:
    return {"a": a, "b": b, "kappa": result.value, "n_items": result.n_items}


def per_annotator(ratings, pair_results: dict, adjudicated: list) -> list[dict]:
    """Each annotator against the others (mean pairwise kappa) and against adjudicated labels."""
    names = sorted({a for _, a, _ in ratings})
    reference = [(unit, ADJUDICATED, value) for unit, _, value in adjudicated]
    rows = []
    for name in names:
        kappas = [r.value for (a, b), r in pair_results.items() if name in (a, b) and r.value is not None]
        own = [(u, a, v) for u, a, v in ratings if a == name]
        versus = metrics.cohen_kappa(own + reference) if reference else None
        rows.append(
            {
                "annotator": name,
                "mean_kappa_with_others": sum(kappas) / len(kappas) if kappas else None,
                "kappa_with_adjudicated": versus.value if versus else None,
                "n_adjudicated": versus.n_items if versus else 0,
            }
        )
    return rows


def confusions(ratings) -> list[dict]:
    names = sorted({a for _, a, _ in ratings})
    out = []
    for a, b in combinations(names, 2):
        counts = metrics.confusion(ratings, a, b)
        if counts:
            labels = sorted({str(x) for pair in counts for x in pair})
            cells = {f"{x}|{y}": n for (x, y), n in counts.items()}
            grid = [[cells.get(f"{x}|{y}", 0) for y in labels] for x in labels]
            out.append({"a": a, "b": b, "labels": labels, "grid": grid})
    return out


def by_round(rows: list[dict], variant, order) -> list[dict]:
    """Krippendorff's alpha of the variant in each round (pilot 1..n, main)."""
    rounds = defaultdict(list)
    for r in rows:
        rounds[r["round"]].append(r)
    out = []
    for name in sorted(rounds, key=order):
        result = metrics.krippendorff_alpha(variant.transform(rounds[name]), level=variant.level)
        out.append({"round": name, "alpha": result.value, "n_items": result.n_items})
    return out


def label_counts(ratings) -> list[dict]:
    counts = Counter(str(v) for _, _, v in ratings if v is not None)
    return [{"label": label, "count": n} for label, n in sorted(counts.items())]


# -- snapshots: cached results, refreshed by a Celery job -----------------------------------------
def normalized(filters: dict | None) -> dict:
    filters = dict(filters or {})
    return {
        "round": filters.get("round") or "",
        "dataset": filters.get("dataset") or "",
        "exclude": sorted(set(filters.get("exclude") or ())),
    }


def filters_key(filters: dict) -> str:
    return hashlib.sha256(json.dumps(normalized(filters), sort_keys=True).encode()).hexdigest()[:32]


def labels_version(campaign: Campaign) -> str:
    """When the campaign's labels last changed (set by the services that write them)."""
    changed = Campaign.objects.filter(pk=campaign.pk).values_list("labels_changed_at", flat=True).first()
    return changed.isoformat() if changed else "never"


def dashboard(campaign: Campaign, filters: dict | None = None) -> AgreementSnapshot:
    """The snapshot for these filters; schedules a recompute when it is missing or stale."""
    filters = normalized(filters)
    snapshot, _ = AgreementSnapshot.objects.get_or_create(
        campaign=campaign, filters_key=filters_key(filters), defaults={"filters": filters}
    )
    snapshot.is_stale = snapshot.version != labels_version(campaign)
    if snapshot.is_stale and snapshot.status != AgreementSnapshot.Status.COMPUTING:
        schedule_recompute(snapshot)
    return snapshot


def refresh_project(project) -> int:
    """After labels arrive (an import, a submission): recompute the project's stale snapshots."""
    stale = 0
    for snapshot in AgreementSnapshot.objects.filter(campaign__project=project).select_related("campaign"):
        if snapshot.status != AgreementSnapshot.Status.COMPUTING and snapshot.version != labels_version(
            snapshot.campaign
        ):
            schedule_recompute(snapshot)
            stale += 1
    return stale


def schedule_recompute(snapshot: AgreementSnapshot) -> None:
    from annotation.agreement import tasks

    AgreementSnapshot.objects.filter(pk=snapshot.pk).update(
        status=AgreementSnapshot.Status.COMPUTING, started_at=timezone.now(), done=0, total=0
    )
    snapshot.status = AgreementSnapshot.Status.COMPUTING
    transaction.on_commit(lambda: tasks.recompute.delay(snapshot.pk))


def recompute(*, snapshot_id: int) -> None:
    """The worker's side: compute the snapshot's figures and store them with their "as of" time."""
    snapshot = AgreementSnapshot.objects.select_related("campaign__project").get(pk=snapshot_id)
    version = labels_version(snapshot.campaign)  # read first: changes during the run make it stale

    def progress(done: int, total: int) -> None:
        AgreementSnapshot.objects.filter(pk=snapshot.pk).update(done=done, total=total)

    try:
        results = compute(snapshot.campaign, snapshot.filters, progress=progress)
    except Exception:
        AgreementSnapshot.objects.filter(pk=snapshot.pk).update(status=AgreementSnapshot.Status.FAILED)
        raise
    AgreementSnapshot.objects.filter(pk=snapshot.pk).update(
        results=results, version=version, computed_at=timezone.now(), status=AgreementSnapshot.Status.READY
    )
