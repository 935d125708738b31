"""Which placements upstream re-queues when hub objects change (upstream enqueue.go).

Other placements' PlacementDecisions trigger nothing: Balance is re-evaluated only on a placement's own
triggers or the 10-minute resync, exactly like the upstream controller.
"""

from __future__ import annotations

from collections.abc import Iterable

from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, sets_of_cluster
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.types import (
    ADD_ON,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    Placement,
)

PlacementKey = tuple[str, str]


def placements_affected_by_binding(
    binding: ManagedClusterSetBinding, placements: Iterable[Placement]
) -> set[PlacementKey]:
    """Placements in the binding's namespace that list its set, or list no sets at all."""
    return {
        p.key
        for p in placements
        if p.namespace == binding.namespace and (not p.cluster_sets or binding.name in p.cluster_sets)
    }


def placements_affected_by_cluster_set(
    cluster_set_name: str, inventory: OcmInventory, placements: Iterable[Placement]
) -> set[PlacementKey]:
    """Through every binding (any namespace) whose spec.clusterSet is the set."""
    placements = list(placements)
    affected: set[PlacementKey] = set()
    for binding in inventory.bindings:
        if binding.cluster_set == cluster_set_name:
            affected |= placements_affected_by_binding(binding, placements)
    return affected


def _sets_of(cluster: ManagedCluster, cluster_sets: Iterable[ManagedClusterSet]) -> list[str]:
    try:
        return sets_of_cluster(cluster, cluster_sets)
    except ClusterSetSelectorError:
        # upstream logs the error and enqueues nothing for this cluster
        return []


def placements_affected_by_cluster_change(
    old_cluster: ManagedCluster | None,
    new_cluster: ManagedCluster | None,
    inventory: OcmInventory,
    placements: Iterable[Placement],
) -> set[PlacementKey]:
    """A ManagedCluster add (old None), update or delete (new None): sets -> bindings -> placements.

    On update the old cluster's sets count only when its labels changed, as upstream's handler does.
    """
    placements = list(placements)
    sets = inventory.cluster_sets.values()
    names: set[str] = set()
    if new_cluster is not None:
        names.update(_sets_of(new_cluster, sets))
    labels_changed = (
        new_cluster is None or old_cluster is None or dict(old_cluster.labels) != dict(new_cluster.labels)
    )
    if old_cluster is not None and labels_changed:
        names.update(_sets_of(old_cluster, sets))
    affected: set[PlacementKey] = set()
    for name in names:
        affected |= placements_affected_by_cluster_set(name, inventory, placements)
    return affected


def placements_affected_by_add_on_score(
    score: AddOnPlacementScore, inventory: OcmInventory, placements: Iterable[Placement]
) -> set[PlacementKey]:
    """Placements weighting AddOn `score.name` whose namespace binds a set of the score's cluster."""
    cluster = inventory.cluster(score.namespace)
    if cluster is None:
        return set()
    set_names = set(_sets_of(cluster, inventory.cluster_sets.values()))
    namespaces = {b.namespace for b in inventory.bindings if b.cluster_set in set_names}
    return {
        p.key for p in placements if p.namespace in namespaces and score.name in _add_on_resource_names(p)
    }


def _add_on_resource_names(placement: Placement) -> set[str]:
    return {
        c.score_coordinate.add_on.resource_name
        for c in placement.prioritizer_policy.configurations
        if c.score_coordinate is not None and c.score_coordinate.type == ADD_ON and c.score_coordinate.add_on
    }
