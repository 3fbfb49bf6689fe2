"""The one guard of every project-scoped page: slug -> project and the user's membership.

A non-member (and an imported, external membership) gets 404, never 403: whether a project
exists is itself not shown to outsiders. A member whose role lacks the permission gets 404 too,
so the answer never depends on what the URL points at.
"""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404

from annotation.projects.models import Membership


def project_view(allow: Callable[[Membership], bool] | None = None):
    """Call the view as view(request, project, membership, **kwargs) for members who pass `allow`.

    `allow` is a Membership method such as Membership.can_manage; None lets every member in.
    """

    def decorator(view):
        @wraps(view)
        @login_required
        def wrapper(request, slug, *args, **kwargs):
            memberships = Membership.objects.select_related("project").filter(is_external=False)
            membership = get_object_or_404(memberships, project__slug=slug, user=request.user)
            if allow is not None and not allow(membership):
                raise Http404("No such page in this project.")
            return view(request, membership.project, membership, *args, **kwargs)

        return wrapper

    return decorator
