import hashlib
import re

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from annotation.projects.models import Membership, Project, Role

RELEASE_PSEUDONYM = "release"


def projects_for(user):
    """The projects a user may see at all: everything else is a 404 for them."""
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(memberships__user=user, memberships__is_external=False).distinct()


def membership_for(*, user, project: Project) -> Membership | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(user=user, project=project, is_external=False).first()


def next_pseudonym(project: Project) -> str:
    numbers = [
        int(p[1:]) for p in project.memberships.filter(pseudonym__regex=r"^A\d+$").values_list("pseudonym", flat=True)
    ]
    return f"A{max(numbers, default=0) + 1}"


@transaction.atomic
def add_member(*, project: Project, user, role: str) -> Membership:
    """Give a person a role in a project (or change it); their labels export as a pseudonym A<n>."""
    if role not in Role.values:
        raise ValidationError(f"Unknown role {role!r}.")
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        return Membership.objects.create(project=project, user=user, role=role, pseudonym=next_pseudonym(project))
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


def pseudonym_conflict(*, project: Project, pseudonym: str) -> bool:
    """A bare pseudonym in a file that a person of the project already carries: importing it
    would attribute someone else's labels to them, so the import must rename it."""
    return Membership.objects.filter(project=project, pseudonym=pseudonym, is_external=False).exists()


def annotator_for(*, project: Project, pseudonym: str):
    """The user whose labels a file signs with `pseudonym`, in this project.

    `<prefix>:A1` with this project's prefix is the project's own member A1 (its own export
    coming back); anything else is an imported, non-login stand-in, created once.
    """
    own, _, local = pseudonym.partition(":")
    if own == project.pseudonym_prefix and local:
        member = Membership.objects.filter(project=project, pseudonym=local, is_external=False).first()
        if member:
            return member.user
    membership = Membership.objects.filter(project=project, pseudonym=pseudonym, is_external=True).first()
    if membership:
        return membership.user
    if pseudonym_conflict(project=project, pseudonym=pseudonym):
        raise ValidationError(f"Pseudonym {pseudonym!r} belongs to a member of {project.slug}.")
    User = get_user_model()
    safe = re.sub(r"[^\w.@+-]", "_", pseudonym)[:60]
    digest = hashlib.sha1(pseudonym.encode(), usedforsecurity=False).hexdigest()[:6]
    username = f"ext-{project.pk}-{safe}-{digest}"
    user = User.objects.filter(username=username).first()
    if user is None:
        user = User(username=username, is_active=False)
        user.set_unusable_password()
        user.save()
    Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR, pseudonym=pseudonym, is_external=True)
    return user


def members(project: Project):
    return project.memberships.select_related("user").order_by("is_external", "role", "pseudonym")


def visible_to(user, queryset, project_field: str = "project"):
    """Scope any queryset to the projects the user belongs to."""
    return queryset.filter(Q(**{f"{project_field}__in": projects_for(user)}))
