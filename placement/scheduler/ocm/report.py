"""The result of one OCM reconcile, and its explanations ("why was this cluster filtered / how scored").

Explanations are computed from the scheduling arrays only when asked (`explain`, `to_report`), so a
reconcile at 10,000 clusters does not build 10,000 dicts nobody reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from placement.scheduler.ocm.clustersets import ClusterSetSelectorError
from placement.scheduler.ocm.decisions import (
    BindPlan,
    DecisionGroup,
    DecisionPage,
    ExistingDecision,
    held_decisions,
)
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.predicate import predicate_reason, predicate_reason_columns
from placement.scheduler.ocm.status import ScheduleStatus
from placement.scheduler.ocm.taints import untolerated_reason, untolerated_reason_columns
from placement.scheduler.ocm.types import Placement
from placement.scheduler.record import (
    FILTERED_BY,
    NAME,
    SELECTED,
    ClusterRecord,
    Ints,
    ReasonColumn,
    Reasons,
    name_column,
)
from placement.scheduler.timeutil import go_until

if TYPE_CHECKING:
    from placement.scheduler.ocm.schedule import SchedulingOutcome

# how far a cluster got through one reconcile
OUTSIDE, DELETING, PREDICATE, TAINT, HALTED, SCORED = range(6)


# Below this, a combination of column codes is numbered as their mixed-radix number, far inside int64.
_SPAN_LIMIT = 1 << 62


def _groups(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For equal-length columns, the index of the first row of each distinct combination of their values
    and each row's combination (an index into the first), without a Python loop over the rows. The
    columns' values (flags, codes of an inventory) span small ranges, so a combination is numbered as a
    mixed-radix number of its values and the rows are sorted once; a column is renumbered densely only
    when the numbers would leave int64."""
    combined = np.zeros(len(columns[0]), dtype=np.int64)
    span = 1  # the combined numbers lie in [0, span)
    for column in columns:
        codes = column.astype(np.int64)
        codes -= codes.min(initial=0)
        width = int(codes.max(initial=0)) + 1
        if span * width >= _SPAN_LIMIT:
            distinct, inverse = np.unique(combined, return_inverse=True)
            combined, span = inverse.reshape(-1), len(distinct)
            distinct, inverse = np.unique(codes, return_inverse=True)
            codes, width = inverse.reshape(-1), len(distinct)
        combined = combined * width + codes
        span *= width
    _, first, group = np.unique(combined, return_index=True, return_inverse=True)
    return first, group.reshape(-1)


@dataclass(frozen=True, slots=True)
class ClusterSetContext:
    """Set names of steps 2–3: valid bindings of the namespace and the eligible sets."""

    bound_sets: Sequence[str]
    eligible_sets: Sequence[str]


@dataclass
class OcmScheduleResult:
    """Everything one reconcile decided, plus the Go debug views and per-cluster explanations.

    `skipped` means upstream would not touch the placement (deleting or scheduling disabled); `error`
    means the reconcile errors before scheduling (e.g. a set with an unknown selectorType): nothing is
    written either way.
    """

    placement: Placement
    inventory: OcmInventory
    now: datetime
    context: ClusterSetContext | None = None
    outcome: SchedulingOutcome | None = None
    status: ScheduleStatus | None = None
    groups: list[DecisionGroup] = field(default_factory=list)
    pages: list[DecisionPage] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    decision_groups: list[dict[str, Any]] = field(default_factory=list)
    plan: BindPlan | None = None
    conditions: list[dict[str, Any]] = field(default_factory=list)
    skipped: bool = False
    error: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return self.inventory.names

    @property
    def selected(self) -> list[str]:
        """Selected cluster names in score order."""
        return [] if self.outcome is None else [self.names[p] for p in self.outcome.selected]

    @property
    def decision_order(self) -> list[str]:
        """Cluster names as the PlacementDecisions list them (groups in order, names sorted within)."""
        return [name for page in self.pages for name in page.cluster_names]

    @property
    def number_of_selected_clusters(self) -> int:
        return 0 if self.outcome is None else len(self.outcome.selected)

    @property
    def requeue_after(self) -> timedelta | None:
        """Delay after which upstream re-adds the placement to its queue (toleration expiry); upstream
        measures it with time.Until, so a far expiry is held at Go's longest Duration."""
        if self.outcome is None or self.outcome.requeue_at is None:
            return None
        return go_until(self.outcome.requeue_at, self.now)

    @property
    def feasible(self) -> list[str] | None:
        """Names left after every filter plugin, in inventory order; None when the filters did not all run."""
        positions = None if self.outcome is None else self.outcome.feasible
        return None if positions is None else [self.names[p] for p in positions.tolist()]

    def held_decisions(self) -> list[dict[str, Any]]:
        """The placement's PlacementDecisions as the hub holds them after this reconcile's writes."""
        existing = [
            ExistingDecision(d.name, d.labels, d.cluster_names)
            for d in self.inventory.own_decisions(*self.placement.key)
        ]
        return [
            {"name": d.name, "labels": dict(d.labels), "clusters": list(d.cluster_names)}
            for d in held_decisions(existing, self.plan)
        ]

    @property
    def events(self) -> list[dict[str, Any]]:
        return [] if self.plan is None else [dict(e) for e in self.plan.events]

    @property
    def weights(self) -> dict[str, int]:
        """Weight per prioritizer name; duplicate AddOn configs add up, as upstream double-counts them."""
        weights: dict[str, int] = {}
        for result in [] if self.outcome is None else self.outcome.scores:
            name = result.prioritizer.name
            weights[name] = weights.get(name, 0) + result.prioritizer.weight
        return weights

    def filter_results(self) -> list[dict[str, Any]]:
        return [] if self.outcome is None else self.outcome.filter_results(self.names)

    def prioritizer_results(self) -> list[dict[str, Any]]:
        return [] if self.outcome is None else self.outcome.prioritizer_results(self.names)

    @cached_property
    def _stages(self) -> np.ndarray:
        stages = np.full(self.inventory.size, OUTSIDE, dtype=np.int8)
        if self.context is not None:
            stages[self._eligible_members() & self.inventory.deleting] = DELETING
        outcome = self.outcome
        if outcome is None:
            return stages
        stages[outcome.candidates] = HALTED
        previous = outcome.candidates
        for record, stage in zip(outcome.records, (PREDICATE, TAINT), strict=False):
            stages[previous] = stage
            stages[record.positions] = HALTED
            previous = record.positions
        if outcome.scored is not None:
            stages[outcome.scored] = SCORED
        return stages

    @cached_property
    def _ranks(self) -> np.ndarray:
        """Per inventory position its rank, 0 when unranked: an array, since a what-if explains a few
        clusters of a fleet whose every position a dict would have to hold."""
        ranks = np.zeros(self.inventory.size, dtype=np.int64)
        if self.outcome is not None:
            ranked = np.asarray(self.outcome.ranked, dtype=np.int64)
            ranks[ranked] = np.arange(1, len(ranked) + 1)
        return ranks

    @cached_property
    def _offsets(self) -> np.ndarray:
        """Per inventory position its offset among the scored clusters (-1 when not scored)."""
        offsets = np.full(self.inventory.size, -1, dtype=np.int64)
        if self.outcome is not None and self.outcome.scored is not None:
            scored = np.asarray(self.outcome.scored, dtype=np.int64)
            offsets[scored] = np.arange(len(scored))
        return offsets

    def _filtered_by(self, position: int) -> str | None:
        stage = int(self._stages[position])
        cluster = self.inventory.clusters[position]
        if stage == SCORED:
            return None
        if stage == DELETING:
            return "is being deleted"
        outcome = self.outcome
        if outcome is None:  # without an outcome a cluster is either deleting or outside
            return self._outside_reason()
        if stage == PREDICATE:
            return predicate_reason(outcome.predicates, self.inventory, position)
        if stage == TAINT:
            decided = cluster.name in self.inventory.decided_cluster_names(*self.placement.key)
            return untolerated_reason(cluster, self.placement.tolerations, decided, self.now)
        if stage == HALTED:
            status = self.status or outcome.status
            return f"not scheduled: the placement is {status.code} ({status.plugin}:{status.message})"
        return self._outside_reason()

    def _reason_column(self, positions: np.ndarray) -> Reasons:
        """`_filtered_by` of these positions as a reason column (texts in first-seen order, as
        `Reasons.of` numbers them), each distinct reason computed once: a predicate reason depends only on
        the cluster's values of the keys the predicates read (and its CEL verdicts), a taint reason only
        on its taints and whether it is decided, and every other stage gives all its clusters one reason,
        set for all at once. What a reason depends on is coded per inventory, shared by every placement
        (`_reason_columns`), and grouped as arrays: thousands of filtered clusters of a large fleet share
        a handful of reasons, each computed for its first cluster only."""
        stages = self._stages[positions]
        column = ReasonColumn(len(positions))
        for stage in np.unique(stages).tolist():
            at = np.flatnonzero(stages == stage)
            if stage == SCORED:
                continue
            if stage in (PREDICATE, TAINT):
                reached = positions[at]
                first, group = _groups(self._reason_columns(stage, reached))
                column.put(at, [self._filtered_by(p) for p in reached[first].tolist()], group)
            else:
                column[at] = self._filtered_by(int(positions[at[0]]))
        return column.reasons()

    def _reason_columns(self, stage: int, positions: np.ndarray) -> list[np.ndarray]:
        """Columns over `positions` (all at `stage`, PREDICATE or TAINT) that clusters with the same
        reason have equal, coded once per inventory (see the functions answering them)."""
        assert self.outcome is not None  # only an outcome puts clusters at these stages
        if stage == PREDICATE:
            return predicate_reason_columns(self.outcome.predicates, self.inventory, positions)
        decided = self.inventory.decided_mask(*self.placement.key)
        return untolerated_reason_columns(self.placement.tolerations, self.inventory, positions, decided)

    def _outside_reason(self) -> str:
        namespace = self.placement.namespace
        if self.context is None:
            return "not among the candidate clusters"
        if not self.context.bound_sets:
            return f"no ManagedClusterSet is bound to namespace {namespace}"
        if not self.context.eligible_sets:
            wanted = ", ".join(self.placement.cluster_sets)
            return f"none of spec.clusterSets [{wanted}] is bound to namespace {namespace}"
        eligible = ", ".join(self.context.eligible_sets)
        where = f"bound to namespace {namespace}"
        return f"not a member of any ManagedClusterSet {where} (eligible sets: {eligible})"

    def explain(self, cluster_name: str) -> dict[str, Any]:
        """One cluster: whether it was selected, what filtered it, its raw scores, total and rank."""
        position = self.inventory.position[cluster_name]
        rank = int(self._ranks[position]) or None
        scores: dict[str, int] = {}
        total = None
        if rank is not None and self.outcome is not None:
            # one element of each column: a what-if explains a page of clusters of the whole fleet
            offset = int(self._offsets[position])
            for result in self.outcome.scores:
                if result.scored[offset]:
                    scores[result.prioritizer.name] = int(result.values[offset])
            total = int(self.outcome.totals[rank - 1])
        return {
            "name": cluster_name,
            "selected": rank is not None and rank <= self.number_of_selected_clusters,
            "filteredBy": self._filtered_by(position),
            "scores": scores,
            "total": total,
            "rank": rank,
        }

    def cluster_record(self, *, summarise_outside: bool = False) -> tuple[ClusterRecord, np.ndarray]:
        """Per-cluster explanation columns, ranked clusters first (by rank), then the rest in inventory
        order, and the positions left out as outside the eligible sets (only with `summarise_outside`).

        Built from the scheduling arrays; a filter reason is computed only for the clusters that were
        not ranked.
        """
        outcome = self.outcome
        ranked = np.zeros(0, dtype=np.int64) if outcome is None else np.asarray(outcome.ranked)
        unlisted = np.ones(self.inventory.size, dtype=bool)
        unlisted[ranked] = False
        outside = np.zeros(0, dtype=np.int64)
        if summarise_outside:
            members = self._eligible_members()
            outside = np.flatnonzero(unlisted & ~members)
            unlisted &= members
        unranked = np.flatnonzero(unlisted)
        count, rows = len(ranked), len(ranked) + len(unranked)
        selected = np.zeros(rows, dtype=bool)
        selected[: min(self.number_of_selected_clusters, count)] = True
        scores: dict[str, Ints] = {}
        totals = np.zeros(rows, dtype=np.int64)
        # clusters are ranked only when the outcome scored them
        if count and outcome is not None and outcome.scored is not None:
            offsets = np.full(self.inventory.size, -1, dtype=np.int64)
            offsets[outcome.scored] = np.arange(len(outcome.scored))
            at = offsets[ranked]
            for result in outcome.scores:
                name = result.prioritizer.name
                previous = scores.get(name) or Ints(
                    np.zeros(rows, dtype=np.int64), np.zeros(rows, dtype=bool)
                )
                values, present = previous.values.copy(), previous.present.copy()
                # duplicate AddOn configs share one name: a later scored value wins, as in explain()
                scored = result.scored[at]
                values[:count] = np.where(scored, result.values[at], values[:count])
                present[:count] |= scored
                scores[name] = Ints(values, present)
            totals[:count] = outcome.totals
        # ranked clusters passed every filter
        filtered = self._reason_column(unranked)
        ranked_here = np.zeros(rows, dtype=bool)
        ranked_here[:count] = True
        record = ClusterRecord(
            {
                NAME: name_column(self.names, np.concatenate([ranked, unranked])),
                SELECTED: selected,
                FILTERED_BY: Reasons(filtered.texts, np.concatenate([np.full(count, -1), filtered.codes])),
                "scores": scores,
                "total": Ints(totals, ranked_here),
                "rank": Ints(np.arange(1, rows + 1), ranked_here),
            }
        )
        return record, outside

    def _report(self, clusters: Any, outside: np.ndarray | None) -> dict[str, Any]:
        report: dict[str, Any] = {
            "kind": "Placement",
            "namespace": self.placement.namespace,
            "name": self.placement.name,
            "selected": self.decision_order,
            "clusters": clusters,
            "weights": self.weights,
            "conditions": self.conditions,
            "decisions": self.decisions,
            "events": [{k: e[k] for k in ("type", "reason", "message")} for e in self.events],
            "numberOfSelectedClusters": self.number_of_selected_clusters,
            "decisionGroups": self.decision_groups,
            "requeueAfterSeconds": None if self.requeue_after is None else self.requeue_after.total_seconds(),
        }
        if outside is not None:
            report["outside"] = {
                "count": len(outside),
                "reason": self._filtered_by(int(outside[0])) if len(outside) else "",
            }
        if self.skipped:
            report["skipped"] = True
        if self.error is not None:
            report["error"] = self.error
        return report

    def to_report(self, *, summarise_outside: bool = False) -> dict[str, Any]:
        """One item of `schedule -o json`: plain JSON types only, with two keys the stored explanation
        leaves out: `feasible` (the names left after every filter plugin, or None) and `heldDecisions`
        (`{name, labels, clusters}` of the placement's PlacementDecisions once the bind plan is done).

        `summarise_outside` lists only the clusters of the eligible sets and reports the others, which
        share one reason, as `outside: {count, reason}` (the stored explanation of a placement bound to
        a few sets of a 10k-cluster hub stays small).
        """
        record, outside = self.cluster_record(summarise_outside=summarise_outside)
        report = self._report(record.rows(), outside if summarise_outside else None)
        report["feasible"] = self.feasible
        report["heldDecisions"] = self.held_decisions()
        return report

    def to_explanation(self) -> tuple[dict[str, Any], ClusterRecord]:
        """What a placement stores: `to_report(summarise_outside=True)` without `clusters`, and the
        clusters as a ClusterRecord (`name`, `selected`, `filteredBy`, `scores` per prioritizer, `total`,
        `rank`), from which pages and the API build the rows they show."""
        record, outside = self.cluster_record(summarise_outside=True)
        report = self._report(None, outside)
        del report["clusters"]
        return report, record

    def _eligible_members(self) -> np.ndarray:
        """Members of the eligible sets that still exist, as a mask over the inventory; a set whose
        members cannot be listed (the reconcile's error) contributes none."""
        members = np.zeros(self.inventory.size, dtype=bool)
        for set_name in self.context.eligible_sets if self.context else ():
            if set_name in self.inventory.cluster_sets:
                try:
                    members |= self.inventory.set_mask(set_name)
                except ClusterSetSelectorError:
                    continue
        return members
