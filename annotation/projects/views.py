from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.accounts import services as accounts
from annotation.corpus import forms as corpus_forms
from annotation.corpus.models import Document, ImportJob, Summary, SummarySentence, Topic
from annotation.projects import forms
from annotation.projects import services as projects
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership, Role
from annotation.protocols.models import Assignment, Campaign, Judgment, Protocol

QUEUE_ROLES = {Role.ANNOTATOR, Role.REVIEWER}


@require_GET
@login_required
def home(request):
    """Annotators and reviewers see their queues; leads and viewers their projects' data."""
    memberships = list(request.user.memberships.people().select_related("project"))
    queue_members = [m for m in memberships if m.role in QUEUE_ROLES]
    overview_members = [m for m in memberships if m.role not in QUEUE_ROLES]
    counts = data_counts([m.project_id for m in overview_members])
    for membership in overview_members:
        membership.counts = counts[membership.project_id]
    queues = open_queues(request.user, [m.project_id for m in queue_members])
    for membership in queue_members:
        membership.queue = queues[membership.project_id]
    context = {"memberships": memberships, "queue_members": queue_members, "overview_members": overview_members}
    return render(request, "projects/home.html", context)


@require_GET
@project_view()
def detail(request, project, membership):
    """A project at a glance: its data, people and campaigns; forms for what this role may do."""
    members = list(projects.members(project))
    context = {
        "project": project,
        "membership": membership,
        "counts": data_counts([project.pk])[project.pk],
        "people": [m for m in members if not m.is_external],
        "external": [m for m in members if m.is_external],
        "campaigns": campaign_rows(project),
    }
    if membership.can_manage():
        context["invite_form"] = forms.InviteForm()
        context["import_form"] = corpus_forms.ImportForm()
        context["import_jobs"] = ImportJob.objects.filter(project=project).only("pk", "format", "status", "created_at")[
            :5
        ]
    return render(request, "projects/detail.html", context)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def invite(request, project, membership):
    form = forms.InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            invitation = accounts.invite(project=project, invited_by=request.user, request=request, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Invitation sent to {invitation.email} as {invitation.get_role_display()}.")
            return redirect("projects:detail", slug=project.slug)
    status = 400 if form.errors else 200
    return render(
        request, "projects/invite.html", {"project": project, "membership": membership, "form": form}, status=status
    )


# -- read-side helpers: a fixed number of queries however many projects or rows -----------------
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


def open_queues(user, project_ids: list[int]) -> dict[int, list[dict]]:
    """A user's open assignments per campaign, grouped by project (one query)."""
    queues = defaultdict(list)
    if not project_ids:
        return queues
    rows = (
        Assignment.objects.open_for(user)
        .filter(item__campaign__project__in=project_ids)
        .values("item__campaign__project", "item__campaign__name", "item__campaign__protocol")
        .annotate(open=Count("pk"), started=Count("pk", filter=Q(status=Assignment.Status.IN_PROGRESS)))
        .order_by("item__campaign__name")
    )
    for row in rows:
        row["protocol"] = Protocol(row["item__campaign__protocol"]).label
        queues[row["item__campaign__project"]].append(row)
    return queues


def campaign_rows(project):
    submitted = Q(items__assignments__status=Assignment.Status.SUBMITTED)
    return Campaign.objects.filter(project=project).annotate(
        item_count=Count("items", distinct=True),
        submitted_count=Count("items__assignments", filter=submitted, distinct=True),
    )
