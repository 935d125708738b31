"""Site-wide pages: the home page, the health check, and the login lockout page."""

from typing import Any

from axes.helpers import get_client_username, get_cool_off
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.views.decorators.http import require_GET

from fleetui.overview import overview


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """What needs attention among what the user's roles show, and the last sync of each hub."""
    return render(request, "home.html", {"overview": overview(request.user)})


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers, docker healthchecks and `make up`: the site answers and reaches its
    database. No login, no data beyond ok/error."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return JsonResponse({"status": "error", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok"})


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """django-axes' answer to a login during a lockout (the login page's and the admin's): a page that
    says why and for how long, with 429."""
    now = timezone.now()
    context = {
        "username": get_client_username(request, credentials) or "",
        "cooloff": timeuntil(now + get_cool_off(request), now),
    }
    return render(request, "registration/locked_out.html", context, status=settings.AXES_HTTP_RESPONSE_CODE)
