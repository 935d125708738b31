"""Small builders for OCM scheduler tests: hub manifests parsed by the product's parser."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.manifests import parse_ocm_object
from placement.scheduler.ocm.types import (
    CLUSTER_SET_LABEL,
    PLACEMENT_LABEL,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    Placement,
    PlacementDecision,
)

API = "cluster.open-cluster-management.io"
NOW = datetime(2022, 1, 1, tzinfo=UTC)


def parse(doc: dict[str, Any]) -> Any:
    return parse_ocm_object(doc, lambda _message: None)


def cluster(name: str, *, labels: dict[str, str] | None = None, **status: Any) -> ManagedCluster:
    """A ManagedCluster; keyword `taints` goes to spec, the rest (allocatable, capacity, ...) to status."""
    taints = status.pop("taints", [])
    claims = [{"name": k, "value": v} for k, v in status.pop("claims", {}).items()]
    metadata: dict[str, Any] = {"name": name, "labels": labels or {}}
    if deleted := status.pop("deletion_timestamp", None):
        metadata["deletionTimestamp"] = deleted
    doc = {
        "apiVersion": f"{API}/v1",
        "kind": "ManagedCluster",
        "metadata": metadata,
        "spec": {"taints": taints},
    }
    return parse(doc | {"status": {"clusterClaims": claims, **status}})


def member(name: str, cluster_set: str = "prod", **kwargs: Any) -> ManagedCluster:
    labels = {CLUSTER_SET_LABEL: cluster_set, **kwargs.pop("labels", {})}
    return cluster(name, labels=labels, **kwargs)


def placement(name: str = "web", namespace: str = "apps", **spec: Any) -> Placement:
    metadata: dict[str, Any] = {"namespace": namespace, "name": name}
    if annotations := spec.pop("annotations", None):
        metadata["annotations"] = annotations
    return parse({"apiVersion": f"{API}/v1beta1", "kind": "Placement", "metadata": metadata, "spec": spec})


def cluster_set(name: str = "prod", selector_type: str = "", label_selector: Any = None) -> ManagedClusterSet:
    selector: dict[str, Any] = {"selectorType": selector_type}
    if label_selector is not None:
        selector["labelSelector"] = label_selector
    doc = {"apiVersion": f"{API}/v1beta2", "kind": "ManagedClusterSet", "metadata": {"name": name}}
    return parse(doc | {"spec": {"clusterSelector": selector}})


def binding(namespace: str = "apps", name: str = "prod") -> ManagedClusterSetBinding:
    return ManagedClusterSetBinding(namespace, name, name)


def decision(
    placement_name: str | None, clusters: list[str], namespace: str = "apps", name: str = ""
) -> PlacementDecision:
    labels = {} if placement_name is None else {PLACEMENT_LABEL: placement_name}
    return PlacementDecision(namespace, name or f"{placement_name}-decision-1", labels, tuple(clusters))


def score(
    cluster_name: str, resource: str, values: dict[str, int], valid_until: datetime | None = None
) -> AddOnPlacementScore:
    return AddOnPlacementScore(cluster_name, resource, tuple(values.items()), valid_until)


def hub(clusters: list[ManagedCluster], **rest: Any) -> OcmInventory:
    """An inventory with set `prod` bound to namespace `apps` unless told otherwise."""
    rest.setdefault("cluster_sets", [cluster_set()])
    rest.setdefault("bindings", [binding()])
    return OcmInventory(clusters, **rest)
