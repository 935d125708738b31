"""ClusterSetMembership rows, computed by the scheduler's own set code (placement.scheduler.ocm).

Only OCM ManagedClusters belong to sets. A set or cluster the scheduler cannot read has no memberships.
"""

import logging
from collections.abc import Iterable

import numpy as np
from django.db import transaction
from django.db.models import QuerySet

from inventory import scheduler_inputs
from inventory.models import CLUSTER_KINDS, ClusterSetMembership, Hub, ManagedCluster, ManagedClusterSet
from placement.scheduler.errors import ManifestError
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, cluster_set_selector
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.types import ManagedClusterSet as SchedulerClusterSet

logger = logging.getLogger(__name__)
BATCH = 1000


def _scheduler_sets(hub: Hub) -> dict[str, tuple[int, SchedulerClusterSet]]:
    """name -> (row pk, scheduler set) for the sets the scheduler can evaluate."""
    sets = {}
    for row in ManagedClusterSet.objects.filter(hub=hub):
        try:
            cluster_set = scheduler_inputs.cluster_set(row)
            cluster_set_selector(cluster_set)
        except (ManifestError, ClusterSetSelectorError) as exc:
            logger.warning("hub %s: ManagedClusterSet %s has no members: %s", hub.name, row.name, exc)
            continue
        sets[row.name] = (row.pk, cluster_set)
    return sets


def rebuild(hub: Hub) -> None:
    """Recompute every membership of the hub, vectorised with `OcmInventory.set_mask`."""
    kinds = [kind for kind, cluster_kind in CLUSTER_KINDS.items() if cluster_kind.in_cluster_sets]
    _recompute(
        hub,
        ManagedCluster.objects.filter(hub=hub, kind__in=kinds),
        ClusterSetMembership.objects.filter(cluster_set__hub=hub),
    )


def update_clusters(hub: Hub, rows: list[ManagedCluster]) -> None:
    """Recompute the memberships of these stored clusters of the hub alone (those a change moved)."""
    rows = [row for row in rows if row.cluster_kind.in_cluster_sets]
    if rows:
        _recompute(hub, rows, ClusterSetMembership.objects.filter(cluster__in=[row.pk for row in rows]))


def _recompute(hub: Hub, rows: Iterable[ManagedCluster], current: QuerySet[ClusterSetMembership]) -> None:
    """Make `current` exactly the memberships of the clusters `rows` in the hub's sets."""
    sets = _scheduler_sets(hub)
    pk_by_name: dict[str, int] = {}
    clusters = []
    for row in rows:
        try:
            clusters.append(scheduler_inputs.managed_cluster(row))
        except ManifestError as exc:
            logger.warning("hub %s: ManagedCluster %s is in no set: %s", hub.name, row.name, exc)
            continue
        pk_by_name[row.name] = row.pk
    inventory = OcmInventory(clusters, [cluster_set for _, cluster_set in sets.values()])
    cluster_pks = np.fromiter(
        (pk_by_name[name] for name in inventory.names), dtype=np.int64, count=inventory.size
    )
    wanted = {
        (int(cluster_pk), set_pk)
        for name, (set_pk, _) in sets.items()
        for cluster_pk in cluster_pks[inventory.set_mask(name)]
    }
    _apply(current, wanted)


def _apply(current: QuerySet[ClusterSetMembership], wanted: set[tuple[int, int]]) -> None:
    """Make the memberships in `current` exactly `wanted` (cluster pk, set pk) pairs."""
    rows = current.values_list("pk", "cluster_id", "cluster_set_id")
    existing = {(cluster_id, set_id): pk for pk, cluster_id, set_id in rows}
    gone = [pk for pair, pk in existing.items() if pair not in wanted]
    new = [ClusterSetMembership(cluster_id=c, cluster_set_id=s) for c, s in wanted if (c, s) not in existing]
    with transaction.atomic():
        for start in range(0, len(gone), BATCH):
            ClusterSetMembership.objects.filter(pk__in=gone[start : start + BATCH]).delete()
        ClusterSetMembership.objects.bulk_create(new, batch_size=BATCH)
