"""`FleetScheduleResult`: what one scheduling run decided, why, and the `schedule -o json` item for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from placement.scheduler.fleet.types import ClusterDecision, ClusterResourceBinding
from placement.scheduler.record import (
    FILTERED_BY,
    NAME,
    SELECTED,
    ClusterRecord,
    Ints,
    ReasonColumn,
    name_column,
)

CREATE, PATCH, UNSCHEDULE = "create", "patch", "unschedule"


@dataclass(frozen=True, slots=True)
class ClusterExplanation:
    """Why one member cluster was (not) selected: its filter reason or its scores."""

    name: str
    selected: bool
    filtered_by: str | None
    affinity_score: int | None
    topology_spread_score: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "selected": self.selected,
            "filteredBy": self.filtered_by,
            "affinityScore": self.affinity_score,
            "topologySpreadScore": self.topology_spread_score,
        }


@dataclass(frozen=True, slots=True)
class ClusterTable:
    """Per-cluster explanation columns (inventory order); explanations are built on demand."""

    names: tuple[str, ...]
    selected: np.ndarray  # bool
    filtered_by: ReasonColumn
    scored: np.ndarray  # bool: the score columns hold a score for this cluster
    affinity: np.ndarray  # int64
    topology: np.ndarray  # int64

    def record(self) -> ClusterRecord:
        """The explanation columns, keyed as `ClusterExplanation.to_dict()`, in inventory (name) order."""
        return ClusterRecord(
            {
                NAME: name_column(self.names, np.arange(len(self.names))),
                SELECTED: self.selected.astype(bool),
                FILTERED_BY: self.filtered_by.reasons(),
                "affinityScore": Ints(self.affinity.astype(np.int64), self.scored.astype(bool)),
                "topologySpreadScore": Ints(self.topology.astype(np.int64), self.scored.astype(bool)),
            }
        )

    def explain(self, index: int) -> ClusterExplanation:
        scored = bool(self.scored[index])
        return ClusterExplanation(
            name=self.names[index],
            selected=bool(self.selected[index]),
            filtered_by=self.filtered_by[index],
            affinity_score=int(self.affinity[index]) if scored else None,
            topology_spread_score=int(self.topology[index]) if scored else None,
        )


@dataclass(frozen=True, slots=True)
class ScheduledCondition:
    """The policy snapshot's `Scheduled` condition (the CRP shows it as ClusterResourcePlacementScheduled)."""

    status: bool
    reason: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Scheduled",
            "status": "True" if self.status else "False",
            "reason": self.reason,
            "message": self.message,
        }


# What the last scheduling cycle asks of the queue. KubeFleet's framework (RunSchedulingCycleFor) never
# sets RequeueAfter: its only requeue is an immediate one after a batch-limited PickN cycle (topology
# spread), and this scheduler runs those cycles itself until one asks for nothing. Bindings waiting out
# an unavailable period are requeued by the rollout controller, not by the scheduler.
REQUEUE_AFTER_SECONDS = None


@dataclass(frozen=True, slots=True)
class BindingChange:
    """A ClusterResourceBinding the scheduler would create, patch or mark Unscheduled (final content)."""

    action: str
    binding: ClusterResourceBinding


@dataclass(frozen=True, slots=True)
class FleetScheduleResult:
    """The outcome of scheduling one ClusterResourcePlacement against one inventory.

    `cycles` counts the scheduling cycles run: PickN with topology spread constraints picks one
    cluster per cycle and requeues, so a what-if run repeats cycles until a fixed point.
    """

    placement_name: str
    placement_type: str
    policy_snapshot_name: str
    decisions: tuple[ClusterDecision, ...]
    condition: ScheduledCondition
    binding_changes: tuple[BindingChange, ...]
    cluster_table: ClusterTable
    cycles: int = 1
    notes: tuple[str, ...] = ()

    @property
    def selected(self) -> tuple[str, ...]:
        """Selected cluster names in decision order."""
        return tuple(d.cluster_name for d in self.decisions if d.selected)

    def clusters(self) -> tuple[ClusterExplanation, ...]:
        """An explanation for every member cluster, in name order."""
        return tuple(self.cluster_table.explain(i) for i in range(len(self.cluster_table.names)))

    def explain(self, cluster_name: str) -> ClusterExplanation | None:
        """The explanation of one member cluster, or None when the inventory has no such cluster."""
        try:
            return self.cluster_table.explain(self.cluster_table.names.index(cluster_name))
        except ValueError:
            return None

    def _report(self, clusters: Any) -> dict[str, Any]:
        return {
            "kind": "ClusterResourcePlacement",
            "namespace": None,
            "name": self.placement_name,
            "placementType": self.placement_type,
            "selected": list(self.selected),
            "clusters": clusters,
            "conditions": [self.condition.to_dict()],
            "decisions": [d.to_dict() for d in self.decisions],
            "events": [],
            "bindings": [change.binding.to_manifest() for change in self.binding_changes],
            "cycles": self.cycles,
            "notes": list(self.notes),
            "requeueAfterSeconds": REQUEUE_AFTER_SECONDS,
        }

    def to_report(self) -> dict[str, Any]:
        """One item of `schedule -o json`: plain JSON types only."""
        return self._report(self.cluster_table.record().rows())

    def to_explanation(self) -> tuple[dict[str, Any], ClusterRecord]:
        """What a placement stores: `to_report()` without `clusters`, and the clusters as a ClusterRecord
        (`name`, `selected`, `filteredBy`, `affinityScore`, `topologySpreadScore`), in name order."""
        report = self._report(None)
        del report["clusters"]
        return report, self.cluster_table.record()
