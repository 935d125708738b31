"""The rollouts' API: approval requests (and approving one), staged update strategies and runs (creating
one, setting its state, resuming it), and a placement's rollout (reading it, rolling out a new snapshot).

Lists and lookups show only what the user's cluster-set roles let them see (placement.access); writes go
through the rollouts' services, which check the permission (403 with the reason) and audit them.
"""

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from core.requests import signed_in
from inventory.api.views import InventoryPagination
from placement import access
from placement.models import ApprovalRequest, Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import approvals, rolling
from placement.rollouts import runs as rollouts
from placement.rollouts.api import serializers as api
from placement.rollouts.filtersets import (
    ApprovalRequestFilterSet,
    StagedUpdateRunFilterSet,
    StagedUpdateStrategyFilterSet,
)


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
        except approvals.ApprovalFailed as exc:
            raise HubFailed(str(exc)) from exc
        return Response(api.ApprovalResultSerializer(result, context=self.get_serializer_context()).data)


# --- staged update strategies and runs (runs) -------------------------------------------------------


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
        serializer.instance = rollouts.create_strategy(
            **data, actor=signed_in(self.request.user), request=self.request
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
        run = rollouts.create_run(**data, actor=signed_in(self.request.user), request=self.request)
        serializer.instance = self.get_queryset().get(pk=run.pk)

    @extend_schema(request=api.RunStateSerializer, responses={200: api.StagedUpdateRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def state(self, request: Request, pk: str | None = None) -> Response:
        """Set the run's spec.state, as `kubectl patch` would; audited."""
        run = self.get_object()
        body = api.RunStateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        state = body.validated_data["state"]
        rollouts.set_run_state(run, state, signed_in(request.user), request=request)
        return Response(self.get_serializer(self.get_queryset().get(pk=run.pk)).data)

    @extend_schema(request=None, responses={200: api.StagedUpdateRunDetailSerializer})
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """Step a stuck dashboard-owned run now (its failed attempts forgotten); audited."""
        run = self.get_object()
        rollouts.resume_run(run, signed_in(request.user), request=request)
        return Response(self.get_serializer(self.get_queryset().get(pk=run.pk)).data)


# --- rolling updates (rolling) and OCM rollout previews (preview) ---------------------------------------


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
        rolling.roll_out_new_snapshot(placement, actor=signed_in(request.user), request=request)
        placement.refresh_from_db()
        return Response(rolling.describe(placement))
