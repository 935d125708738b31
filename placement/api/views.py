"""Placements CRUD through the placement service, what-if, decisions, history, and the Argo CD ConfigMap.

Every list and lookup shows only what the user's cluster-set roles let them see (placement.access; others
answer 404); writes need the admin role (403 with the reason). Hub-owned placements are read-only
mirrors (403 with the reason); writes are recorded in the placement's history and the audit log.
"""

import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import yaml
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, mixins, viewsets
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
from placement import access, approvals, queries, rolling, rollouts, service, whatif
from placement.api import serializers as api
from placement.argocd import argocd_configmap
from placement.filtersets import (
    ApprovalRequestFilterSet,
    PlacementFilterSet,
    StagedUpdateRunFilterSet,
    StagedUpdateStrategyFilterSet,
)
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.scheduler.errors import ManifestError

logger = logging.getLogger(__name__)

NON_FIELD = "non_field_errors"

# The serializer of each family's stored result rows (PlacementDecisions, ClusterResourceBindings).
_STORED_SERIALIZERS: dict[type[Any], type[ModelSerializer[Any]]] = {
    PlacementDecision: api.PlacementDecisionSerializer,
    ClusterResourceBinding: api.ClusterResourceBindingSerializer,
}

P = ParamSpec("P")
R = TypeVar("R")


def manifest_error(exc: ManifestError) -> exceptions.ValidationError:
    """A scheduler-parser rejection as a 400 naming the field."""
    return exceptions.ValidationError({exc.field or NON_FIELD: [exc.message]})


def service_error(exc: ValidationError) -> exceptions.ValidationError:
    detail = exc.message_dict if hasattr(exc, "error_dict") else {NON_FIELD: exc.messages}
    return exceptions.ValidationError(detail)


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
        if placement.read_only:
            raise exceptions.PermissionDenied(
                f"{placement} is a read-only mirror of hub {placement.hub.name}; change it on the hub"
            )
        _through_service(
            access.authorise,
            signed_in(request.user),
            lambda user: access.can_change(user, placement),
            access.CHANGE_DENIED,
            action=self.WRITES[view.action],
            target=placement,
            request=request,
        )
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
        placement = _through_service(
            service.create_placement,
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
        _through_service(service.apply_spec, placement, spec, actor=actor, request=self.request)
        logger.info("placement %s spec applied by %s", placement, self.request.user.get_username())
        serializer.instance = self.get_queryset().get(pk=placement.pk)

    def perform_destroy(self, placement: Placement) -> None:
        _through_service(
            service.delete_placement, placement, actor=signed_in(self.request.user), request=self.request
        )

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


class HubFailed(exceptions.APIException):
    """The hub could not be read or written: 502 with its message; nothing was approved."""

    status_code = 502
    default_code = "hub_failed"


class ApprovalRequestViewSet(viewsets.ReadOnlyModelViewSet[ApprovalRequest]):
    """Approval requests of staged update runs (hub- and dashboard-owned); without `state`, the open ones.

    `POST .../approve/` approves one: 200 with the new state (approving twice is a 200 no-op), 403 when
    the user may not approve, 502 with the hub's message when the hub fails.
    """

    filterset_class = ApprovalRequestFilterSet
    pagination_class = InventoryPagination
    serializer_class = api.ApprovalRequestSerializer

    def get_queryset(self) -> QuerySet[ApprovalRequest]:
        return approvals.visible_requests(self.request.user)

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("many") and args:
            # who may approve which is decided for the whole page in two queries, not one per row
            rows = list(args[0])
            approvable = approvals.approvable(self.request.user, rows)
            context = {**self.get_serializer_context(), "approvable": approvable}
            return super().get_serializer(rows, *args[1:], **{**kwargs, "context": context})
        return super().get_serializer(*args, **kwargs)

    @extend_schema(request=None, responses={200: api.ApprovalResultSerializer})
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str | None = None) -> Response:
        """Approve: on the hub (status subresource, Approved=True at the current generation) or, for a
        dashboard-owned run, in the database; audited either way."""
        row: ApprovalRequest = self.get_object()
        try:
            result = approvals.approve(row, signed_in(request.user), http_request=request)
        except PermissionDenied as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc
        except approvals.ApprovalFailed as exc:
            raise HubFailed(str(exc)) from exc
        return Response(api.ApprovalResultSerializer(result, context=self.get_serializer_context()).data)


# --- staged update strategies and runs (placement.rollouts) ----------------------------------------


def _through_service(call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """A rollouts call with its refusals as API errors: 403 with the reason, 400 naming the field."""
    try:
        return call(*args, **kwargs)
    except PermissionDenied as exc:
        raise exceptions.PermissionDenied(str(exc)) from exc
    except ValidationError as exc:
        raise service_error(exc) from exc


class StagedUpdateStrategyViewSet(
    mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet[StagedUpdateStrategy]
):
    """ClusterStagedUpdateStrategies (hub- and dashboard-owned). Creating one makes it dashboard-owned,
    checked with the CRD's rules (400 naming the field) and audited; it needs the admin role on a
    populated cluster set of its hub (403)."""

    queryset = StagedUpdateStrategy.objects.select_related("hub").order_by("hub__name", "name", "pk")
    filterset_class = StagedUpdateStrategyFilterSet
    pagination_class = InventoryPagination
    serializer_class = api.StagedUpdateStrategySerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self) -> QuerySet[StagedUpdateStrategy]:
        return access.visible(super().get_queryset(), self.request.user)

    def perform_create(self, serializer: BaseSerializer[StagedUpdateStrategy]) -> None:
        data = {key: serializer.validated_data[key] for key in ("hub", "name", "spec")}
        serializer.instance = _through_service(
            rollouts.create_strategy, **data, actor=signed_in(self.request.user), request=self.request
        )


class StagedUpdateRunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet[StagedUpdateRun]):
    """ClusterStagedUpdateRuns (hub- and dashboard-owned). Creating one makes a dashboard-owned run of a
    dashboard-owned External CRP (400 naming the field otherwise), queued for its first step.
    `POST .../state/` {"state": "Run"|"Stop"|"Initialize"}: 200 with the run, 400 for a state or
    transition the CRD refuses, 403 without the permission or for a hub-owned run. `POST .../resume/`:
    the run's step now (200 with the run, 403 as for the state)."""

    queryset = rollouts.with_pending_approvals(StagedUpdateRun.objects.order_by("hub__name", "name", "pk"))
    filterset_class = StagedUpdateRunFilterSet
    pagination_class = InventoryPagination
    permission_classes = [IsAuthenticated]

    def get_queryset(self) -> QuerySet[StagedUpdateRun]:
        return access.visible(super().get_queryset(), self.request.user)

    def get_serializer_class(self) -> type[api.StagedUpdateRunSerializer]:
        if self.action == "list":
            return api.StagedUpdateRunSerializer
        return api.StagedUpdateRunDetailSerializer

    def perform_create(self, serializer: BaseSerializer[StagedUpdateRun]) -> None:
        data = {key: serializer.validated_data[key] for key in ("hub", "name", "spec")}
        run = _through_service(
            rollouts.create_run, **data, actor=signed_in(self.request.user), request=self.request
        )
        serializer.instance = self.get_queryset().get(pk=run.pk)

    @extend_schema(request=api.RunStateSerializer, responses={200: api.StagedUpdateRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def state(self, request: Request, pk: str | None = None) -> Response:
        """Set the run's spec.state, as `kubectl patch` would; audited."""
        run = self.get_object()
        body = api.RunStateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        state = body.validated_data["state"]
        _through_service(rollouts.set_run_state, run, state, signed_in(request.user), request=request)
        return Response(self.get_serializer(self.get_queryset().get(pk=run.pk)).data)

    @extend_schema(request=None, responses={200: api.StagedUpdateRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Step a stuck dashboard-owned run now (its failed attempts forgotten); audited."""
        run = self.get_object()
        _through_service(rollouts.resume_run, run, signed_in(request.user), request=request)
        return Response(self.get_serializer(self.get_queryset().get(pk=run.pk)).data)


# --- rolling updates (placement.rolling) and OCM rollout previews (placement.rollout_preview) -----------


def _visible_placement(request: Request, pk: int) -> Placement:
    return get_object_or_404(access.visible(Placement.objects.select_related("hub"), request.user), pk=pk)


class PlacementRolloutView(APIView):
    """GET: the placement's rollout. POST: roll out a new resource snapshot of a dashboard-owned CRP
    (admins of a populated set of its hub; audited): 200 with the rollout after its first round, 403 for
    hub mirrors or without the role, 404 for placements the user cannot see, 400 for OCM Placements."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, pk: int) -> Response:
        return Response(rolling.describe(_visible_placement(request, pk)))

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: int) -> Response:
        placement = _visible_placement(request, pk)
        _through_service(
            rolling.roll_out_new_snapshot, placement, actor=signed_in(request.user), request=request
        )
        placement.refresh_from_db()
        return Response(rolling.describe(placement))
