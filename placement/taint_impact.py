"""What a taint edit of a cluster would do to the placements, before it is saved (the taint editor's preview).

The placements that hold the cluster or count it as a candidate are evaluated by `service.evaluate` on
the hub's inventory with the edited cluster in place of the stored one; an OCM placement that only the
taint filter decides about is settled by that filter alone. The inventory's taint editor reaches this
through its hook `inventory.editing.taint_impacts`, filled by `register` when the app is ready.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime

from inventory import editing
from inventory.models import ManagedCluster
from placement import families, queries, service
from placement.models import Placement
from placement.scheduler.errors import ManifestError

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
    return families.of_cluster(cluster.kind).edited_snapshot(snapshot, edited)


def affected_placements(cluster: ManagedCluster) -> list[Placement]:
    """The placements a taint edit of `cluster` can move: those holding it now and those that count it
    as a candidate, by namespace and name."""
    holding = set(queries.placements_selecting(cluster).values_list("pk", flat=True))
    candidates = families.of_cluster(cluster.kind).taint_candidates(cluster)
    chosen = Placement.objects.filter(pk__in=holding | candidates).select_related("hub")
    return list(chosen.order_by("namespace", "name"))


def _impact(placement: Placement, name: str, snapshots: Snapshots, now: datetime) -> Impact:
    holds = name in placement.family.current_selection(placement)
    try:
        if settled := placement.family.taint_verdict(placement, holds, name, snapshots, now):
            would_hold, why = settled
            return Impact(placement, holds, would_hold, why)
        result = service.evaluate(placement, now=now, snapshot=snapshots[1])
    except ManifestError as exc:
        return Impact(placement, holds, holds, f"not evaluated: {exc.field}: {exc.message}", evaluated=False)
    if name in result.selected:
        return Impact(placement, holds, True)
    why = placement.family.filtered_by(result, name) or "not among the clusters selected (ranked lower)"
    return Impact(placement, holds, False, why)


def impacts(cluster: ManagedCluster, taints: list[dict[str, str]], now: datetime) -> list[Impact]:
    """What giving `cluster` these `taints` (as the hub will store them) would do to each placement that
    holds it or counts it as a candidate; writes nothing."""
    current = service.hub_snapshot(cluster.hub)
    snapshots = (current, _edited_snapshot(current, cluster, taints))
    return [_impact(placement, cluster.name, snapshots, now) for placement in affected_placements(cluster)]


def register() -> None:
    """Answer the taint editor's previews."""
    editing.taint_impacts.fill(impacts)
