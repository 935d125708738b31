"""The requests views see (through django-htmx, signed in), and the user a write acts for."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxRequest(HttpRequest):
    """Any request of the site: django-htmx's middleware tells whether htmx sent it (`request.htmx`)."""

    htmx: HtmxDetails


class SignedInRequest(HtmxRequest):
    """The request of a `login_required` view: its user is signed in, never anonymous."""

    user: User


def signed_in(user: AbstractBaseUser | AnonymousUser) -> AbstractBaseUser:
    """The user of a request that authentication let through (the admin, a login_required page, the API
    with IsAuthenticated), as the writers take their actor; an anonymous one is refused."""
    if isinstance(user, AnonymousUser):
        raise PermissionDenied
    return user
