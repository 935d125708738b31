"""Read-only viewsets over the inventory FilterSets, plus "sync now" for staff and the local docs UI."""

from typing import Any

from django.templatetags.static import static
from django.utils import timezone
from drf_spectacular.utils import extend_schema, inline_serializer
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from fleetui import listing
from inventory import filtersets, queries
from inventory.api import serializers as api
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    SyncRun,
)
from inventory.tasks import request_sync


class InventoryPagination(PageNumberPagination):
    page_size = listing.PER_PAGE
    page_size_query_param = "per_page"
    max_page_size = listing.MAX_PER_PAGE


class PageExtrasMixin:
    """Lookups a serializer needs for its rows (counts, roll-ups), made once per page, not per row."""

    def page_extras(self, rows: list[Any]) -> dict[str, Any]:
        return {}

    def get_serializer(self, *args: Any, **kwargs: Any) -> serializers.BaseSerializer:
        if args:
            rows = list(args[0]) if kwargs.get("many") else [args[0]]
            kwargs["context"] = self.get_serializer_context() | self.page_extras(rows)
        return super().get_serializer(*args, **kwargs)


class InventoryViewSet(PageExtrasMixin, viewsets.ReadOnlyModelViewSet):
    pagination_class = InventoryPagination


class HubViewSet(InventoryViewSet):
    """Hubs with their sync state; credentials are never returned."""

    queryset = queries.with_hub_counts(Hub.objects.all())
    serializer_class = api.HubSerializer
    filterset_class = filtersets.HubFilterSet

    def page_extras(self, rows: list[Hub]) -> dict[str, Any]:
        return {"latest_runs": queries.latest_runs(rows)}

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer(
                "SyncAccepted",
                {
                    "hub": serializers.CharField(),
                    "status": serializers.CharField(),
                    "latest_run": api.SyncRunSerializer(allow_null=True),
                },
            )
        },
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAdminUser])
    def sync(self, request: Request, pk: str | None = None) -> Response:
        """Sync now (staff only): the run is queued, or done already when tasks run in-process."""
        hub = self.get_object()
        request_sync(hub, actor=f"{request.user.get_username()} (API)")
        run = SyncRun.objects.filter(hub=hub).first()
        body = {
            "hub": hub.name,
            "status": "accepted",
            "latest_run": None if run is None else api.SyncRunSerializer(run).data,
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)


class ClusterViewSet(InventoryViewSet):
    """OCM ManagedClusters and Fleet MemberClusters; `q` takes a kubectl label selector."""

    queryset = queries.with_cluster_sets(ManagedCluster.objects.for_listing())
    serializer_class = api.ClusterSerializer
    filterset_class = filtersets.ClusterFilterSet

    def page_extras(self, rows: list[ManagedCluster]) -> dict[str, Any]:
        return {"placement_counts": queries.placement_counts(rows)}


class ClusterSetViewSet(InventoryViewSet):
    """ManagedClusterSets with member counts per availability and their bound namespaces."""

    queryset = queries.with_member_rollup(ManagedClusterSet.objects.order_by("name", "hub__name", "pk"))
    serializer_class = api.ClusterSetSerializer
    filterset_class = filtersets.ClusterSetFilterSet

    def page_extras(self, rows: list[ManagedClusterSet]) -> dict[str, Any]:
        return {
            "bound_namespaces": queries.bound_namespaces(rows),
            "selectors": {row.pk: queries.selector_text(row) for row in rows},
        }


class ClusterSetBindingViewSet(InventoryViewSet):
    queryset = ManagedClusterSetBinding.objects.select_related("hub").order_by(
        "hub__name", "namespace", "name"
    )
    serializer_class = api.ClusterSetBindingSerializer
    filterset_class = filtersets.ClusterSetBindingFilterSet


class AddOnPlacementScoreViewSet(InventoryViewSet):
    queryset = AddOnPlacementScore.objects.select_related("hub").order_by("hub__name", "namespace", "name")
    serializer_class = api.AddOnPlacementScoreSerializer
    filterset_class = filtersets.AddOnPlacementScoreFilterSet

    def page_extras(self, rows: list[AddOnPlacementScore]) -> dict[str, Any]:
        return {"now": timezone.now()}


class SyncRunViewSet(InventoryViewSet):
    queryset = SyncRun.objects.select_related("hub").order_by("-started_at", "-pk")
    serializer_class = api.SyncRunSerializer
    filterset_class = filtersets.SyncRunFilterSet


class ApiDocsView(SpectacularSwaggerView):
    """Swagger UI from the vendored swagger-ui-dist in static/vendor/swagger-ui (no CDN)."""

    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        return static(f"vendor/swagger-ui/{filename}")

    @staticmethod
    def _swagger_ui_favicon() -> str:
        return static("vendor/swagger-ui/favicon-32x32.png")
