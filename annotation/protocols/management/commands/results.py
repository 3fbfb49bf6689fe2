import json

from django.core.management.base import BaseCommand, CommandError

from annotation.protocols import results
from annotation.protocols.models import Campaign


class Command(BaseCommand):
    help = "Print a TofuEval campaign's results (TofuEval Table 6 and Figure 2) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--campaign", help="campaign id or slug (default: every TofuEval task 1 and task 2 campaign)"
        )
        parser.add_argument("--json", action="store_true", help="JSON (the only format for now)")

    def handle(self, *args, **opts):
        campaigns = Campaign.objects.filter(project__slug=opts["project"], protocol__in=results.PROTOCOLS)
        if opts.get("campaign"):
            key = opts["campaign"]
            campaigns = campaigns.filter(pk=int(key)) if key.isdigit() else campaigns.filter(slug=key)
        if not campaigns.exists():
            raise CommandError(f"no TofuEval task 1 or task 2 campaign in project {opts['project']!r}")
        out = {c.slug: results.results(c) for c in campaigns.order_by("slug")}
        self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
