from django.utils.functional import SimpleLazyObject


def navigation(request) -> dict:
    """The signed-in user's projects for the navigation bar (queried only when a page shows it)."""

    def memberships():
        if not request.user.is_authenticated:
            return []
        return list(request.user.memberships.people().select_related("project").order_by("project__name"))

    return {"nav_memberships": SimpleLazyObject(memberships)}
