"""Template context every page gets from the rollouts."""

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from placement.rollouts import approvals


def approvals_badge(request: HttpRequest) -> dict[str, object]:
    """The navigation bar's count of pending approvals: signed-in users only, counted once, and only
    when a template shows it (fragments that leave the navigation out cost no query)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"pending_approval_count": SimpleLazyObject(lambda: approvals.pending_count(user))}
