"""What a taint edit of a cluster would do to the placements, before it is saved (the taint editor's preview).

The placements that hold the cluster or count it as a candidate are evaluated by `service.evaluate` on
the hub's inventory with the edited cluster in place of the stored one; an OCM placement that only the
taint filter decides about is settled by that filter alone. The inventory's taint editor reaches this
through its hook `inventory.editing.taint_impacts`, filled by `register` when the app is ready.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from inventory import editing, scheduler_inputs
from inventory.editing import FLEET_CLUSTER
from inventory.models import ManagedCluster, ManagedClusterSetBinding
from placement import queries, service
from placement.models import Placement
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.report import FleetScheduleResult
from placement.scheduler.fleet.types import PICK_ALL, PICK_FIXED
from placement.scheduler.ocm import triggers
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.taints import cluster_tolerated, toleration_error, untolerated_reason
from placement.scheduler.ocm.types import Placement as OcmPlacement

# the hub's inventory as cached, and with the edited cluster
Snapshots = tuple[service.HubSnapshot, service.HubSnapshot]

KEEPS, DROPS, GAINS, STAYS_OUT, UNKNOWN = "keeps", "drops", "gains", "stays out", "unknown"


@dataclass(frozen=True)
class Impact:
    """What a taint edit does to one placement's hold on the cluster."""

    placement: Placement
    holds: bool
    would_hold: bool
    # why the edited cluster would not be selected (the scheduler's sentence), or why it was not evaluated
    reason: str = ""
    evaluated: bool = True

    @property
    def verdict(self) -> str:
        if not self.evaluated:
            return UNKNOWN
        if self.holds:
            return KEEPS if self.would_hold else DROPS
        return GAINS if self.would_hold else STAYS_OUT


def _edited_snapshot(
    snapshot: service.HubSnapshot, cluster: ManagedCluster, taints: list[dict[str, str]]
) -> service.HubSnapshot:
    """`snapshot` (the hub's cached inventory, left untouched) with `cluster` carrying `taints`."""
    edited = copy.copy(cluster)
    edited.taints = taints
    if cluster.kind == FLEET_CLUSTER:
        members = {c.name: c for c in snapshot.fleet.clusters}
        members[cluster.name] = scheduler_inputs.member_cluster(edited)
        return dataclasses.replace(snapshot, fleet=FleetInventory(members.values()))
    ocm = snapshot.ocm
    clusters = {c.name: c for c in ocm.clusters}
    clusters[cluster.name] = scheduler_inputs.managed_cluster(edited)
    inventory = OcmInventory(
        clusters.values(), ocm.cluster_sets.values(), ocm.bindings, ocm.add_on_scores.values(), ocm.decisions
    )
    return dataclasses.replace(snapshot, ocm=inventory)


def _ocm_candidates(cluster: ManagedCluster) -> set[int]:
    """Placements that count the cluster as a candidate: a set holding it is bound to their namespace
    and they list that set or none (the scheduler's own trigger rule)."""
    set_names = cluster.memberships.values_list("cluster_set__name", flat=True)
    bindings = [
        scheduler_inputs.cluster_set_binding(row)
        for row in ManagedClusterSetBinding.objects.filter(hub_id=cluster.hub_id, cluster_set__in=set_names)
    ]
    rows = Placement.objects.filter(
        hub_id=cluster.hub_id, kind=Placement.Kind.PLACEMENT, namespace__in={b.namespace for b in bindings}
    )
    parsed = {}
    for row in rows:
        try:
            parsed[row.pk] = service.parse_ocm(row)
        except ManifestError:
            continue  # a spec the scheduler cannot read decides nothing
    keys = {key for b in bindings for key in triggers.placements_affected_by_binding(b, parsed.values())}
    return {pk for pk, placement in parsed.items() if placement.key in keys}


def _placement_type(spec: Any) -> str:
    policy = spec.get("policy") if isinstance(spec, Mapping) else None
    return (policy.get("placementType") if isinstance(policy, Mapping) else None) or PICK_ALL


def _fleet_candidates(cluster: ManagedCluster) -> set[int]:
    """Every CRP of the hub that filters by taints: PickFixed ignores them."""
    rows = Placement.objects.filter(hub_id=cluster.hub_id, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT)
    return {pk for pk, spec in rows.values_list("pk", "spec") if _placement_type(spec) != PICK_FIXED}


def affected_placements(cluster: ManagedCluster) -> list[Placement]:
    """The placements a taint edit of `cluster` can move: those holding it now and those that count it
    as a candidate, by namespace and name."""
    holding = set(queries.placements_selecting(cluster).values_list("pk", flat=True))
    candidates = _fleet_candidates(cluster) if cluster.kind == FLEET_CLUSTER else _ocm_candidates(cluster)
    chosen = Placement.objects.filter(pk__in=holding | candidates).select_related("hub")
    return list(chosen.order_by("namespace", "name"))


def _why_not(result: service.ScheduleResult, name: str) -> str:
    if isinstance(result, FleetScheduleResult):
        explanation = result.explain(name)
        reason = explanation.filtered_by if explanation is not None else None
    else:
        reason = result.explain(name)["filteredBy"] if name in result.inventory.position else None
    return reason or "not among the clusters selected (ranked lower)"


def _settled_by_taints(
    placement: Placement, holds: bool, name: str, snapshots: Snapshots, now: datetime
) -> Impact | None:
    """An OCM placement whose choice of the cluster only the TaintToleration filter reads (no CEL
    predicate, which may read spec.taints; tolerations the scheduler accepts): the filter's verdict on the
    stored and the edited cluster settles the preview without scheduling, unless the edit lets the
    cluster through (None: the scheduler must rank it). OCM drops untolerated clusters at once; Fleet
    keeps a tainted cluster's existing binding, so only its scheduler can tell."""
    if not placement.is_ocm:
        return None
    before, after = (snapshot.ocm for snapshot in snapshots)
    parsed = service.parse(placement)
    assert isinstance(parsed, OcmPlacement)  # an OCM placement parses as one
    if parsed.scheduling_disabled or toleration_error(parsed.tolerations) is not None:
        return None
    if any(predicate.cel_expressions for predicate in parsed.predicates):
        return None
    decided = name in before.decided_cluster_names(*parsed.key)
    stored, edited = before.cluster(name), after.cluster(name)
    if edited is None:
        return None
    if (why := untolerated_reason(edited, parsed.tolerations, decided, now)) is not None:
        return Impact(placement, holds, False, why)
    if stored is not None and cluster_tolerated(stored, parsed.tolerations, decided, now)[0]:
        return Impact(placement, holds, holds)  # the edit changes nothing the scheduler reads
    return None


def _impact(placement: Placement, name: str, snapshots: Snapshots, now: datetime) -> Impact:
    holds = name in queries.current_selection(placement)
    try:
        if settled := _settled_by_taints(placement, holds, name, snapshots, now):
            return settled
        result = service.evaluate(placement, now=now, snapshot=snapshots[1])
    except ManifestError as exc:
        return Impact(placement, holds, holds, f"not evaluated: {exc.field}: {exc.message}", evaluated=False)
    if name in result.selected:
        return Impact(placement, holds, True)
    return Impact(placement, holds, False, _why_not(result, name))


def impacts(cluster: ManagedCluster, taints: list[dict[str, str]], now: datetime) -> list[Impact]:
    """What giving `cluster` these `taints` (as the hub will store them) would do to each placement that
    holds it or counts it as a candidate; writes nothing."""
    current = service.hub_snapshot(cluster.hub)
    snapshots = (current, _edited_snapshot(current, cluster, taints))
    return [_impact(placement, cluster.name, snapshots, now) for placement in affected_placements(cluster)]


def register() -> None:
    """Answer the taint editor's previews."""
    editing.taint_impacts.fill(impacts)
