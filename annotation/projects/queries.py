"""Read-side queries of the project pages: a fixed number of queries however many projects or rows."""

from collections import defaultdict

from django.db.models import Count, Q

from annotation.corpus.models import Document, Summary, SummarySentence, Topic
from annotation.projects.models import Membership
from annotation.protocols import review
from annotation.protocols.models import Assignment, Campaign, Judgment, Protocol


def data_counts(project_ids: list[int]) -> dict[int, dict]:
    """Row counts of each project's data, in six queries for any number of projects."""
    counts = defaultdict(lambda: dict.fromkeys(COUNT_NAMES, 0))
    for project_id, row in grouped_counts(project_ids):
        counts[project_id].update(row)
    return counts


COUNT_NAMES = ["documents", "text_missing", "topics", "summaries", "edited", "sentences", "campaigns", "judgments"]


def grouped_counts(ids):
    if not ids:
        return
    queries = [
        (
            Document.objects.filter(project__in=ids),
            "project",
            {"documents": Count("pk"), "text_missing": Count("pk", filter=Q(text_missing=True))},
        ),
        (Topic.objects.filter(document__project__in=ids), "document__project", {"topics": Count("pk")}),
        (Summary.objects.filter(project__in=ids), "project", {"summaries": Count("pk"), "edited": Count("edit")}),
        (SummarySentence.objects.filter(summary__project__in=ids), "summary__project", {"sentences": Count("pk")}),
        (Campaign.objects.filter(project__in=ids), "project", {"campaigns": Count("pk")}),
        (
            Judgment.objects.filter(assignment__item__campaign__project__in=ids),
            "assignment__item__campaign__project",
            {"judgments": Count("pk")},
        ),
    ]
    for queryset, key, aggregates in queries:
        for row in queryset.order_by().values(key).annotate(**aggregates):
            yield row.pop(key), row


SCREENS = {
    Protocol.TOFUEVAL_TASK1,
    Protocol.TOFUEVAL_TASK2,
    Protocol.SUMMEDITS,
    Protocol.EXPLANATION_RATING,
    Protocol.AMBIGUITY,
    Protocol.SPANS,
}  # protocols whose annotation screen exists


def open_queues(user, project_ids: list[int]) -> dict[int, list[dict]]:
    """A user's assignments per campaign (done / total, open, started), grouped by project, in one
    query; then, for members who review, their review queues (`review_rows`)."""
    queues = defaultdict(list)
    if not project_ids:
        return queues
    open_states = [Assignment.Status.PENDING, Assignment.Status.IN_PROGRESS]
    rows = (
        Assignment.objects.filter(annotator=user, stage="annotate", item__campaign__project__in=project_ids)
        .values("item__campaign__project", "item__campaign", "item__campaign__name", "item__campaign__protocol")
        .annotate(
            total=Count("pk"),
            done=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED)),
            open=Count("pk", filter=Q(status__in=open_states)),
            started=Count("pk", filter=Q(status=Assignment.Status.IN_PROGRESS)),
        )
        .order_by("item__campaign__name")
    )
    for row in rows:
        row["protocol"] = Protocol(row["item__campaign__protocol"]).label
        row["has_screen"] = row["item__campaign__protocol"] in SCREENS
        queues[row["item__campaign__project"]].append(row)
    for row in review_rows(user, project_ids):
        queues[row["item__campaign__project"]].append(row)
    return queues


def review_rows(user, project_ids: list[int]) -> list[dict]:
    """For members who review: per task 1 campaign, the units waiting for them to decide, check
    and type; in six queries for any number of projects (one when they review nowhere)."""
    memberships = Membership.objects.people().filter(user=user, project__in=project_ids)
    reviewing = [m.project_id for m in memberships if m.can_review()]
    if not reviewing:
        return []
    campaigns = list(review.reviewable(Campaign.objects.filter(project__in=reviewing)).order_by("name"))
    counts = review.counts([c.pk for c in campaigns], user)
    return [
        {
            "review": True,
            "item__campaign__project": c.project_id,
            "item__campaign": c.pk,
            "item__campaign__name": c.name,
            "protocol": "TofuEval expert review",
            **counts[c.pk],
        }
        for c in campaigns
    ]


def campaign_rows(project):
    submitted = Q(items__assignments__status=Assignment.Status.SUBMITTED)
    return Campaign.objects.filter(project=project).annotate(
        item_count=Count("items", distinct=True),
        submitted_count=Count("items__assignments", filter=submitted, distinct=True),
    )
