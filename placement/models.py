"""Placements (OCM Placement and KubeFleet ClusterResourcePlacement) and what they decided.

Rows with a null hub are owned by the dashboard itself; rows with a hub mirror that hub.
spec/status are stored exactly as the Kubernetes objects carry them.
"""

from django.db import models
from django.db.models import Q

from inventory.models import Hub
from placement import summary

PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
CRP_LABEL = "kubernetes-fleet.io/parent-CRP"


class PlacementQuerySet(models.QuerySet["Placement"]):
    def for_listing(self) -> "PlacementQuerySet":
        return self.select_related("hub").order_by("kind", "namespace", "name", "pk")


class Placement(models.Model):
    class Kind(models.TextChoices):
        PLACEMENT = summary.OCM_PLACEMENT, "OCM Placement"
        CLUSTER_RESOURCE_PLACEMENT = summary.FLEET_CRP, "Fleet ClusterResourcePlacement"

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, null=True, blank=True, related_name="placements")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    # Blank for a ClusterResourcePlacement (cluster-scoped).
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(max_length=64, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    # The OCM scheduler honours cluster.open-cluster-management.io/experimental-scheduling-disable.
    annotations = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    status = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = PlacementQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "kind", "namespace", "name"], name="placement_unique_hub_kind_ns_name"
            ),
            # NULLs never collide in the constraint above, so dashboard-owned rows need their own.
            models.UniqueConstraint(
                fields=["kind", "namespace", "name"],
                condition=Q(hub__isnull=True),
                name="placement_unique_owned_kind_ns_name",
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def policy_summary(self) -> str:
        return summary.policy_summary(self.kind, self.spec)


class PlacementDecision(models.Model):
    """An OCM PlacementDecision; existing ones are the scheduler's input for Balance, Steady and taints."""

    placement = models.ForeignKey(
        Placement, on_delete=models.SET_NULL, null=True, blank=True, related_name="decisions"
    )
    hub = models.ForeignKey(
        Hub, on_delete=models.CASCADE, null=True, blank=True, related_name="placement_decisions"
    )
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    # status.decisions: [{clusterName, reason}]
    decisions = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "namespace", "name"], name="placementdecision_unique_hub_ns_name"
            ),
            models.UniqueConstraint(
                fields=["namespace", "name"],
                condition=Q(hub__isnull=True),
                name="placementdecision_unique_owned_ns_name",
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class ClusterResourceBinding(models.Model):
    """A KubeFleet ClusterResourceBinding: one per (CRP, cluster); existing ones feed PickN/PickAll."""

    placement = models.ForeignKey(
        Placement, on_delete=models.SET_NULL, null=True, blank=True, related_name="bindings"
    )
    hub = models.ForeignKey(
        Hub, on_delete=models.CASCADE, null=True, blank=True, related_name="resource_bindings"
    )
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    status = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hub", "name"], name="clusterresourcebinding_unique_hub_name"),
            models.UniqueConstraint(
                fields=["name"],
                condition=Q(hub__isnull=True),
                name="clusterresourcebinding_unique_owned_name",
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return self.name
