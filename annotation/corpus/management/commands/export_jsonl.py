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
        if not opts.get("out"):
            self.write(project, sys.stdout)
            return
        with open(opts["out"], "w", encoding="utf-8") as out:
            lines = self.write(project, out)
        self.stderr.write(f"wrote {lines} lines to {opts['out']}")

    def write(self, project, out) -> int:
        lines = 0
        for line in services.export_lines(project=project):
            out.write(line)
            lines += 1
        return lines
