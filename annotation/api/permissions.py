"""Project access for the API, the same rules as the HTML side: non-members get 404."""

from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.projects import services as projects
from annotation.projects.models import Membership, Project


def project_for(request, slug: str, *, allowed=None) -> tuple[Project, Membership]:
    """The project of `slug` and the caller's membership; 404 if they are not a member, or if
    `allowed(membership)` says their role may not do this."""
    project = get_object_or_404(projects.projects_for(request.user), slug=slug)
    membership = projects.membership_for(user=request.user, project=project)
    if membership is None or (allowed is not None and not allowed(membership)):
        raise Http404("No such project.")
    return project, membership
