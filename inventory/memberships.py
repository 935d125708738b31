"""ClusterSetMembership rows, computed by the scheduler's own set code (placement.scheduler.ocm).

Only OCM ManagedClusters belong to sets. Membership is a label selection (upstream's set selectors read
nothing else), so it is worked out from the stored labels alone, without building scheduler clusters.
A set the scheduler cannot read has no members.
"""

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import QuerySet

from inventory import bulk, scheduler_inputs
from inventory.models import CLUSTER_KINDS, ClusterSetMembership, Hub, ManagedCluster, ManagedClusterSet
from placement.scheduler.errors import ManifestError
from placement.scheduler.labels import LabelSelector
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, cluster_set_selector
from placement.scheduler.ocm.inventory import LabelIndex

logger = logging.getLogger(__name__)
BATCH = 1000


def _selectors(hub: Hub) -> list[tuple[int, LabelSelector]]:
    """(row pk, member selector) of the sets the scheduler can evaluate that select any cluster."""
    selectors = []
    for row in ManagedClusterSet.objects.filter(hub=hub):
        try:
            selector = cluster_set_selector(scheduler_inputs.cluster_set(row))
        except (ManifestError, ClusterSetSelectorError) as exc:
            logger.warning("hub %s: ManagedClusterSet %s has no members: %s", hub.name, row.name, exc)
            continue
        if selector is not None:
            selectors.append((row.pk, selector))
    return selectors


def rebuild(hub: Hub) -> None:
    """Recompute every membership of the hub from the stored labels, vectorised with `LabelIndex`."""
    kinds = [kind for kind, cluster_kind in CLUSTER_KINDS.items() if cluster_kind.in_cluster_sets]
    _recompute(
        hub,
        ManagedCluster.objects.filter(hub=hub, kind__in=kinds).values_list("pk", "labels"),
        ClusterSetMembership.objects.filter(cluster_set__hub=hub),
    )


def update_clusters(hub: Hub, rows: list[ManagedCluster]) -> None:
    """Recompute the memberships of these stored clusters of the hub alone (those a change moved)."""
    rows = [row for row in rows if row.cluster_kind.in_cluster_sets]
    if rows:
        _recompute(
            hub,
            [(row.pk, row.labels) for row in rows],
            ClusterSetMembership.objects.filter(cluster__in=[row.pk for row in rows]),
        )


def _recompute(
    hub: Hub, labelled: Iterable[tuple[int, Any]], current: QuerySet[ClusterSetMembership]
) -> None:
    """Make `current` exactly the memberships of the clusters `labelled` ((pk, labels) pairs) in the
    hub's sets."""
    pks: list[int] = []
    maps: list[dict[str, str]] = []
    for pk, labels in labelled:
        pks.append(pk)
        # validation stores only string labels; anything else selects nothing, as no selector names it
        maps.append(labels if isinstance(labels, dict) else {})
    index = LabelIndex(maps)
    cluster_pks = np.asarray(pks, dtype=np.int64)
    wanted = {
        (int(cluster_pk), set_pk)
        for set_pk, selector in _selectors(hub)
        for cluster_pk in cluster_pks[index.selector_mask(selector)]
    }
    _apply(current, wanted)


def _apply(current: QuerySet[ClusterSetMembership], wanted: set[tuple[int, int]]) -> None:
    """Make the memberships in `current` exactly `wanted` (cluster pk, set pk) pairs."""
    rows = current.values_list("pk", "cluster_id", "cluster_set_id")
    existing = {(cluster_id, set_id): pk for pk, cluster_id, set_id in rows}
    gone = [pk for pair, pk in existing.items() if pair not in wanted]
    new = [{"cluster_id": c, "cluster_set_id": s} for c, s in wanted if (c, s) not in existing]
    with transaction.atomic():
        for start in range(0, len(gone), BATCH):
            ClusterSetMembership.objects.filter(pk__in=gone[start : start + BATCH]).delete()
        bulk.insert(ClusterSetMembership, new)
