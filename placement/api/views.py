"""Placements CRUD through the placement service, what-if, decisions, history, and the Argo CD ConfigMap.

Hub-owned placements are read-only mirrors (403 with the reason); writes need staff or the Django
model permissions and are recorded in the placement's history with the actor and logged.
"""

import logging
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import exceptions, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from inventory.api.views import InventoryPagination
from inventory.models import Hub
from placement import queries, service, whatif
from placement.api import serializers as api
from placement.argocd import argocd_configmap
from placement.filtersets import PlacementFilterSet
from placement.models import Placement
from placement.scheduler.errors import ManifestError
from placement.summary import FLEET_CRP

logger = logging.getLogger(__name__)

NON_FIELD = "non_field_errors"


def manifest_error(exc: ManifestError) -> exceptions.ValidationError:
    """A scheduler-parser rejection as a 400 naming the field."""
    return exceptions.ValidationError({exc.field or NON_FIELD: [exc.message]})


def service_error(exc: ValidationError) -> exceptions.ValidationError:
    detail = exc.message_dict if hasattr(exc, "error_dict") else {NON_FIELD: exc.messages}
    return exceptions.ValidationError(detail)


class PlacementPermission(BasePermission):
    """Reads for every signed-in user; writes for staff or `placement.add/change/delete_placement`."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if view.action == "create" and not service.can_change(request.user, adding=True):
            raise exceptions.PermissionDenied("creating placements needs staff or placement.add_placement")
        return True

    def has_object_permission(self, request: Request, view: Any, placement: Placement) -> bool:
        if view.action not in ("update", "partial_update", "destroy"):
            return True
        if placement.read_only:
            raise exceptions.PermissionDenied(
                f"{placement} is a read-only mirror of hub {placement.hub.name}; change it on the hub"
            )
        if not service.can_change(request.user):
            raise exceptions.PermissionDenied("changing placements needs staff or placement.change_placement")
        return True


class PlacementViewSet(viewsets.ModelViewSet):
    """OCM Placements and Fleet ClusterResourcePlacements, filtered by the page's FilterSet."""

    queryset = queries.for_list(Placement.objects.for_listing())
    filterset_class = PlacementFilterSet
    pagination_class = InventoryPagination
    permission_classes = [IsAuthenticated, PlacementPermission]

    def get_serializer_class(self) -> type[api.PlacementSerializer]:
        return api.PlacementDetailSerializer if self.action == "retrieve" else api.PlacementSerializer

    def get_queryset(self) -> Any:
        queryset = super().get_queryset()
        # the detail view shows the explanation the list leaves out
        return queryset.defer(None).defer("annotations") if self.action == "retrieve" else queryset

    def perform_create(self, serializer: api.PlacementSerializer) -> None:
        data = serializer.validated_data
        try:
            placement = service.create_placement(
                kind=data["kind"], hub=data["hub"], namespace=data.get("namespace", ""), name=data["name"],
                spec=data["spec"], actor=self.request.user,
            )
        except ValidationError as exc:
            raise service_error(exc) from exc
        logger.info("placement %s (%s) created on hub %s by %s", placement, placement.kind,
                    placement.hub.name, self.request.user.get_username())
        serializer.instance = self.get_queryset().get(pk=placement.pk)

    def perform_update(self, serializer: api.PlacementSerializer) -> None:
        placement = serializer.instance
        spec = serializer.validated_data.get("spec", placement.spec)
        try:
            service.apply_spec(placement, spec, actor=self.request.user)
        except ValidationError as exc:
            raise service_error(exc) from exc
        logger.info("placement %s spec applied by %s", placement, self.request.user.get_username())
        serializer.instance = self.get_queryset().get(pk=placement.pk)

    def perform_destroy(self, placement: Placement) -> None:
        with transaction.atomic():
            # a dashboard placement's own decisions and bindings go with it; hub mirrors are not ours
            queries.decision_pages(placement).delete()
            queries.bindings(placement).delete()
            placement.delete()
        logger.info("placement %s deleted by %s", placement, self.request.user.get_username())

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={200: OpenApiTypes.OBJECT},
        parameters=[OpenApiParameter("limit", int, description="ranked clusters to return (default 50)")],
    )
    @action(detail=True, methods=["post"])
    def whatif(self, request: Request, pk: str | None = None) -> Response:
        """Re-run the scheduler with a partial spec override merged onto the stored spec; nothing is saved."""
        placement = self.get_object()
        limit = _limit(request)
        try:
            return Response(whatif.preview(placement, request.data, limit=limit))
        except ManifestError as exc:
            raise manifest_error(exc) from exc

    @extend_schema(responses={200: api.PlacementDecisionSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def decisions(self, request: Request, pk: str | None = None) -> Response:
        """OCM: the PlacementDecision pages; Fleet: the ClusterResourceBindings with their state."""
        placement = self.get_object()
        if placement.kind == FLEET_CRP:
            rows, serializer = queries.bindings(placement), api.ClusterResourceBindingSerializer
        else:
            rows, serializer = queries.decision_pages(placement), api.PlacementDecisionSerializer
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(serializer(page, many=True).data)

    @extend_schema(responses={200: api.DecisionChangeSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def history(self, request: Request, pk: str | None = None) -> Response:
        """Every change of the selected clusters or the spec, newest first, with trigger and actor."""
        page = self.paginate_queryset(self.get_object().history.select_related("actor"))
        return self.get_paginated_response(api.DecisionChangeSerializer(page, many=True).data)


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
        hub = get_object_or_404(Hub, pk=pk)
        body = yaml.safe_dump(argocd_configmap(hub), sort_keys=False)
        response = HttpResponse(body, content_type="application/yaml")
        response["Content-Disposition"] = f'attachment; filename="argocd-placementdecisions-{hub.name}.yaml"'
        return response
