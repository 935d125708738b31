"""Inventory rows to the scheduler's frozen inputs, through the scheduler's own parsers.

Each function rebuilds the Kubernetes object a row mirrors and parses it exactly as the offline
`schedule` command parses a manifest, so CRD defaults and validation live in one place.
"""

from typing import Any

from inventory.models import AddOnPlacementScore, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding
from placement.scheduler.fleet.manifests import parse_member_cluster
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.ocm import manifests as ocm
from placement.scheduler.ocm import types
from placement.scheduler.timeutil import format_time

OCM = "cluster.open-cluster-management.io"


def _ignore(message: str) -> None:
    """Parser notes on legacy forms; stored rows were already read once."""


def _object(api_version: str, kind: str, name: str, namespace: str = "", **fields: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **fields.pop("metadata", {})}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


# The columns each conversion reads: a snapshot build loads only these (`QuerySet.only`), leaving out
# the other family's JSON columns, which would otherwise be decoded for every row.
MANAGED_CLUSTER_FIELDS = (
    "name",
    "labels",
    "deletion_timestamp",
    "taints",
    "claims",
    "allocatable",
    "capacity",
    "conditions",
)
MEMBER_CLUSTER_FIELDS = (
    "name",
    "labels",
    "taints",
    "conditions",
    "properties",
    "resource_usage",
    "agent_status",
)


def managed_cluster(row: ManagedCluster) -> types.ManagedCluster:
    metadata: dict[str, Any] = {"labels": row.labels}
    if row.deletion_timestamp is not None:
        metadata["deletionTimestamp"] = format_time(row.deletion_timestamp)
    doc = _object(
        f"{OCM}/v1",
        "ManagedCluster",
        row.name,
        metadata=metadata,
        spec={"taints": row.taints},
        status={
            "clusterClaims": row.claims,
            "allocatable": row.allocatable,
            "capacity": row.capacity,
            "conditions": row.conditions,
        },
    )
    return ocm.parse_managed_cluster(doc, _ignore)


def member_cluster(row: ManagedCluster) -> MemberCluster:
    doc = _object(
        "cluster.kubernetes-fleet.io/v1beta1",
        "MemberCluster",
        row.name,
        metadata={"labels": row.labels},
        spec={"taints": row.taints},
        status={
            "conditions": row.conditions,
            "properties": row.properties,
            "resourceUsage": row.resource_usage,
            "agentStatus": row.agent_status,
        },
    )
    return parse_member_cluster(doc)


def cluster_set(row: ManagedClusterSet) -> types.ManagedClusterSet:
    selector: dict[str, Any] = {"selectorType": row.selector_type}
    if row.label_selector is not None:
        selector["labelSelector"] = row.label_selector
    doc = _object(f"{OCM}/v1beta2", "ManagedClusterSet", row.name, spec={"clusterSelector": selector})
    return ocm.parse_managed_cluster_set(doc, _ignore)


def cluster_set_binding(row: ManagedClusterSetBinding) -> types.ManagedClusterSetBinding:
    # Built directly: the parser rejects a binding whose name differs from its set, which a hub may hold.
    return types.ManagedClusterSetBinding(row.namespace, row.name, row.cluster_set)


def add_on_score(row: AddOnPlacementScore) -> types.AddOnPlacementScore:
    status: dict[str, Any] = {"scores": row.scores}
    if row.valid_until is not None:
        status["validUntil"] = format_time(row.valid_until)
    doc = _object(f"{OCM}/v1alpha1", "AddOnPlacementScore", row.name, row.namespace, status=status)
    return ocm.parse_add_on_placement_score(doc, _ignore)
