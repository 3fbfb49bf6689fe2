"""Pages of the explanation-rating campaigns (SummEdits App. B; TofuEval App. H).

Leads set a campaign up; the rating screen opens only for the assignment's own reviewer (anyone
else gets 404); leads and viewers read the shares per judge. The screen is a plain form: native
radios, so Tab and the arrow keys move through it without any JavaScript.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols import explanations, forms, services
from annotation.protocols.models import Assignment, Campaign, Protocol


def own_assignment(request, project, pk) -> Assignment:
    return get_object_or_404(
        Assignment.objects.select_related("item__campaign", "item__document", "item__topic", "item__sentence"),
        pk=pk,
        annotator=request.user,
        stage="annotate",
        item__campaign__project=project,
        item__campaign__protocol=Protocol.EXPLANATION_RATING,
    )


def rating_campaign(project, pk) -> Campaign:
    return get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.EXPLANATION_RATING)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def new_campaign(request, project, membership):
    form = forms.ExplanationRatingCampaignForm(
        request.POST or None,
        jobs=list(explanations.explaining_jobs(project)),
        reviewers=explanations.eligible_reviewers(project),
    )
    if request.method == "POST" and form.is_valid():
        try:
            campaign = explanations.create_campaign(project=project, **form.arguments())
        except ValidationError as error:
            for name, problems in error.message_dict.items():
                form.add_error(name if name in form.fields else None, problems)
        else:
            count = Assignment.objects.filter(item__campaign=campaign).count()
            messages.success(request, f"{campaign.name}: {campaign.items.count()} items, {count} assignments.")
            return redirect("protocols:explanations_shares", slug=project.slug, pk=campaign.pk)
    context = {"project": project, "membership": membership, "form": form, "ratings": explanations.RATINGS}
    return render(request, "protocols/explanations_new.html", context, status=400 if form.errors else 200)


def screen_page(request, project, membership, assignment, *, posted=None, errors=None, status=200):
    shown = explanations.screen(assignment)
    for e in shown.explanations:
        if posted is not None:  # what was sent back with errors wins over what is stored
            e.rating = posted.get(f"rating-{e.letter}", "")
        e.error = (errors or {}).get(f"rating-{e.letter}", "")
    context = {
        "project": project,
        "membership": membership,
        "assignment": assignment,
        "campaign": assignment.item.campaign,
        "item": assignment.item,
        "document": assignment.item.document,
        "topic": assignment.item.topic,
        "sentence": assignment.item.sentence,
        "screen": shown,
        "ratings": explanations.RATINGS,
        "errors": errors or {},
        "general_error": (errors or {}).get("__all__", ""),
    }
    return render(request, "protocols/explanations_screen.html", context, status=status)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_review)
def rate(request, project, membership, pk):
    """GET: the explanations of one unit to rate. POST: record the ratings, then the next unit."""
    assignment = own_assignment(request, project, pk)
    if request.method == "GET":
        return screen_page(request, project, membership, assignment)
    try:
        explanations.submit(assignment=assignment, posted=request.POST, user=request.user)
    except ValidationError as error:
        errors = error.message_dict if hasattr(error, "error_dict") else {"__all__": error.messages}
        errors = {name: " ".join(problems) for name, problems in errors.items()}
        return screen_page(request, project, membership, assignment, posted=request.POST, errors=errors, status=400)
    messages.success(request, "Ratings recorded.")
    return redirect("protocols:explanations_next", slug=project.slug, pk=assignment.item.campaign_id)


@require_GET
@project_view(Membership.can_review)
def next_assignment(request, project, membership, pk):
    """The reviewer's next open unit of the campaign, or home when there is none."""
    campaign = rating_campaign(project, pk)
    assignment = services.next_open(campaign=campaign, user=request.user)
    if assignment is None:
        messages.info(request, f"Nothing left to rate in {campaign.name}.")
        return redirect("home")
    return redirect("protocols:explanations_rate", slug=project.slug, pk=assignment.pk)


@require_GET
@project_view(Membership.can_read_dashboards)
def shares(request, project, membership, pk):
    """How each judge's explanations were rated, one row per judge job."""
    campaign = rating_campaign(project, pk)
    assignments = Assignment.objects.filter(item__campaign=campaign)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "rows": explanations.shares(campaign),
        "ratings": explanations.RATINGS,
        "submitted": assignments.filter(status=Assignment.Status.SUBMITTED).count(),
        "total": assignments.count(),
    }
    return render(request, "protocols/explanations_shares.html", context)
