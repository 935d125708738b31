"""ManagedClusterSet membership and the binding/eligibility steps of one reconcile.

The dashboard's "which clusters are in set X" uses these functions, so set semantics live in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from placement.scheduler.labels import LabelSelector
from placement.scheduler.ocm.types import (
    CLUSTER_SET_LABEL,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    LABEL_SELECTOR,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)


class ClusterSetSelectorError(ValueError):
    """A set whose members cannot be listed (an unknown selectorType, a label selector apimachinery cannot
    convert); upstream the whole reconcile errors."""

    def __init__(self, cluster_set: ManagedClusterSet, reason: str) -> None:
        # upstream sdk-go BuildClusterSelector's error, wrapped by getAvailableClusters
        super().__init__(f"failed to get clusterset: {cluster_set.name}, clusters, Error: {reason}")
        self.cluster_set = cluster_set.name


def cluster_set_selector(cluster_set: ManagedClusterSet) -> LabelSelector | None:
    """The label selector that finds the set's members; None selects nothing (nil LabelSelector)."""
    if cluster_set.selector_type in ("", EXCLUSIVE_CLUSTER_SET_LABEL):
        return LabelSelector(((CLUSTER_SET_LABEL, cluster_set.name),))
    if cluster_set.selector_type == LABEL_SELECTOR:
        if cluster_set.selector_problem is not None:
            raise ClusterSetSelectorError(cluster_set, cluster_set.selector_problem.message)
        return cluster_set.label_selector
    raise ClusterSetSelectorError(cluster_set, f"selectorType is not right: {cluster_set.selector_type}")


def cluster_set_members(cluster_set: ManagedClusterSet, clusters: Iterable[ManagedCluster]) -> list[str]:
    """Names of the clusters in `cluster_set` (deleting ones included, as upstream lists them), sorted."""
    selector = cluster_set_selector(cluster_set)
    if selector is None:
        return []
    return sorted(c.name for c in clusters if selector.matches(c.labels))


def sets_of_cluster(cluster: ManagedCluster, cluster_sets: Iterable[ManagedClusterSet]) -> list[str]:
    """Names of the sets `cluster` belongs to, sorted; a set whose members cannot be listed raises."""
    names = []
    for cluster_set in cluster_sets:
        selector = cluster_set_selector(cluster_set)
        if selector is not None and selector.matches(cluster.labels):
            names.append(cluster_set.name)
    return sorted(names)


def valid_bindings(
    namespace: str, bindings: Iterable[ManagedClusterSetBinding], cluster_set_names: Iterable[str]
) -> list[ManagedClusterSetBinding]:
    """Bindings in `namespace` whose NAME is an existing set; the Bound condition is not consulted."""
    existing = set(cluster_set_names)
    return [b for b in bindings if b.namespace == namespace and b.name in existing]


def eligible_cluster_sets(placement_cluster_sets: Sequence[str], bound_set_names: Iterable[str]) -> list[str]:
    """Bound set names, intersected with `spec.clusterSets` when that is non-empty, sorted by name."""
    names = set(bound_set_names)
    if placement_cluster_sets:
        names &= set(placement_cluster_sets)
    return sorted(names)
