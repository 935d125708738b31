"""API representations; a hub's credentials and sync lock are never part of any of them."""

from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory import editing, roles
from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    ClusterSetMembership,
    ClusterSetRole,
    HeldRole,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
    RejectedObject,
    SyncRun,
)
from placement.scheduler.untrusted import NUL_REFUSED, holds_nul

_Row = TypeVar("_Row", bound=models.Model)
_Role = TypeVar("_Role", bound=HeldRole)
# A request body or a part of one, which inventory.editing and inventory.roles then judge.
Body = dict[str, Any]


_Named = TypeVar("_Named", bound=models.Model)


class NamedField(serializers.SlugRelatedField[_Named]):
    """An object by its name. A name holding a NUL character is refused with the field's error: PostgreSQL
    cannot compare text with it, so the look-up would end in a database error (500)."""

    def to_internal_value(self, data: Any) -> _Named:
        if holds_nul(data):
            raise serializers.ValidationError(NUL_REFUSED)
        return super().to_internal_value(data)


class HubScopedSerializer(serializers.ModelSerializer[_Row]):
    """`hub` by name and `hub_id`, for everything read from a hub."""

    hub: serializers.SlugRelatedField[Hub] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    hub_id = serializers.IntegerField(read_only=True)


class SyncRunSerializer(HubScopedSerializer[SyncRun]):
    duration_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = SyncRun
        fields = [
            "id",
            "hub",
            "hub_id",
            "trigger",
            "state",
            "started_at",
            "finished_at",
            "duration_seconds",
            "pages",
            "added",
            "updated",
            "removed",
            "rejected",
            "error",
        ]


class RejectedObjectSerializer(HubScopedSerializer[RejectedObject]):
    """A hub object that failed validation and is not stored; `name` and `namespace` are cut to 253
    characters (`identity` tells apart objects whose names only differ after that)."""

    class Meta:
        model = RejectedObject
        fields = [
            "id",
            "hub",
            "hub_id",
            "sync_run",
            "kind",
            "namespace",
            "name",
            "identity",
            "reason",
            "first_seen",
            "last_seen",
        ]
        read_only_fields = fields


class HubSerializer(serializers.ModelSerializer[Hub]):
    kinds = serializers.ListField(child=serializers.CharField(), read_only=True)
    state = serializers.CharField(read_only=True)
    cluster_count = serializers.IntegerField(read_only=True)
    stale_count = serializers.IntegerField(read_only=True)
    set_count = serializers.IntegerField(read_only=True)
    latest_run = serializers.SerializerMethodField()

    class Meta:
        model = Hub
        fields = [
            "id",
            "name",
            "server_url",
            "serves_ocm",
            "serves_fleet",
            "kinds",
            "sync_interval_seconds",
            "publish_namespace",
            "state",
            "last_synced_at",
            "last_good_sync_at",
            "last_sync_error",
            "cluster_count",
            "stale_count",
            "set_count",
            "latest_run",
        ]

    def to_representation(self, hub: Hub) -> dict[str, Any]:
        data = super().to_representation(hub)
        if not self.context["operator"]:
            data["last_sync_error"] = ""  # operator data: what failed, in the hub's own words
        return data

    @extend_schema_field(SyncRunSerializer(allow_null=True))
    def get_latest_run(self, hub: Hub) -> dict[str, Any] | None:
        run = self.context["latest_runs"].get(hub.pk)
        return None if run is None else SyncRunSerializer(run).data


class ClusterSetRefSerializer(serializers.Serializer[ClusterSetMembership]):
    id = serializers.IntegerField(source="cluster_set_id")
    name = serializers.CharField(source="cluster_set.name")


class ClusterSerializer(HubScopedSerializer[ManagedCluster]):
    cluster_sets = ClusterSetRefSerializer(source="memberships", many=True, read_only=True)
    placement_count = serializers.SerializerMethodField()

    class Meta:
        model = ManagedCluster
        fields = [
            "id",
            "hub",
            "hub_id",
            "kind",
            "name",
            "uid",
            "resource_version",
            "labels",
            "claims",
            "taints",
            "allocatable",
            "capacity",
            "cpu_allocatable",
            "memory_allocatable",
            "conditions",
            "availability",
            "stale",
            "synced_at",
            "deletion_timestamp",
            "properties",
            "resource_usage",
            "agent_status",
            "cluster_sets",
            "placement_count",
        ]

    def get_placement_count(self, cluster: ManagedCluster) -> int:
        count: int = self.context["placement_counts"][cluster.pk]
        return count


class ClusterSetSerializer(HubScopedSerializer[ManagedClusterSet]):
    selector = serializers.SerializerMethodField()
    member_count = serializers.IntegerField(read_only=True)
    available_count = serializers.IntegerField(read_only=True)
    unavailable_count = serializers.IntegerField(read_only=True)
    unknown_count = serializers.IntegerField(read_only=True)
    stale_count = serializers.IntegerField(read_only=True)
    bound_namespaces = serializers.SerializerMethodField()

    class Meta:
        model = ManagedClusterSet
        fields = [
            "id",
            "hub",
            "hub_id",
            "name",
            "uid",
            "resource_version",
            "selector_type",
            "label_selector",
            "selector",
            "member_count",
            "available_count",
            "unavailable_count",
            "unknown_count",
            "stale_count",
            "bound_namespaces",
        ]

    def get_selector(self, cluster_set: ManagedClusterSet) -> str:
        selector: str = self.context["selectors"][cluster_set.pk]
        return selector

    def get_bound_namespaces(self, cluster_set: ManagedClusterSet) -> list[str]:
        namespaces: list[str] = self.context["bound_namespaces"].get(cluster_set.pk, [])
        return namespaces


class ClusterSetBindingSerializer(HubScopedSerializer[ManagedClusterSetBinding]):
    class Meta:
        model = ManagedClusterSetBinding
        fields = ["id", "hub", "hub_id", "namespace", "name", "cluster_set", "uid", "resource_version"]


class AddOnPlacementScoreSerializer(HubScopedSerializer[AddOnPlacementScore]):
    cluster = serializers.CharField(source="namespace", read_only=True)
    expired = serializers.SerializerMethodField()

    class Meta:
        model = AddOnPlacementScore
        fields = [
            "id",
            "hub",
            "hub_id",
            "cluster",
            "name",
            "scores",
            "valid_until",
            "expired",
            "resource_version",
        ]

    def get_expired(self, score: AddOnPlacementScore) -> bool:
        return score.valid_until is not None and score.valid_until < self.context["now"]


class AuditEntrySerializer(HubScopedSerializer[AuditEntry]):
    """One audit entry; `actor` is the name at the time (a user since deleted keeps it, `actor_id` null)."""

    actor = serializers.CharField(source="actor_name", read_only=True)
    actor_id = serializers.IntegerField(read_only=True, allow_null=True)
    # null for entries recorded without a hub, or whose hub was removed since
    hub: serializers.SlugRelatedField[Hub] = serializers.SlugRelatedField(
        slug_field="name", read_only=True, allow_null=True
    )
    hub_id = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "at",
            "actor",
            "actor_id",
            "action",
            "target_type",
            "target_id",
            "target",
            "hub",
            "hub_id",
            "outcome",
            "before",
            "after",
            "hub_answer",
            "request_id",
            "source_address",
        ]
        read_only_fields = fields


# --- editors: request and answer shapes for the schema; inventory.editing validates the values


class TaintSerializer(serializers.Serializer[Body]):
    key = serializers.CharField(help_text="A qualified name: [prefix/]name")
    value = serializers.CharField(required=False, allow_blank=True, help_text="A label value")
    effect = serializers.CharField(
        help_text="OCM: NoSelect, NoSelectIfNew or PreferNoSelect; Fleet MemberCluster: NoSchedule"
    )


class TaintsSerializer(serializers.Serializer[Body]):
    taints = TaintSerializer(
        many=True, help_text="The full list; timeAdded is stamped by the hub and ignored when sent"
    )


class TaintImpactSerializer(serializers.Serializer[Any]):
    """One placement in a taint preview (inventory.editing.Impact)."""

    id = serializers.IntegerField(source="placement.pk")
    kind = serializers.CharField(source="placement.kind")
    namespace = serializers.CharField(source="placement.namespace")
    name = serializers.CharField(source="placement.name")
    holds = serializers.BooleanField(help_text="selects the cluster now")
    would_hold = serializers.BooleanField(help_text="would select it with the edited taints")
    verdict = serializers.CharField(help_text="keeps, drops, gains, stays out or unknown")
    reason = serializers.CharField(
        help_text="why it would not select the cluster, or why it was not evaluated"
    )


class BindRequestSerializer(serializers.Serializer[Body]):
    cluster_set = serializers.PrimaryKeyRelatedField(queryset=ManagedClusterSet.objects.select_related("hub"))
    namespace = serializers.CharField(allow_blank=True, default="", help_text="An RFC 1123 label")


# --- cluster-set and namespace roles (inventory.roles decides who may grant; these only shape the request)


def _offer_only(serializer: serializers.Serializer[Any], name: str, queryset: QuerySet[Any]) -> None:
    """Let the serializer's own related field `name` (as bound to this instance) take only these rows."""
    field = serializer.fields[name]
    assert isinstance(field, serializers.RelatedField)
    # The stubs declare `queryset` as possibly a Manager, whose __get__ makes mypy check this assignment as
    # a call of that descriptor.
    field.queryset = queryset  # type: ignore[arg-type]


class HeldRoleSerializer(serializers.ModelSerializer[_Role]):
    """A user's or a group's role, principals by name; create with exactly one of them."""

    user = NamedField(
        slug_field="username", queryset=get_user_model().objects.all(), required=False, allow_null=True
    )
    group = NamedField(slug_field="name", queryset=Group.objects.all(), required=False, allow_null=True)
    principal = serializers.CharField(read_only=True, help_text="user:<name> or group:<name>")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if (data.get("user") is None) == (data.get("group") is None):
            raise serializers.ValidationError({"user": "Give exactly one of user and group."})
        return data


class ClusterSetRoleSerializer(HeldRoleSerializer[ClusterSetRole]):
    """A role on a cluster set."""

    cluster_set = serializers.PrimaryKeyRelatedField(queryset=ManagedClusterSet.objects.none())
    cluster_set_name = serializers.CharField(source="cluster_set.name", read_only=True)
    hub = serializers.CharField(source="cluster_set.hub.name", read_only=True)

    class Meta:
        model = ClusterSetRole
        fields = [
            "id",
            "cluster_set",
            "cluster_set_name",
            "hub",
            "role",
            "user",
            "group",
            "principal",
            "created",
        ]
        # one role per principal and set is checked by inventory.roles.grant, with a message naming it
        validators: list[Callable[..., object]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is not None:
            # a set the caller cannot see is as unknown as one that does not exist
            _offer_only(self, "cluster_set", roles.sets_for(request.user))


class ClusterSetRoleChangeSerializer(serializers.Serializer[Body]):
    role = serializers.ChoiceField(choices=ClusterSetRole.Role.choices)


class NamespaceRoleSerializer(HeldRoleSerializer[NamespaceRole]):
    """A role in a namespace of a hub: view sees its placements, edit changes them, admin also binds
    cluster sets into it and grants roles in it."""

    hub = NamedField(slug_field="name", queryset=Hub.objects.none())
    namespace = serializers.CharField(max_length=63, help_text="An RFC 1123 label")

    class Meta:
        model = NamespaceRole
        fields = ["id", "hub", "namespace", "role", "user", "group", "principal", "created"]
        # one role per principal and namespace is checked by inventory.roles.grant, naming it
        validators: list[Callable[..., object]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        request = self.context.get("request")
        if request is not None:
            # a hub the caller cannot see is as unknown as one that does not exist
            _offer_only(self, "hub", roles.restrict(Hub.objects.all(), request.user))

    def validate_namespace(self, namespace: str) -> str:
        if (why := editing.namespace_error(namespace)) is not None:
            raise serializers.ValidationError(why)
        return namespace


class NamespaceRoleChangeSerializer(serializers.Serializer[Body]):
    role = serializers.ChoiceField(choices=NamespaceRole.Role.choices)
