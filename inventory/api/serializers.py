"""API representations; a hub's credentials and sync lock are never part of any of them."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    SyncRun,
)


class HubScopedSerializer(serializers.ModelSerializer):
    """`hub` by name and `hub_id`, for everything read from a hub."""

    hub = serializers.SlugRelatedField(slug_field="name", read_only=True)
    hub_id = serializers.IntegerField(read_only=True)


class SyncRunSerializer(HubScopedSerializer):
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
            "error",
        ]


class HubSerializer(serializers.ModelSerializer):
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

    @extend_schema_field(SyncRunSerializer(allow_null=True))
    def get_latest_run(self, hub: Hub) -> dict | None:
        run = self.context["latest_runs"].get(hub.pk)
        return None if run is None else SyncRunSerializer(run).data


class ClusterSetRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="cluster_set_id")
    name = serializers.CharField(source="cluster_set.name")


class ClusterSerializer(HubScopedSerializer):
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
        return self.context["placement_counts"][cluster.pk]


class ClusterSetSerializer(HubScopedSerializer):
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
        return self.context["selectors"][cluster_set.pk]

    def get_bound_namespaces(self, cluster_set: ManagedClusterSet) -> list[str]:
        return self.context["bound_namespaces"].get(cluster_set.pk, [])


class ClusterSetBindingSerializer(HubScopedSerializer):

    class Meta:
        model = ManagedClusterSetBinding
        fields = ["id", "hub", "hub_id", "namespace", "name", "cluster_set", "uid", "resource_version"]


class AddOnPlacementScoreSerializer(HubScopedSerializer):
    cluster = serializers.CharField(source="namespace", read_only=True)
    expired = serializers.SerializerMethodField()

    class Meta:
        model = AddOnPlacementScore
        fields = [
            "id", "hub", "hub_id", "cluster", "name", "scores", "valid_until", "expired", "resource_version"
        ]

    def get_expired(self, score: AddOnPlacementScore) -> bool:
        return score.valid_until is not None and score.valid_until < self.context["now"]
