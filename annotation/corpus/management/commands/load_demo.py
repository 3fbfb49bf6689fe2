import secrets
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.corpus import services
from annotation.projects import services as projects
from annotation.projects.models import Project, Role
from annotation.protocols import services as protocols
from annotation.protocols.models import Campaign, Item, Protocol

DATA = Path(__file__).resolve().parents[2] / "demo_data"
IMPORTS = [
    ("tofueval", [DATA / "tofueval_sample"], {"documents": str(DATA / "meetingbank_documents_sample.jsonl")}),
    ("summedits", sorted((DATA / "summedits_sample").glob("*.json")), {}),
    ("madisse", [DATA / "madisse_sample.jsonl"], {"documents": str(DATA / "meetingbank_documents_sample.jsonl")}),
    ("ramprasad", [DATA / "ramprasad_format_example.csv"], {}),
]
PEOPLE = [
    ("lead", Role.LEAD),
    ("annotator1", Role.ANNOTATOR),
    ("annotator2", Role.ANNOTATOR),
    ("reviewer", Role.REVIEWER),
]


class Command(BaseCommand):
    help = "Create (or refresh) the demo project from the bundled samples, with users; prints their passwords."

    def add_arguments(self, parser):
        parser.add_argument("--project", default="demo")

    def handle(self, *args, **opts):
        slug = opts["project"]
        for format, paths, options in IMPORTS:
            counts, _ = services.import_data(project_slug=slug, format=format, paths=paths, options=options)
            self.stdout.write(f"{format}: {sum(counts.values())} new rows")
        project = Project.objects.get(slug=slug)
        if project.name == slug.title():
            project.name, project.description = "Demo", "Samples of TofuEval, SummEdits, MADISSE and Ramprasad et al."
            project.save()
        passwords = self.people(project)
        self.demo_campaign(project, [u for u, role in passwords if role == Role.ANNOTATOR])
        self.stdout.write(self.style.SUCCESS("\nDemo logins (new passwords each run):"))
        for user, role in passwords:
            self.stdout.write(f"  {user.username:<12} {user.password_plain:<26} {role}")

    @transaction.atomic
    def people(self, project):
        User = get_user_model()
        out = []
        for username, role in PEOPLE:
            user, _ = User.objects.get_or_create(username=username, defaults={"email": f"{username}@example.org"})
            user.password_plain = secrets.token_urlsafe(12)
            user.set_password(user.password_plain)
            user.is_staff = user.is_superuser = role == Role.LEAD
            user.save()
            projects.add_member(project=project, user=user, role=role)
            out.append((user, role))
        return out

    @transaction.atomic
    def demo_campaign(self, project, annotators):
        """A TofuEval task 1 campaign over the release's (document, topic) pairs, given to both annotators."""
        campaign, _ = Campaign.objects.get_or_create(
            project=project,
            slug="demo-tofueval",
            defaults={
                "name": "TofuEval pilot (demo)",
                "protocol": Protocol.TOFUEVAL_TASK1,
                "annotators_per_item": 2,
                "rounds": ["pilot-1", "main"],
                "status": Campaign.Status.ACTIVE,
            },
        )
        release = Item.objects.filter(campaign__project=project, campaign__slug="release-tofueval")
        for source in release:
            summaries = list(source.summaries.annotatable())
            if not summaries:
                continue
            item, created = Item.objects.get_or_create(
                campaign=campaign, key=source.key, defaults={"document": source.document, "topic": source.topic}
            )
            if created:
                item.summaries.set(summaries)
            for annotator in annotators:
                protocols.assign(item=item, annotator=annotator)
