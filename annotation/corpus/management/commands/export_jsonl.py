import sys

from django.core.management.base import BaseCommand, CommandError

from annotation.corpus import services
from annotation.projects.models import Project


class Command(BaseCommand):
    help = "Export a project as JSONL (a consistent snapshot, streamed)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--out", help="file to write (default: standard output)")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        out = open(opts["out"], "w", encoding="utf-8") if opts.get("out") else sys.stdout
        lines = 0
        try:
            for line in services.export_lines(project=project):
                out.write(line)
                lines += 1
        finally:
            if out is not sys.stdout:
                out.close()
        if opts.get("out"):
            self.stderr.write(f"wrote {lines} lines to {opts['out']}")
