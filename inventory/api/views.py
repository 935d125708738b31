"""Viewsets over the inventory FilterSets (read-only but for the editors: taints, set bindings), "sync now"
for staff."""

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from django.db.models import Model, QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import generics, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response

from core import listing
from core.requests import signed_in
from inventory import editing, filtersets, queries, roles
from inventory.api import serializers as api
from inventory.hubclient import HubError
from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    ClusterSetRole,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
    RejectedObject,
    SyncRun,
)
from inventory.tasks import request_sync

T = TypeVar("T")
_M = TypeVar("_M", bound=Model)
_Role = TypeVar("_Role", bound=roles.RoleRow)


# --- the editors' refusals as API errors

EDIT_ERRORS = {
    400: OpenApiResponse(description="invalid input: {field path: [reason]}"),
    403: OpenApiResponse(description="not allowed"),
    409: OpenApiResponse(description="the object changed on the hub meanwhile (it was reloaded)"),
    502: OpenApiResponse(description="the hub refused the change or could not be reached; nothing changed"),
}


class HubRefused(APIException):
    status_code: int = status.HTTP_502_BAD_GATEWAY
    default_code = "hub_refused"


class HubConflict(HubRefused):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


def _edit(call: Callable[[], T]) -> T:
    """Run an inventory.editing call: a hub refusal answers 409/502 (invalid input 400 and a refusal 403,
    as everywhere in the API: fleetui.api.exception_handler)."""
    try:
        return call()
    except HubError as exc:
        raise (HubConflict if exc.status == editing.CONFLICT else HubRefused)(str(exc)) from exc


def _taints(request: Request) -> Any:
    """The `taints` list of the body; a body without one is refused by the validation like a bad list."""
    return request.data.get("taints") if isinstance(request.data, Mapping) else request.data


class InventoryPagination(PageNumberPagination):
    page_size = listing.PER_PAGE
    page_size_query_param = "per_page"
    max_page_size = listing.MAX_PER_PAGE


class PageExtrasMixin(generics.GenericAPIView[_M]):
    """Lookups a serializer needs for its rows (counts, roll-ups), made once per page, not per row."""

    def page_extras(self, rows: list[_M]) -> dict[str, Any]:
        return {}

    def get_serializer(self, *args: Any, **kwargs: Any) -> serializers.BaseSerializer[_M]:
        if args:
            rows = list(args[0]) if kwargs.get("many") else [args[0]]
            kwargs["context"] = {**self.get_serializer_context(), **self.page_extras(rows)}
        return super().get_serializer(*args, **kwargs)


class InventoryViewSet(PageExtrasMixin[_M], viewsets.ReadOnlyModelViewSet[_M]):
    pagination_class = InventoryPagination


class RoleRestrictedViewSet(InventoryViewSet[_M]):
    """Only the rows the caller's cluster-set roles let them see (inventory.roles); other ids answer 404."""

    def get_queryset(self) -> QuerySet[_M]:
        return roles.restrict(super().get_queryset(), self.request.user)


class HubViewSet(InventoryViewSet[Hub]):
    """The hubs the caller holds a role on, with the counts of what they see; credentials are never
    returned, sync errors and runs only to superusers."""

    queryset = Hub.objects.all()
    serializer_class = api.HubSerializer
    filterset_class = filtersets.HubFilterSet

    def get_queryset(self) -> QuerySet[Hub]:
        return queries.with_hub_counts(super().get_queryset(), self.request.user)

    def page_extras(self, rows: list[Hub]) -> dict[str, Any]:
        # the page's rows come from get_queryset, so they carry with_hub_counts' annotations
        counted = cast("list[queries.HubWithCounts]", rows)
        return {
            "latest_runs": queries.latest_runs(counted),
            "operator": roles.is_superuser(self.request.user),
        }

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
        run = roles.restrict(SyncRun.objects.filter(hub=hub), request.user).first()
        body = {
            "hub": hub.name,
            "status": "accepted",
            "latest_run": None if run is None else api.SyncRunSerializer(run).data,
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)


class ClusterViewSet(RoleRestrictedViewSet[ManagedCluster]):
    """OCM ManagedClusters and Fleet MemberClusters; `q` takes a kubectl label selector."""

    queryset = ManagedCluster.objects.for_listing()
    serializer_class = api.ClusterSerializer
    filterset_class = filtersets.ClusterFilterSet

    def get_queryset(self) -> QuerySet[ManagedCluster]:
        # The cluster_sets of a row name only the sets the caller may see.
        return queries.with_cluster_sets(super().get_queryset(), roles.sets_for(self.request.user))

    def page_extras(self, rows: list[ManagedCluster]) -> dict[str, Any]:
        return {"placement_counts": queries.placement_counts(rows)}

    @extend_schema(request=api.TaintsSerializer, responses={200: api.ClusterSerializer, **EDIT_ERRORS})
    @action(detail=True, methods=["patch"])
    def taints(self, request: Request, pk: str | None = None) -> Response:
        """Replace the cluster's taints on its hub with the full list sent, then answer the refreshed row."""
        cluster = self.get_object()
        _edit(
            lambda: editing.save_taints(
                cluster, _taints(request), actor=signed_in(request.user), request=request
            )
        )
        return Response(self.get_serializer(self.get_queryset().get(pk=cluster.pk)).data)

    @extend_schema(
        request=api.TaintsSerializer,
        responses={200: api.TaintImpactSerializer(many=True), **EDIT_ERRORS},
        filters=False,
    )
    @action(detail=True, methods=["post"], url_path="taints/preview", pagination_class=None)
    def taints_preview(self, request: Request, pk: str | None = None) -> Response:
        """Which placements would keep, drop or gain the cluster with these taints; nothing is saved."""
        cluster = self.get_object()
        impacts = _edit(
            lambda: editing.preview_taints(cluster, _taints(request), actor=signed_in(request.user))
        )
        return Response(api.TaintImpactSerializer(impacts, many=True).data)


class ClusterSetViewSet(RoleRestrictedViewSet[ManagedClusterSet]):
    """ManagedClusterSets with member counts per availability and their bound namespaces."""

    queryset = queries.with_member_rollup(ManagedClusterSet.objects.order_by("name", "hub__name", "pk"))
    serializer_class = api.ClusterSetSerializer
    filterset_class = filtersets.ClusterSetFilterSet

    def page_extras(self, rows: list[ManagedClusterSet]) -> dict[str, Any]:
        return {
            "bound_namespaces": queries.bound_namespaces(rows),
            "selectors": {row.pk: queries.selector_text(row) for row in rows},
        }


class ClusterSetBindingViewSet(RoleRestrictedViewSet[ManagedClusterSetBinding]):
    """Bindings of cluster sets to namespaces; POST binds a set (created on the hub), DELETE unbinds it."""

    queryset = ManagedClusterSetBinding.objects.select_related("hub").order_by(
        "hub__name", "namespace", "name"
    )
    serializer_class = api.ClusterSetBindingSerializer
    filterset_class = filtersets.ClusterSetBindingFilterSet

    @extend_schema(
        request=api.BindRequestSerializer, responses={201: api.ClusterSetBindingSerializer, **EDIT_ERRORS}
    )
    def create(self, request: Request) -> Response:
        """Bind a cluster set to a namespace: its ManagedClusterSetBinding is created on the set's hub."""
        bind = api.BindRequestSerializer(data=request.data)
        bind.is_valid(raise_exception=True)
        cluster_set, namespace = bind.validated_data["cluster_set"], bind.validated_data["namespace"]
        binding = _edit(
            lambda: editing.bind(cluster_set, namespace, actor=signed_in(request.user), request=request)
        )
        return Response(self.get_serializer(binding).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None, **EDIT_ERRORS})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Unbind: the ManagedClusterSetBinding is deleted on the hub, then here."""
        binding = self.get_object()
        _edit(lambda: editing.unbind(binding, actor=signed_in(request.user), request=request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class AddOnPlacementScoreViewSet(RoleRestrictedViewSet[AddOnPlacementScore]):
    queryset = AddOnPlacementScore.objects.select_related("hub").order_by("hub__name", "namespace", "name")
    serializer_class = api.AddOnPlacementScoreSerializer
    filterset_class = filtersets.AddOnPlacementScoreFilterSet

    def page_extras(self, rows: list[AddOnPlacementScore]) -> dict[str, Any]:
        return {"now": timezone.now()}


class SyncRunViewSet(RoleRestrictedViewSet[SyncRun]):
    """Sync runs: operator data (hub errors), for superusers."""

    queryset = SyncRun.objects.select_related("hub").order_by("-started_at", "-pk")
    serializer_class = api.SyncRunSerializer
    filterset_class = filtersets.SyncRunFilterSet


class RejectedObjectViewSet(RoleRestrictedViewSet[RejectedObject]):
    """Hub objects the sync or the watcher refused (inventory.validation), with why; superusers only."""

    queryset = RejectedObject.objects.select_related("hub").order_by(
        "hub__name", "kind", "namespace", "name", "pk"
    )
    serializer_class = api.RejectedObjectSerializer
    filterset_class = filtersets.RejectedObjectFilterSet


class AuditEntryViewSet(RoleRestrictedViewSet[AuditEntry]):
    """The audit log, newest first: superusers read every entry, other users the entries they made."""

    queryset = AuditEntry.objects.select_related("hub")
    serializer_class = api.AuditEntrySerializer
    filterset_class = filtersets.AuditEntryFilterSet


ROLE_ERRORS = {code: EDIT_ERRORS[code] for code in (400, 403)}


class HeldRoleViewSet(RoleRestrictedViewSet[_Role]):
    """Roles the caller sees; the admins of their set or namespace (and superusers) grant, change and
    revoke them through inventory.roles."""

    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    change_serializer_class: type[serializers.Serializer[api.Body]]

    def scope(self, data: dict[str, Any]) -> roles.Scope:
        """The set or the namespace a validated create request names."""
        raise NotImplementedError

    def create(self, request: Request) -> Response:
        """Grant a role to a user or a group (by name)."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        scope, principal = self.scope(data), data.get("user") or data["group"]
        row = _edit(
            lambda: roles.grant(signed_in(request.user), scope, data["role"], principal, request=request)
        )
        return Response(self.get_serializer(row).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """Change the role; the principal and where it is held stay."""
        row = self.get_object()
        change = self.change_serializer_class(data=request.data)
        change.is_valid(raise_exception=True)
        actor, role = signed_in(request.user), change.validated_data["role"]
        changed = _edit(lambda: roles.change(actor, row, role, request=request))
        return Response(self.get_serializer(changed).data)

    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Revoke the role (the last admin only by a superuser)."""
        row = self.get_object()
        _edit(lambda: roles.revoke(signed_in(request.user), row, request=request))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _role_schema(serializer: type, change: type) -> Callable[[type], type]:
    return extend_schema_view(
        create=extend_schema(responses={201: serializer, **ROLE_ERRORS}),
        partial_update=extend_schema(request=change, responses={200: serializer, **ROLE_ERRORS}),
        destroy=extend_schema(responses={204: None, **ROLE_ERRORS}),
    )


@_role_schema(api.ClusterSetRoleSerializer, api.ClusterSetRoleChangeSerializer)
class ClusterSetRoleViewSet(HeldRoleViewSet[ClusterSetRole]):
    """Roles on the cluster sets the caller sees; admins of a set (and superusers) grant, change, revoke."""

    queryset = ClusterSetRole.objects.select_related("cluster_set__hub", "user", "group").order_by(
        "cluster_set__hub__name", "cluster_set__name", "role", "pk"
    )
    serializer_class = api.ClusterSetRoleSerializer
    change_serializer_class = api.ClusterSetRoleChangeSerializer
    filterset_fields = ["cluster_set", "role"]

    def scope(self, data: dict[str, Any]) -> roles.Scope:
        cluster_set: ManagedClusterSet = data["cluster_set"]
        return cluster_set


@_role_schema(api.NamespaceRoleSerializer, api.NamespaceRoleChangeSerializer)
class NamespaceRoleViewSet(HeldRoleViewSet[NamespaceRole]):
    """Roles in the namespaces where the caller holds one; admins of a namespace (and superusers) grant,
    change, revoke."""

    queryset = NamespaceRole.objects.select_related("hub", "user", "group").order_by(
        "hub__name", "namespace", "role", "pk"
    )
    serializer_class = api.NamespaceRoleSerializer
    change_serializer_class = api.NamespaceRoleChangeSerializer
    filterset_fields = ["hub", "namespace", "role"]

    def scope(self, data: dict[str, Any]) -> roles.Scope:
        return roles.Namespace(data["hub"], data["namespace"])
