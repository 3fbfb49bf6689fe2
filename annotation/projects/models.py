import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_pseudonym_prefix() -> str:
    return secrets.token_hex(3)


class Project(models.Model):
    """A body of data and a team. Everything else is scoped by a project."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    pseudonym_prefix = models.CharField(
        max_length=12,
        default=new_pseudonym_prefix,
        help_text="Qualifies members' pseudonyms in exports (prefix:A1), so that a file from another "
        "project never attributes labels to this project's people.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    REVIEWER = "reviewer", "Reviewer"
    LEAD = "lead", "Lead"
    VIEWER = "viewer", "Viewer"


class MembershipQuerySet(models.QuerySet):
    def people(self):
        """Members who log in, as opposed to pseudonymous imported annotators."""
        return self.filter(is_external=False)


class Membership(models.Model):
    """A user's role in a project, and the pseudonym their labels carry in exports.

    External memberships stand for annotators whose labels were imported (a release, or
    another platform's export): their user cannot log in.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    pseudonym = models.CharField(max_length=64)
    is_external = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        ordering = ["project", "pseudonym"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_once_per_project"),
            models.UniqueConstraint(fields=["project", "pseudonym"], name="membership_pseudonym_unique"),
            models.CheckConstraint(condition=~Q(pseudonym=""), name="membership_pseudonym_set"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"

    def can_manage(self) -> bool:
        return self.role == Role.LEAD

    def can_browse_corpus(self) -> bool:
        return self.role in {Role.LEAD, Role.REVIEWER}

    def can_review(self) -> bool:
        """Expert review, its second check and error typing (TofuEval App. F.4, G)."""
        return self.role in {Role.LEAD, Role.REVIEWER} and not self.is_external

    def can_export(self) -> bool:
        return self.role in {Role.LEAD, Role.VIEWER}

    def can_read_dashboards(self) -> bool:
        return self.role in {Role.LEAD, Role.VIEWER}

    def can_see_systems(self) -> bool:
        """Summarizer names and LLM provenance: never for annotators and reviewers (blind review)."""
        return self.role in {Role.LEAD, Role.VIEWER}

    def exported_pseudonym(self) -> str:
        """How the member's labels are signed in exports: people qualified by the project's
        prefix, imported stand-ins as they came."""
        return self.pseudonym if self.is_external else f"{self.project.pseudonym_prefix}:{self.pseudonym}"
