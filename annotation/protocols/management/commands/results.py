import json

from django.core.management.base import BaseCommand, CommandError

from annotation.protocols import ambiguity_results, results, spans, summedits_results
from annotation.protocols.models import Campaign, Protocol

# protocol -> the function that computes its campaigns' results
RESULTS = {protocol: results.results for protocol in results.PROTOCOLS} | {
    Protocol.SUMMEDITS: summedits_results.results,
    Protocol.AMBIGUITY: ambiguity_results.results,
    Protocol.SPANS: spans.results,
}


class Command(BaseCommand):
    help = (
        "Print campaign results as JSON: TofuEval (Table 6 and Figure 2) and SummEdits "
        "(per-domain statistics, Laban et al. 2023 Table 8), ambiguity (MADISSE Table 2, kappa, ambiguity x consistency), spans (Ramprasad et al. Figures 2-3)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--campaign", help="campaign id or slug (default: every campaign with results)")
        parser.add_argument("--json", action="store_true", help="JSON (the only format for now)")

    def handle(self, *args, **opts):
        campaigns = Campaign.objects.filter(project__slug=opts["project"], protocol__in=list(RESULTS))
        if opts.get("campaign"):
            key = opts["campaign"]
            campaigns = campaigns.filter(pk=int(key)) if key.isdigit() else campaigns.filter(slug=key)
        if not campaigns.exists():
            raise CommandError(f"no campaign with results in project {opts['project']!r}")
        out = {c.slug: RESULTS[c.protocol](c) for c in campaigns.order_by("slug")}
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
