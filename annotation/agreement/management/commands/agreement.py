import json

from django.core.management.base import BaseCommand, CommandError

from annotation.agreement import services
from annotation.protocols.models import Campaign


class Command(BaseCommand):
    help = "Print a project's agreement figures (what its dashboards show)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--campaign", help="campaign id or slug (default: every campaign)")
        parser.add_argument("--json", action="store_true", help="a JSON list of objects (default: a table)")
        parser.add_argument("--round", default="")
        parser.add_argument("--dataset", default="")

    def handle(self, *args, **opts):
        campaigns = Campaign.objects.filter(project__slug=opts["project"]).order_by("slug")
        if opts.get("campaign"):
            key = opts["campaign"]
            campaigns = campaigns.filter(pk=int(key)) if key.isdigit() else campaigns.filter(slug=key)
        if not campaigns.exists():
            raise CommandError(f"no such campaign in project {opts['project']!r}")
        filters = {"round": opts["round"], "dataset": opts["dataset"]}
        rows = [{"campaign": c.slug, **figure} for c in campaigns for figure in services.compute(c, filters)["metrics"]]
        if opts["json"]:
            self.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        for r in rows:
            value = "-" if r["value"] is None else f"{r['value']:.3f}"
            self.stdout.write(
                f"{r['campaign']:<24} {r['dimension']:<18} {r['variant']:<18} {r['metric']:<20} "
                f"{value:>7}  n={r['n_items']} k={r['n_annotators']} {r['note']}"
            )
