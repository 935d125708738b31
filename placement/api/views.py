"""Placements CRUD through the placement service, what-if, decisions, history, and the Argo CD ConfigMap.

Every list and lookup shows only what the user's cluster-set roles let them see (placement.access; others
answer 404); writes need the admin role (403 with the reason). Hub-owned placements are read-only
mirrors (403 with the reason); writes are recorded in the placement's history and the audit log.
"""

import logging
from typing import Any

import yaml
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer, ModelSerializer
from rest_framework.views import APIView

from core.requests import signed_in
from inventory import roles
from inventory.api.views import InventoryPagination
from inventory.models import Hub
from placement import access, queries, service, whatif
from placement.api import serializers as api
from placement.argocd import argocd_configmap
from placement.filtersets import PlacementFilterSet
from placement.models import ClusterResourceBinding, Placement, PlacementDecision

logger = logging.getLogger(__name__)

# The serializer of each family's stored result rows (PlacementDecisions, ClusterResourceBindings).
_STORED_SERIALIZERS: dict[type[Any], type[ModelSerializer[Any]]] = {
    PlacementDecision: api.PlacementDecisionSerializer,
    ClusterResourceBinding: api.ClusterResourceBindingSerializer,
}


class PlacementPermission(BasePermission):
    """Reads of the placements the roles show (the queryset); writes for admins of their sets
    (placement.access), refused before the body is read so a refused user learns nothing from it."""

    WRITES = {
        "update": service.SPEC_ACTION,
        "partial_update": service.SPEC_ACTION,
        "destroy": service.DELETE_ACTION,
    }

    def has_permission(self, request: Request, view: Any) -> bool:
        if view.action == "create" and not access.administers_any(request.user):
            raise exceptions.PermissionDenied(access.ADMIN_NEEDED)
        return True

    def has_object_permission(self, request: Request, view: Any, placement: Placement) -> bool:
        if view.action not in self.WRITES:
            return True
        access.authorise_change(signed_in(request.user), placement, self.WRITES[view.action], request=request)
        return True


class PlacementViewSet(viewsets.ModelViewSet[Placement]):
    """OCM Placements and Fleet ClusterResourcePlacements, filtered by the page's FilterSet."""

    queryset = queries.for_list(Placement.objects.for_listing())
    filterset_class = PlacementFilterSet
    pagination_class = InventoryPagination
    permission_classes = [IsAuthenticated, PlacementPermission]

    def get_serializer_class(self) -> type[api.PlacementSerializer]:
        return api.PlacementDetailSerializer if self.action == "retrieve" else api.PlacementSerializer

    def get_queryset(self) -> QuerySet[Placement]:
        queryset = access.visible(super().get_queryset(), self.request.user)
        # the detail view shows the explanation the list leaves out
        return queryset.defer(None).defer("annotations") if self.action == "retrieve" else queryset

    def perform_create(self, serializer: BaseSerializer[Placement]) -> None:
        data = serializer.validated_data
        placement = service.create_placement(
            kind=data["kind"],
            hub=data["hub"],
            namespace=data.get("namespace", ""),
            name=data["name"],
            spec=data["spec"],
            actor=signed_in(self.request.user),
            request=self.request,
        )
        logger.info(
            "placement %s (%s) created on hub %s by %s",
            placement,
            placement.kind,
            placement.hub.name,
            self.request.user.get_username(),
        )
        serializer.instance = self.get_queryset().get(pk=placement.pk)

    def perform_update(self, serializer: BaseSerializer[Placement]) -> None:
        placement = serializer.instance
        assert placement is not None  # `update` made the serializer on the placement it changes
        spec = serializer.validated_data.get("spec", placement.spec)
        actor = signed_in(self.request.user)
        service.apply_spec(placement, spec, actor=actor, request=self.request)
        logger.info("placement %s spec applied by %s", placement, self.request.user.get_username())
        serializer.instance = self.get_queryset().get(pk=placement.pk)

    def perform_destroy(self, placement: Placement) -> None:
        service.delete_placement(placement, actor=signed_in(self.request.user), request=self.request)

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT},
        parameters=[OpenApiParameter("limit", int, description="ranked clusters to return (default 50)")],
    )
    @action(detail=True, methods=["post"])
    def whatif(self, request: Request, pk: str | None = None) -> Response:
        """Re-run the scheduler with a partial spec override merged onto the stored spec; nothing is saved."""
        # what-if reads the placement's spec, labels, status and hub: none of the list's counts, nor the
        # stored explanation and record, which grow with the fleet; nor do the list's filters narrow a
        # placement named by its id
        lean = Placement.objects.select_related("hub").defer("explanation", "cluster_record")
        placement = access.visible_one(lean, request.user, pk)
        self.check_object_permissions(request, placement)
        limit = _limit(request)
        return Response(whatif.preview(placement, request.data, limit=limit))

    @extend_schema(responses={200: api.PlacementDecisionSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def decisions(self, request: Request, pk: str | None = None) -> Response:
        """OCM: the PlacementDecision pages; Fleet: the ClusterResourceBindings with their state."""
        placement = self.get_object()
        rows = placement.family.stored_objects(placement)
        return self._paged(rows, _STORED_SERIALIZERS[rows.model])

    @extend_schema(responses={200: api.DecisionChangeSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def history(self, request: Request, pk: str | None = None) -> Response:
        """Every change of the selected clusters or the spec, newest first, with trigger and actor."""
        return self._paged(self.get_object().history.select_related("actor"), api.DecisionChangeSerializer)

    def _paged(self, rows: QuerySet[Any], serializer: type[ModelSerializer[Any]]) -> Response:
        """A page of rows of another model than placements: DRF pages any queryset (its stub only
        the viewset's model, hence Any)."""
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(serializer(page, many=True).data)


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", whatif.DEFAULT_LIMIT)
    try:
        limit = int(raw)
    except (TypeError, ValueError):
        raise exceptions.ValidationError({"limit": [f"must be an integer, not {raw!r}"]}) from None
    if not 1 <= limit <= whatif.MAX_LIMIT:
        raise exceptions.ValidationError({"limit": [f"must be between 1 and {whatif.MAX_LIMIT}"]})
    return limit


class ArgoCdConfigMapView(APIView):
    """The Argo CD ConfigMap that reads this hub's published PlacementDecisions, as a YAML download."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={(200, "application/yaml"): OpenApiTypes.STR})
    def get(self, request: Request, pk: int) -> HttpResponse:
        # only for whoever holds a role on the hub: it names the hub's publish namespace
        hub = get_object_or_404(roles.restrict(Hub.objects.all(), request.user), pk=pk)
        body = yaml.safe_dump(argocd_configmap(hub), sort_keys=False)
        response = HttpResponse(body, content_type="application/yaml")
        response["Content-Disposition"] = f'attachment; filename="argocd-placementdecisions-{hub.name}.yaml"'
        return response
