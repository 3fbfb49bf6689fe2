"""Invitations: the only way into the platform (open sign-up stays closed)."""

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from annotation.accounts.models import INVITATION_LIFETIME, Invitation
from annotation.projects import services as projects
from annotation.projects.models import Membership, Project, Role

# Where links in e-mails point when there is no request to take the host from (commands, tasks).
DEFAULT_SITE_URL = "http://localhost:8000"


def normalize_email(email: str) -> str:
    email = (email or "").strip()
    validate_email(email)
    local, _, domain = email.rpartition("@")
    return f"{local}@{domain.lower()}"


def users_with_email(email: str):
    """Accounts owning an e-mail address, by their user row or an allauth EmailAddress."""
    User = get_user_model()
    owners = EmailAddress.objects.filter(email__iexact=email).values("user_id")
    return User.objects.filter(Q(email__iexact=email) | Q(pk__in=owners))


def accept_url(invitation: Invitation, request=None) -> str:
    path = reverse("accounts:accept", args=[invitation.token])
    if request is not None:
        return request.build_absolute_uri(path)
    return getattr(settings, "SITE_URL", DEFAULT_SITE_URL).rstrip("/") + path


@transaction.atomic
def invite(*, project: Project, email: str, role: str, invited_by, request=None) -> Invitation:
    """Invite a person by e-mail to a project with a role; the mail carries the accept link.

    Refuses an address that already belongs to a member, so a role is changed, not re-invited.
    """
    email = normalize_email(email)
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    if Membership.objects.filter(project=project, is_external=False, user__in=users_with_email(email)).exists():
        raise ValidationError({"email": f"{email} already belongs to a member of {project.name}."})
    invitation = Invitation.objects.create(
        project=project, email=email, role=role, invited_by=invited_by, expires_at=timezone.now() + INVITATION_LIFETIME
    )
    send_mail(
        subject=f"Invitation to {project.name} on Attest",
        message=invitation_text(invitation, accept_url(invitation, request)),
        from_email=None,
        recipient_list=[email],
    )
    return invitation


def invitation_text(invitation: Invitation, link: str) -> str:
    inviter = invitation.invited_by.get_full_name() or invitation.invited_by.get_username()
    return (
        f"{inviter} invites you to join the project {invitation.project.name} as {invitation.get_role_display()}.\n\n"
        f"Open this link to accept and choose your user name and password:\n{link}\n\n"
        f"The link works once and expires on {invitation.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )


@transaction.atomic
def accept_invitation(*, invitation: Invitation, username: str = "", password: str = "", user=None):
    """Turn an invitation into a membership; with no `user`, first create the account.

    `user` is a signed-in person whose e-mail is the invited one: they just join. The invitation
    row is locked, so two clicks on the same link cannot both succeed.
    """
    invitation = Invitation.objects.select_for_update().select_related("project").get(pk=invitation.pk)
    if not invitation.is_usable():
        raise ValidationError("This invitation has expired or was already used.")
    if user is None:
        user = create_invited_user(email=invitation.email, username=username, password=password)
    elif not users_with_email(invitation.email).filter(pk=user.pk).exists():
        raise ValidationError(f"This invitation is for {invitation.email}, not for your account.")
    projects.add_member(project=invitation.project, user=user, role=invitation.role)
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return user


def create_invited_user(*, email: str, username: str, password: str):
    User = get_user_model()
    if users_with_email(email).exists():
        raise ValidationError("An account with this e-mail address exists already: sign in, then open the link again.")
    if User.objects.filter(username__iexact=username).exists():
        raise ValidationError({"username": "This user name is taken; choose another."})
    candidate = User(username=username, email=email)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as error:
        raise ValidationError({"password": error.messages}) from error
    user = User.objects.create_user(username=username, email=email, password=password)
    EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
    return user
