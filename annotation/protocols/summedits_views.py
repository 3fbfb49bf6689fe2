"""SummEdits statistics (Laban et al. 2023, Table 8) and the per-domain benchmark download.

Leads and viewers read the statistics; the download is for members who may export. Anyone
else, and any campaign that is not SummEdits, gets 404.
"""

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols import summedits_results
from annotation.protocols.models import Campaign, Protocol


def summedits_campaign(project, pk) -> Campaign:
    return get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.SUMMEDITS)


@require_GET
@project_view(Membership.can_read_dashboards)
def stats(request, project, membership, pk):
    campaign = summedits_campaign(project, pk)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "tables": summedits_results.results(campaign),
    }
    return render(request, "protocols/summedits_stats.html", context)


@require_GET
@project_view(Membership.can_export)
def benchmark(request, project, membership, pk):
    """The benchmark as JSONL, streamed: every domain, or the one `?domain=` names."""
    campaign = summedits_campaign(project, pk)
    domain = request.GET.get("domain") or None
    if domain is not None and domain not in summedits_results.domains(campaign):
        raise Http404("No such domain in this campaign.")
    lines = summedits_results.benchmark_lines(campaign, domain)
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    name = "-".join(slugify(part) for part in (project.slug, campaign.slug, domain or "all", "benchmark"))
    response["Content-Disposition"] = f'attachment; filename="{name}.jsonl"'
    return response
