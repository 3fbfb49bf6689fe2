from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.agreement import services as agreement
from annotation.corpus import services
from annotation.corpus.formats.base import ImportFailed
from annotation.projects.models import Project


class Command(BaseCommand):
    help = "Import files into a project (created if missing): all or nothing, with line-numbered errors."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="files to import (a release's folder for tofueval)")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--format", required=True, choices=sorted(services.FORMATS))
        parser.add_argument("--documents", help="tofueval: JSONL of {doc_id, turns} with the source texts")
        parser.add_argument("--dataset", help="tofueval/summedits: dataset or domain name if not in the file name")
        parser.add_argument("--campaign", help="labels: the campaign's slug (default: from the file name)")

    def handle(self, *args, **opts):
        options = {k: opts[k] for k in ("documents", "dataset", "campaign") if opts.get(k)}

        def progress(phase, done, total):
            if opts["verbosity"] > 1 and total:
                self.stderr.write(f"{phase}: {done}/{total}")

        try:
            counts, warnings = services.import_data(
                project_slug=opts["project"],
                format=opts["format"],
                paths=opts["paths"],
                options=options,
                progress=progress,
            )
        except ImportFailed as failure:
            for issue in failure.issues:
                self.stderr.write(f"error: {issue}")
            raise CommandError(f"import failed with {len(failure.issues)} error(s); nothing was written") from None
        except (ValidationError, FileNotFoundError) as error:
            raise CommandError(str(error)) from None
        if counts.get("judgments") or counts.get("adjudications"):
            agreement.refresh_project(Project.objects.get(slug=opts["project"]))
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if v) or "nothing new"
        self.stdout.write(f"imported into {opts['project']}: {summary}")
