from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.accounts import services as accounts
from annotation.corpus import forms as corpus_forms
from annotation.corpus.models import ImportJob
from annotation.projects import forms, queries
from annotation.projects import services as projects
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership, Role

QUEUE_ROLES = {Role.ANNOTATOR, Role.REVIEWER}


@require_GET
@login_required
def home(request):
    """Annotators and reviewers see their queues; leads and viewers their projects' data."""
    memberships = list(request.user.memberships.people().select_related("project"))
    queue_members = [m for m in memberships if m.role in QUEUE_ROLES]
    overview_members = [m for m in memberships if m.role not in QUEUE_ROLES]
    counts = queries.data_counts([m.project_id for m in overview_members])
    for membership in overview_members:
        membership.counts = counts[membership.project_id]
    queues = queries.open_queues(request.user, [m.project_id for m in queue_members])
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
        "counts": queries.data_counts([project.pk])[project.pk],
        "people": [m for m in members if not m.is_external],
        "external": [m for m in members if m.is_external],
        "campaigns": queries.campaign_rows(project),
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
