"""Which of the placements a hub change re-queues it can visibly alter, and in which order their runs go.

Upstream's trigger chain re-queues every placement whose cluster sets hold a changed cluster (all the
placements over `global` for any cluster), though most of them keep their decisions: the cluster is
neither selected nor selectable by them before or after, or it only stops being a candidate they did
not select. They still run (their explanations catch up), but after the runs whose decisions may
change, so a change reaches its stored decision without waiting behind hundreds of runs that change
nothing. Among the runs that go first, those of the placements whose decisions hold a changed cluster
lead: their decisions change whenever the cluster stops passing their filters.

A run may be put after the others only when that is certain from the change and the placement alone:
every change is an update of OCM ManagedClusters touching only labels, claims or taints (no input of
any prioritizer), the changed clusters' cluster sets are the same before and after, and for the
placement none of the clusters is in its stored decisions and each either passes (or fails) the
Predicate and TaintToleration filters alike before and after, or passes them before and not after
while no prioritizer of the placement scores a cluster against the other candidates. Then the clusters
it selected are still candidates with the same scores, above every candidate that is left, and the
decisions stay. Balance counts the other placements' decisions, Steady the placement's own, AddOn the
cluster's own score: none of them reads the other candidates; ResourceAllocatableCPU and Memory scale
each cluster between the candidates' least and most allocatable, which a leaving cluster may move.
Anything else (a CEL predicate, which may read any field; a selector, a toleration or a prioritizer
the scheduler refuses; a Fleet placement) runs first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from inventory import scheduler_inputs
from inventory.changes import HubChanges, scheduler_view
from inventory.models import ManagedClusterSet
from placement import parsed_placements
from placement.families.ocm import OCM
from placement.scheduler.ocm import types
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, sets_of_cluster
from placement.scheduler.ocm.prioritizers import PrioritizerMisconfigured, prioritizers_for
from placement.scheduler.ocm.taints import cluster_tolerated, toleration_error

# Fields of a ManagedCluster that no prioritizer reads: a change of these alone moves no score.
FILTERED_ONLY = ("labels", "claims", "taints")
# A batch changing more clusters than this is a resync's: its runs are all queued first, unsorted.
MAX_CLUSTERS = 50
# Prioritizers that scale a cluster's score between the candidates' least and most allocatable.
CANDIDATE_SCALED = (types.RESOURCE_CPU, types.RESOURCE_MEMORY)

ClusterPair = tuple[types.ManagedCluster, types.ManagedCluster]


@dataclass(frozen=True, slots=True)
class Order:
    """The order of the runs a change re-queues: those of `holding` first of all, those of `later` after
    every other."""

    holding: frozenset[int] = frozenset()
    later: frozenset[int] = frozenset()

    def split(self, placement_ids: Iterable[int]) -> tuple[list[int], list[int]]:
        """(those of `holding`, the others) of `placement_ids`, each in its given order."""
        ids = list(placement_ids)
        return [pk for pk in ids if pk in self.holding], [pk for pk in ids if pk not in self.holding]


def order(changes: HubChanges, placement_ids: Iterable[int]) -> Order:
    """How the runs of `placement_ids` (re-queued by `changes`) are ordered: the placements whose stored
    decisions hold a changed cluster lead, those whose decisions `changes` cannot alter go last."""
    pairs = _filtered_only(changes)
    if not pairs or not _same_sets(changes.hub_id, pairs):
        return Order()
    holding: set[int] = set()
    for change in changes.clusters:
        holding.update(OCM.placements_selecting(change.rows[1]))
    parsed, now = parsed_placements.of_change(changes), timezone.now()
    later = set()
    for pk in placement_ids:
        placement = parsed.get(pk)
        # a Fleet placement, or one the scheduler cannot read (its run reports it): nothing to sort it by
        if placement is None or pk in holding:
            continue
        if all(_unmoved(placement, old, new, now) for old, new in pairs):
            later.add(pk)
    return Order(frozenset(holding), frozenset(later))


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
    """Whether the placement's decisions stay the same with `new` for `old`, a cluster it has not
    decided: it passes the filters alike, or it stops passing them and no prioritizer reads the other
    candidates."""
    before, after = _passes(placement, old, now), _passes(placement, new, now)
    if before is None or after is None:
        return False
    return before == after or (before[0] and not after[0] and not _scores_against_candidates(placement))


def _scores_against_candidates(placement: types.Placement) -> bool:
    """Whether a prioritizer of the placement scores a cluster by the other candidates (True when the
    scheduler refuses the prioritizers: the run reports it)."""
    try:
        return any(p.name in CANDIDATE_SCALED for p in prioritizers_for(placement.prioritizer_policy))
    except PrioritizerMisconfigured:
        return True


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
