"""Which of the placements a hub change re-queues it can visibly alter: their runs are queued first.

Upstream's trigger chain re-queues every placement whose cluster sets hold a changed cluster (all the
placements over `global` for any cluster), though most of them keep their decisions: the cluster is
neither selected nor selectable by them before or after. They still run (their explanations catch up),
but after the runs whose decisions may change, so a change reaches its stored decision without waiting
behind hundreds of runs that change nothing.

A run may be put after the others only when that is certain from the change and the placement alone:
every change is an update of OCM ManagedClusters touching only labels, claims or taints (no input of
any prioritizer), the changed clusters' cluster sets are the same before and after, and for the
placement none of the clusters is in its stored decisions and each passes (or fails) the Predicate and
TaintToleration filters alike before and after. Then the candidates and their scores are unchanged, and
so are the decisions. Anything else (a CEL predicate, which may read any field; a selector or a
toleration the scheduler refuses; a Fleet placement) runs first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from inventory import scheduler_inputs
from inventory.changes import HubChanges, scheduler_view
from inventory.models import ManagedClusterSet
from placement.families.ocm import OCM, parse_stored
from placement.models import Placement
from placement.scheduler.errors import ManifestError
from placement.scheduler.ocm import types
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, sets_of_cluster
from placement.scheduler.ocm.taints import cluster_tolerated, toleration_error

# Fields of a ManagedCluster that no prioritizer reads: a change of these alone moves no score.
FILTERED_ONLY = ("labels", "claims", "taints")
# A batch changing more clusters than this is a resync's: its runs are all queued first, unsorted.
MAX_CLUSTERS = 50

ClusterPair = tuple[types.ManagedCluster, types.ManagedCluster]


def run_later(changes: HubChanges, placements: Iterable[Placement]) -> set[int]:
    """Ids of `placements` (re-queued by `changes`) whose decisions `changes` cannot alter."""
    pairs = _filtered_only(changes)
    if not pairs or not _same_sets(changes.hub_id, pairs):
        return set()
    holding: set[int] = set()
    for change in changes.clusters:
        holding.update(OCM.placements_selecting(change.rows[1]))
    now = timezone.now()
    later = set()
    for placement in placements:
        if placement.kind != OCM.kind or placement.pk in holding:
            continue
        try:
            parsed = parse_stored(placement)
        except ManifestError:
            continue  # the run reports it; nothing to sort it by
        if all(_unmoved(parsed, old, new, now) for old, new in pairs):
            later.add(placement.pk)
    return later


def _filtered_only(changes: HubChanges) -> list[ClusterPair]:
    """(old, new) of each changed ManagedCluster when the change is only such updates, each touching
    only fields the filters read; otherwise none."""
    others = (changes.member_clusters, changes.cluster_sets, changes.bindings, changes.add_on_scores)
    if any(others) or changes.other_rows or not 0 < len(changes.clusters) <= MAX_CLUSTERS:
        return []
    pairs = []
    for change in changes.clusters:
        old, new = change.old, change.new
        if change.created or change.deleted or old is None or new is None:
            return []
        kept = {name: getattr(new, name) for name in FILTERED_ONLY}
        if dataclasses.replace(old, **kept) != new:
            return []
        pairs.append((old, new))
    return pairs


def _same_sets(hub_id: int, pairs: list[ClusterPair]) -> bool:
    """Whether each cluster belongs to the same cluster sets before and after the change."""
    rows = ManagedClusterSet.objects.filter(hub_id=hub_id)
    sets = [s for s in (scheduler_view(row, scheduler_inputs.cluster_set) for row in rows) if s]
    try:
        return all(set(sets_of_cluster(old, sets)) == set(sets_of_cluster(new, sets)) for old, new in pairs)
    except ClusterSetSelectorError:
        return False


def _unmoved(
    placement: types.Placement, old: types.ManagedCluster, new: types.ManagedCluster, now: datetime
) -> bool:
    before = _passes(placement, old, now)
    return before is not None and before == _passes(placement, new, now)


def _passes(
    placement: types.Placement, cluster: types.ManagedCluster, now: datetime
) -> tuple[bool, datetime | None] | None:
    """What the Predicate and TaintToleration filters make of a cluster the placement has not decided:
    (passes, when its toleration expires); None when that cannot be told without scheduling."""
    if toleration_error(placement.tolerations) is not None:
        return None
    matched = not placement.predicates
    for predicate in placement.predicates:
        if predicate.cel_expressions or predicate.selector_problem is not None:
            return None
        claims = predicate.claim_label_selector.matches(cluster.claim_map)
        matched = matched or (predicate.label_selector.matches(cluster.labels) and claims)
    return (False, None) if not matched else cluster_tolerated(cluster, placement.tolerations, False, now)
