"""Statistics of a span campaign (Ramprasad et al. 2024, Figures 2-3), for leads and viewers.

Anyone else, and any campaign that is not a span campaign, gets 404. The annotation screen
itself is the generic one (annotation/protocols/views.py, PLUGGED).
"""

from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols import spans
from annotation.protocols.models import Campaign, Protocol


@require_GET
@project_view(Membership.can_read_dashboards)
def stats(request, project, membership, pk):
    campaign = get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.SPANS)
    context = {"project": project, "membership": membership, "campaign": campaign, "tables": spans.statistics(campaign)}
    return render(request, "protocols/spans_stats.html", context)
