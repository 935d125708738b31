"""Which placements a hub change re-queues.

A change of a placement re-queues it, a PlacementDecision the placement it is labelled with, a
ClusterResourceBinding its CRP; rollouts read placements' results and re-queue nothing. A MemberCluster
change re-queues every ClusterResourcePlacement of the hub; the OCM Placements a cluster, set, binding
or add-on score change affects come from the upstream trigger chain in `placement.scheduler.ocm.triggers`.

`requeued` works this out once per change, when first asked (by the receiver of
`inventory.signals.hub_changes_recorded`, inside the writing transaction), and keeps it on the change.
"""

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db import models

from inventory import scheduler_inputs
from inventory.changes import HubChanges, scheduler_view
from inventory.models import ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding
from placement import service
from placement.models import CRP_LABEL, PLACEMENT_LABEL, ClusterResourceBinding, Placement, PlacementDecision
from placement.scheduler.errors import ManifestError
from placement.scheduler.ocm import triggers, types
from placement.scheduler.ocm.inventory import OcmInventory

logger = logging.getLogger(__name__)
PlacementKey = tuple[str, str]


@dataclass
class Requeue:
    # (namespace, name) of the OCM Placements to re-evaluate
    placements: set[PlacementKey] = field(default_factory=set)
    # names of the ClusterResourcePlacements to re-evaluate
    cluster_resource_placements: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.placements or self.cluster_resource_placements)


def requeued(changes: HubChanges) -> Requeue:
    """The placements `changes` re-queues, worked out on the first call and kept on the change."""
    found: Requeue | None = changes.derived.get(__name__)
    if found is None:
        found = changes.derived[__name__] = _work_out(changes)
    return found


def _work_out(changes: HubChanges) -> Requeue:
    requeue = Requeue()
    for old, new in changes.other_rows:
        row = new if new is not None else old
        if isinstance(row, Placement):
            if row.kind == Placement.Kind.PLACEMENT:
                requeue.placements.add((row.namespace, row.name))
            else:
                requeue.cluster_resource_placements.add(row.name)
        else:
            _parents(requeue, old, new)
    if changes.member_clusters:
        requeue.cluster_resource_placements |= set(
            Placement.objects.filter(
                hub_id=changes.hub_id, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
            ).values_list("name", flat=True)
        )
    if changes.clusters or changes.cluster_sets or changes.bindings or changes.add_on_scores:
        requeue.placements |= _affected_placements(changes)
    return requeue


def _parents(requeue: Requeue, *rows: models.Model | None) -> None:
    """A PlacementDecision re-queues the placement it is labelled with; a binding its CRP."""
    for row in rows:
        if isinstance(row, PlacementDecision) and (name := row.labels.get(PLACEMENT_LABEL)):
            requeue.placements.add((row.namespace, name))
        elif isinstance(row, ClusterResourceBinding) and (name := row.labels.get(CRP_LABEL)):
            requeue.cluster_resource_placements.add(name)


def _affected_placements(changes: HubChanges) -> set[PlacementKey]:
    placements = _ocm_placements(changes.hub_id)
    every = {p.key for p in placements}
    affected: set[PlacementKey] = set()
    # scores need their clusters in the inventory: loaded only if clusters, sets and bindings left any out
    for steps in (_set_chain, _score_chain):
        inventory = _trigger_inventory(changes, steps is _score_chain)
        for found in steps(changes, inventory, placements):
            affected |= found
            # a full sync changes thousands of objects; once every placement is in, the rest adds nothing
            if affected >= every:
                return affected
    return affected


def _set_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[types.Placement]
) -> Iterator[set[PlacementKey]]:
    for change in changes.clusters:
        if change.old or change.new:
            yield triggers.placements_affected_by_cluster_change(
                change.old, change.new, inventory, placements
            )
    for set_change in changes.cluster_sets:
        for cluster_set in filter(None, (set_change.old, set_change.new)):
            yield triggers.placements_affected_by_cluster_set(cluster_set.name, inventory, placements)
    for binding_change in changes.bindings:
        for binding in filter(None, (binding_change.old, binding_change.new)):
            yield triggers.placements_affected_by_binding(binding, placements)


def _score_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[types.Placement]
) -> Iterator[set[PlacementKey]]:
    for score_change in changes.add_on_scores:
        if score := score_change.new or score_change.old:
            yield triggers.placements_affected_by_add_on_score(score, inventory, placements)


def _ocm_placements(hub_id: int) -> list[types.Placement]:
    placements = []
    for row in Placement.objects.filter(hub_id=hub_id, kind=Placement.Kind.PLACEMENT):
        try:
            placements.append(service.parse_ocm(row))
        except ManifestError as exc:
            logger.warning("hub %s: Placement %s cannot be read by the scheduler: %s", row.hub, row, exc)
    return placements


def _trigger_inventory(changes: HubChanges, with_score_clusters: bool) -> OcmInventory:
    """Sets and bindings as stored now, and optionally the clusters named by changed add-on scores."""
    score_clusters = {
        row.namespace for change in changes.add_on_scores if with_score_clusters for row in change.rows if row
    }
    clusters = ManagedCluster.objects.filter(
        hub_id=changes.hub_id, kind=ManagedCluster.Kind.MANAGED_CLUSTER, name__in=score_clusters
    )
    sets = ManagedClusterSet.objects.filter(hub_id=changes.hub_id)
    bindings = ManagedClusterSetBinding.objects.filter(hub_id=changes.hub_id)
    return OcmInventory(
        [c for c in (scheduler_view(row, scheduler_inputs.managed_cluster) for row in clusters) if c],
        [s for s in (scheduler_view(row, scheduler_inputs.cluster_set) for row in sets) if s],
        [scheduler_inputs.cluster_set_binding(row) for row in bindings],
    )
