import random
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.corpus import services
from annotation.projects import services as projects
from annotation.projects.models import Project, Role
from annotation.protocols import services as protocols
from annotation.protocols import setup, summedits
from annotation.protocols.models import Assignment, Campaign, Item, Judgment, Protocol

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
        if not settings.DEBUG:
            # it resets the passwords of users named lead, annotator1... and makes `lead` a
            # superuser: never on a production database
            raise CommandError(
                "load_demo creates users with well-known names; it runs only with DEBUG=1 (make run sets it)."
            )
        slug = opts["project"]
        for format, paths, options in IMPORTS:
            counts, _ = services.import_data(project_slug=slug, format=format, paths=paths, options=options)
            self.stdout.write(f"{format}: {sum(counts.values())} new rows")
        project = Project.objects.get(slug=slug)
        if project.name == slug.title():
            project.name, project.description = "Demo", "Samples of TofuEval, SummEdits, MADISSE and Ramprasad et al."
            project.save()
        passwords = self.people(project)
        annotators = [u for u, role in passwords if role == Role.ANNOTATOR]
        self.demo_campaign(project, annotators, "demo-tofueval", "TofuEval pilot (demo)", Protocol.TOFUEVAL_TASK1)
        self.demo_campaign(
            project, annotators, "demo-completeness", "TofuEval completeness (demo)", Protocol.TOFUEVAL_TASK2
        )
        self.demo_labels(project, annotators)
        self.demo_summedits(project, annotators)
        self.demo_ambiguity(project, annotators)
        self.demo_spans(project, annotators)
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
    def demo_campaign(self, project, annotators, slug, name, protocol):
        """A TofuEval task 1 or 2 campaign over the release's (document, topic) pairs, given to both annotators."""
        campaign, _ = Campaign.objects.get_or_create(
            project=project,
            slug=slug,
            defaults={
                "name": name,
                "protocol": protocol,
                "guidelines": setup.DEFAULT_GUIDELINES[protocol],
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

    def demo_summedits(self, project, annotators):
        """A SummEdits campaign over the sales-call seeds: both annotators, every seed twice, edits
        generated on verification by the offline rules (no model needed)."""
        if Campaign.objects.filter(project=project, slug="demo-summedits").exists():
            return
        summedits.create_campaign(
            project=project,
            name="SummEdits sales calls (demo)",
            slug="demo-summedits",
            domain="sales_call",
            annotators=annotators,
            double_share=1.0,
            edits_per_seed=30,
        )

    def demo_ambiguity(self, project, annotators):
        """An ambiguity campaign over the MADISSE sample's sentences (their summaries have no
        summarizer name), every sentence by both annotators, for the reviewer to adjudicate."""
        if Campaign.objects.filter(project=project, slug="demo-ambiguity").exists():
            return
        plan = setup.Plan(
            name="Ambiguity (demo)",
            slug="demo-ambiguity",
            annotators=annotators,
            per_item=2,
            systems=[""],
            guidelines=setup.AMBIGUITY_GUIDELINES,
            protocol=Protocol.AMBIGUITY,
        )
        setup.create_campaign(project=project, plan=plan)

    def demo_spans(self, project, annotators):
        """A span campaign over the summaries of the Ramprasad et al. example dialogues, by both annotators."""
        if Campaign.objects.filter(project=project, slug="demo-spans").exists():
            return
        datasets = sorted(
            set(
                Item.objects.filter(campaign__project=project, campaign__slug="release-ramprasad").values_list(
                    "document__dataset", flat=True
                )
            )
        )
        plan = setup.Plan(
            name="Span-level inconsistencies (demo)",
            slug="demo-spans",
            annotators=annotators,
            per_item=2,
            datasets=datasets,
            guidelines=setup.SPANS_GUIDELINES,
            protocol=Protocol.SPANS,
        )
        setup.create_campaign(project=project, plan=plan)

    @transaction.atomic
    def demo_labels(self, project, annotators):
        """A closed pilot whose two annotators "labelled" the TofuEval sample: the release's labels
        for the first, the same with about 15% of them changed for the second. Synthetic, so that
        the agreement dashboard has something to show; said so in the guidelines."""
        campaign, created = Campaign.objects.get_or_create(
            project=project,
            slug="demo-agreement",
            defaults={
                "name": "TofuEval pilot, synthetic labels (demo)",
                "protocol": Protocol.TOFUEVAL_TASK1,
                "annotators_per_item": 2,
                "rounds": ["pilot-1", "main"],
                "status": Campaign.Status.CLOSED,
                "guidelines": "Synthetic labels made by load_demo to show the agreement dashboard.",
            },
        )
        if not created:
            return
        release = Judgment.objects.filter(
            assignment__item__campaign__project=project, assignment__item__campaign__slug="release-tofueval"
        )
        items = {}
        rng = random.Random(7)
        for n, source in enumerate(Item.objects.filter(campaign__project=project, campaign__slug="release-tofueval")):
            item = Item.objects.create(
                campaign=campaign,
                key=source.key,
                document=source.document,
                topic=source.topic,
                round="pilot-1" if n % 2 else "main",
            )
            item.summaries.set(source.summaries.all())
            items[source.pk] = item
        for position, annotator in enumerate(annotators):
            self.copy_labels(release, items, annotator, noise=0.15 * position, rng=rng)

    def copy_labels(self, release, items, annotator, *, noise, rng):
        flips = {
            "consistent": "inconsistent",
            "inconsistent": "consistent",
            "main": "marginal",
            "marginal": "irrelevant",
            "irrelevant": "main",
        }
        assignments = {
            pk: Assignment.objects.create(item=item, annotator=annotator, status=Assignment.Status.SUBMITTED)
            for pk, item in items.items()
        }
        rows = []
        for j in release.filter(dimension__in=["consistency", "topic_category"]).select_related("assignment"):
            value = flips[j.value] if rng.random() < noise else j.value
            rows.append(
                Judgment(
                    assignment=assignments[j.assignment.item_id],
                    dimension=j.dimension,
                    target=j.target,
                    summary_id=j.summary_id,
                    sentence_id=j.sentence_id,
                    value=value,
                    explanation="(synthetic)" if value == "inconsistent" else "",
                )
            )
        for pk, item in items.items():
            for summary in item.summaries.all():
                base = 2 + len(summary.text) % 4
                value = min(5, max(1, base + (rng.choice([-1, 1]) if rng.random() < noise else 0)))
                rows.append(
                    Judgment(
                        assignment=assignments[pk],
                        dimension="relevance",
                        summary=summary,
                        target=Judgment.make_target(summary=summary),
                        value=value,
                    )
                )
        Judgment.objects.bulk_create(rows)
        protocols.labels_changed(campaign_ids={item.campaign_id for item in items.values()})
