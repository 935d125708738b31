"""The API's site-wide parts: the root, one index of every app's endpoints (each app's router has no root
of its own), and the exception handler that turns the domain's refusals into API errors."""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, views
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.settings import api_settings

from fleetui import taskqueue
from inventory.api.urls import app_name as inventory_namespace
from inventory.api.urls import router as inventory_router
from placement.api.urls import app_name as placement_namespace
from placement.api.urls import router as placement_router
from placement.rollouts.api.urls import app_name as rollouts_namespace
from placement.rollouts.api.urls import router as rollouts_router
from placement.scheduler.errors import ManifestError

_ROUTERS = (
    (inventory_namespace, inventory_router),
    (placement_namespace, placement_router),
    (rollouts_namespace, rollouts_router),
)


@extend_schema(exclude=True)  # an index of links, not a resource
@api_view(["GET"])
def api_root(request: Request, format: str | None = None) -> Response:  # noqa: A002 - DRF's keyword
    """Links to the list endpoint of every resource."""
    links: dict[str, Any] = {}
    for namespace, router in _ROUTERS:
        for prefix, _viewset, basename in router.registry:
            links[prefix] = reverse(f"{namespace}:{basename}-list", request=request, format=format)
    return Response(links)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER. The domain (services, editors, the scheduler's parsers) refuses with
    Django's and the scheduler's exceptions, which views let through: an invalid input answers 400 naming
    the field, a refusal 403 with its reason, a broker that is down 503."""
    if isinstance(exc, taskqueue.BROKER_DOWN):
        return taskqueue.api_unavailable(context["request"], exc)
    return views.exception_handler(_as_api_error(exc), context)


def _as_api_error(exc: Exception) -> Exception:
    non_field = api_settings.NON_FIELD_ERRORS_KEY
    if isinstance(exc, ManifestError):
        return exceptions.ValidationError({exc.field or non_field: [exc.message]})
    if isinstance(exc, ValidationError):
        return exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {non_field: exc.messages}
        )
    if isinstance(exc, PermissionDenied):
        # a bare PermissionDenied keeps DRF's own sentence
        return exceptions.PermissionDenied(str(exc) or None)
    return exc
