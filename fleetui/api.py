"""The API root: one index of every app's endpoints (each app's router has no root of its own)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from inventory.api.urls import app_name as inventory_namespace
from inventory.api.urls import router as inventory_router
from placement.api.urls import app_name as placement_namespace
from placement.api.urls import router as placement_router
from placement.rollouts.api.urls import app_name as rollouts_namespace
from placement.rollouts.api.urls import router as rollouts_router

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
