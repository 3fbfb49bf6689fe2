from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseStopPolling

from annotation.agreement import charts, forms, services
from annotation.agreement.models import AgreementSnapshot
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols.models import Assignment, Campaign


def filter_form(request, campaign: Campaign) -> forms.FilterForm:
    items = campaign.items.order_by()
    pseudonyms = dict(campaign.project.memberships.values_list("user_id", "pseudonym"))
    annotators = Assignment.objects.filter(
        item__campaign=campaign, stage__in=["annotate", services.TYPING_STAGE]
    ).order_by()
    rounds = sorted(items.values_list("round", flat=True).distinct(), key=services.round_order(campaign))
    pilots = set(services.pilot_rounds(campaign))
    return forms.FilterForm(
        request.GET or None,
        rounds=rounds,
        pilot=bool(pilots & set(rounds)),
        datasets=sorted(items.exclude(document=None).values_list("document__dataset", flat=True).distinct()),
        annotators=sorted(
            {pseudonyms.get(a, str(a)) for a in annotators.values_list("annotator", flat=True).distinct()}
        ),
    )


@require_GET
@project_view(Membership.can_read_dashboards)
def dashboard(request, project, membership, pk):
    """Agreement of one campaign; while a worker recomputes, the figures part polls itself."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk)
    form = filter_form(request, campaign)
    snapshot = services.dashboard(campaign, form.filters())
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "form": form,
        "snapshot": snapshot,
        "results": snapshot.results,
        "query": request.GET.urlencode(),
    }
    if not request.htmx:
        return render(request, "agreement/dashboard.html", context)
    response = render(request, "agreement/dashboard.html#figures", context)
    if snapshot.status != AgreementSnapshot.Status.COMPUTING:
        return HttpResponseStopPolling(response.content)
    return response


@require_GET
@project_view(Membership.can_read_dashboards)
def chart(request, project, membership, pk, kind):
    """A chart of the current snapshot (never recomputes)."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk)
    filters = services.normalized(filter_form(request, campaign).filters())
    snapshot = get_object_or_404(AgreementSnapshot, campaign=campaign, filters_key=services.filters_key(filters))
    results = snapshot.results or {}
    if kind == "rounds":
        image = charts.by_round(results.get("by_round", []))
    elif kind != "labels":
        raise Http404("No such chart.")
    else:
        wanted = (request.GET.get("dimension"), request.GET.get("variant"))
        found = [d for d in results.get("distributions", []) if (d["dimension"], d["variant"]) == wanted]
        if not found:
            raise Http404("No such distribution.")
        image = charts.labels(found[0])
    response = HttpResponse(image, content_type="image/png")
    response["Cache-Control"] = "private, max-age=60"
    return response
