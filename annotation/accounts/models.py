import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.projects.models import Project, Role

INVITATION_LIFETIME = timedelta(days=14)


def new_token() -> str:
    return secrets.token_urlsafe(32)


class InvitationQuerySet(models.QuerySet):
    def usable(self):
        return self.filter(accepted_at__isnull=True, expires_at__gt=timezone.now())


class Invitation(models.Model):
    """A lead's e-mailed invitation to join a project with a role: the only way to sign up."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    token = models.CharField(max_length=64, unique=True, default=new_token)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.project} as {self.role}"

    def is_usable(self) -> bool:
        return self.accepted_at is None and self.expires_at > timezone.now()
