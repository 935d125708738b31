"""The KubeFleet scheduling cycle for one ClusterResourcePlacement.

Entry point: `schedule_crp`. It classifies the placement's existing bindings, then runs the PickAll,
PickN or PickFixed flow, and returns the decisions, the Scheduled condition, the binding changes and an
explanation for every member cluster (`FleetScheduleResult`). With topology spread constraints, PickN
picks one cluster per cycle and upstream requeues at once; this function repeats those cycles until
the fixed point, updating domain counts incrementally.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from placement.scheduler.fleet.affinity import (
    REQUIRED_AFFINITY_REASON,
    affinity_scores,
    required_affinity_mask,
)
from placement.scheduler.fleet.eligibility import eligibility_reason
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.report import (
    CREATE,
    PATCH,
    UNSCHEDULE,
    BindingChange,
    ClusterTable,
    FleetScheduleResult,
    ScheduledCondition,
)
from placement.scheduler.fleet.taints import untolerated_reason, untolerated_rows
from placement.scheduler.fleet.topology import NO_VIOLATION, TopologySpread, violation_reason
from placement.scheduler.fleet.types import (
    PICK_ALL,
    PICK_FIXED,
    STATE_BOUND,
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    ClusterDecision,
    ClusterResourceBinding,
    ClusterResourcePlacement,
    ClusterScore,
    SchedulingError,
    Taint,
)
from placement.scheduler.record import ReasonColumn

FULLY_SCHEDULED_REASON = "SchedulingPolicyFulfilled"
NOT_FULLY_SCHEDULED_REASON = "SchedulingPolicyUnfulfilled"
DEFAULT_MAX_UNSELECTED_DECISIONS = 20
DECISIONS_LIMIT = 1000
ALREADY_SELECTED = "already selected under this policy"
NOT_LISTED = "not listed in spec.policy.clusterNames"
DOWNSCALED = "unscheduled by downscaling"
CLUSTER_UNSCHEDULABLE = "ClusterUnschedulable"


def _fully_scheduled(count: int) -> str:
    return f"found all cluster needed as specified by the scheduling policy, found {count} cluster(s)"


def _not_fully_scheduled(count: int) -> str:
    return (
        "could not find all clusters needed as specified by the scheduling policy, "
        f"found {count} cluster(s) instead"
    )


def _picked_reason(cluster: str, score: ClusterScore | None) -> str:
    if score is None:
        return f'Successfully scheduled resources for placement in "{cluster}": picked by scheduling policy'
    return (
        f'Successfully scheduled resources for placement in "{cluster}" '
        f"(affinity score: {score.affinity_score}, topology spread score: {score.topology_spread_score}): "
        "picked by scheduling policy"
    )


def _not_picked_reason(cluster: str, affinity: int, topology: int) -> str:
    return (
        f'Cluster "{cluster}" does not score high enough (affinity score: {affinity}, '
        f"topology spread score: {topology})"
    )


def default_policy_snapshot_name(crp: ClusterResourcePlacement) -> str:
    """The name upstream gives the first policy snapshot of a CRP (`<crp>-<index>`, index 0)."""
    return f"{crp.name}-0"


def binding_name(placement_name: str, cluster_name: str) -> str:
    """`<placement>-<cluster>-<suffix>` truncated like upstream `NewBindingName`.

    Upstream's suffix is 8 random UUID characters; a what-if run needs a stable one, so it is derived
    from the two names.
    """
    suffix = hashlib.sha1(f"{placement_name}/{cluster_name}".encode()).hexdigest()[:8]
    slots = (63 - 2 - 8) // 2
    return f"{placement_name[:slots]}-{cluster_name[: slots + 1]}-{suffix}"


def mark_unscheduled(binding: ClusterResourceBinding) -> ClusterResourceBinding:
    """The binding marked Unscheduled, remembering its state in the previous-binding-state annotation."""
    return replace(binding, state=STATE_UNSCHEDULED, previous_state=binding.state)


@dataclass(slots=True)
class BindingGroups:
    """A placement's bindings, classified as upstream `classifyBindings` does (each list by name)."""

    bound: list[ClusterResourceBinding] = field(default_factory=list)
    scheduled: list[ClusterResourceBinding] = field(default_factory=list)
    obsolete: list[ClusterResourceBinding] = field(default_factory=list)
    unscheduled: list[ClusterResourceBinding] = field(default_factory=list)
    dangling: list[ClusterResourceBinding] = field(default_factory=list)
    deleting: list[ClusterResourceBinding] = field(default_factory=list)

    @property
    def present(self) -> int:
        return len(self.scheduled) + len(self.bound)


def is_current(binding: ClusterResourceBinding, policy_snapshot_name: str) -> bool:
    """Whether a binding was made under the policy snapshot being scheduled."""
    if binding.latest_policy is not None:
        return binding.latest_policy
    return binding.scheduling_policy_snapshot_name == policy_snapshot_name


def classify_bindings(
    bindings: Iterable[ClusterResourceBinding], inventory: FleetInventory, policy_snapshot_name: str
) -> BindingGroups:
    """Split a placement's bindings into bound / scheduled / obsolete / unscheduled / dangling / deleting."""
    groups = BindingGroups()
    for binding in sorted(bindings, key=lambda b: b.name):
        cluster = inventory.get(binding.target_cluster)
        if binding.deleting:
            groups.deleting.append(binding)
        elif binding.state == STATE_UNSCHEDULED:
            groups.unscheduled.append(binding)
        elif cluster is None or cluster.deletion_timestamp is not None:
            groups.dangling.append(binding)
        elif not is_current(binding, policy_snapshot_name):
            groups.obsolete.append(binding)
        elif binding.state == STATE_SCHEDULED:
            groups.scheduled.append(binding)
        elif binding.state == STATE_BOUND:
            groups.bound.append(binding)
    return groups


def build_decisions(
    existing: Sequence[Sequence[ClusterResourceBinding]],
    not_picked: Sequence[tuple[str, int, int]],
    filtered: Sequence[tuple[str, str]],
    max_unselected: int = DEFAULT_MAX_UNSELECTED_DECISIONS,
) -> tuple[ClusterDecision, ...]:
    """Upstream `newSchedulingDecisionsFromBindings`, including its slot arithmetic.

    Selected bindings first (set by set), then scored-but-not-picked clusters, then filtered ones
    (`filtered` holds `(cluster, status text)`), at most `max_unselected` unselected, 1000 in all.
    """
    decisions: list[ClusterDecision] = []
    seen: set[str] = set()
    slots_left = DECISIONS_LIMIT
    for binding_set in existing:
        for binding in binding_set[: max(slots_left, 0)]:
            decisions.append(binding.cluster_decision or ClusterDecision(binding.target_cluster, True))
            seen.add(binding.target_cluster)
        slots_left -= len(binding_set)
        if slots_left <= 0:
            break
    for name, affinity, topology in not_picked:
        if slots_left == 0 or max_unselected == 0:
            break
        if name in seen:
            continue
        score = ClusterScore(affinity, topology)
        decisions.append(ClusterDecision(name, False, score, _not_picked_reason(name, affinity, topology)))
        slots_left -= 1
        max_unselected -= 1
    # upstream: a skipped (already seen) entry still uses up one of the remaining unselected slots
    for name, status in filtered[: max(min(max_unselected, slots_left), 0)]:
        if name not in seen:
            decisions.append(ClusterDecision(name, False, None, status))
    return tuple(decisions)


def scheduled_condition(count: int, wanted: int) -> ScheduledCondition:
    """Scheduled is True once `count` bindings reach the number the policy wants."""
    if count < wanted:
        return ScheduledCondition(False, NOT_FULLY_SCHEDULED_REASON, _not_fully_scheduled(count))
    return ScheduledCondition(True, FULLY_SCHEDULED_REASON, _fully_scheduled(count))


class _Run:
    """The mutable state of one `schedule_crp` call: bindings as they evolve, changes, explanations."""

    def __init__(
        self,
        crp: ClusterResourcePlacement,
        inventory: FleetInventory,
        groups: BindingGroups,
        now: datetime,
        policy_snapshot_name: str,
    ) -> None:
        self.crp = crp
        self.policy = crp.policy
        self.inventory = inventory
        self.groups = groups
        self.now = now
        self.snapshot = policy_snapshot_name
        self.changes: dict[str, BindingChange] = {}
        size = len(inventory)
        self.held = np.zeros(size, dtype=bool)  # a scheduled/bound binding under the current policy
        self.picked_here = np.zeros(size, dtype=bool)
        self.selected = np.zeros(size, dtype=bool)
        self.filtered_by = ReasonColumn(size)
        self.rejected = np.zeros(size, dtype=bool)  # a filter plugin rejected it (ClusterUnschedulable)
        self.scored = np.zeros(size, dtype=bool)
        self.affinity = np.zeros(size, dtype=np.int64)
        self.topology = np.zeros(size, dtype=np.int64)
        self.notes: list[str] = []
        for binding in groups.scheduled + groups.bound:
            self._hold(binding)

    def _hold(self, binding: ClusterResourceBinding) -> None:
        index = self.inventory.index[binding.target_cluster]
        self.held[index] = self.selected[index] = True
        score = binding.cluster_decision.cluster_score if binding.cluster_decision else None
        if score is not None:
            self.scored[index] = True
            self.affinity[index] = score.affinity_score
            self.topology[index] = score.topology_spread_score

    def record(self, action: str, binding: ClusterResourceBinding) -> None:
        """Remember the final content of a changed binding (first change keeps its position)."""
        previous = self.changes.get(binding.name)
        if previous is not None and previous.action == CREATE:
            action = CREATE
        self.changes[binding.name] = BindingChange(action, binding)

    def unschedule(self, bindings: Iterable[ClusterResourceBinding]) -> list[ClusterResourceBinding]:
        marked = [mark_unscheduled(b) for b in bindings]
        for binding in marked:
            self.record(UNSCHEDULE, binding)
            index = self.inventory.index.get(binding.target_cluster)
            if index is not None and not self.held[index]:
                self.selected[index] = False
        return marked

    def result(
        self, decisions: tuple[ClusterDecision, ...], condition: ScheduledCondition, cycles: int = 1
    ) -> FleetScheduleResult:
        table = ClusterTable(
            self.inventory.names, self.selected, self.filtered_by, self.scored, self.affinity, self.topology
        )
        return FleetScheduleResult(
            placement_name=self.crp.name,
            placement_type=self.policy.placement_type,
            policy_snapshot_name=self.snapshot,
            decisions=decisions,
            condition=condition,
            binding_changes=tuple(self.changes.values()),
            cluster_table=table,
            cycles=cycles,
            notes=tuple(self.notes),
        )

    # --- filters -----------------------------------------------------------------------------------

    def static_filters(self) -> np.ndarray:
        """ClusterAffinity, ClusterEligibility, TaintToleration: the filters that bindings don't change.

        Writes each rejected cluster's first reason into `filtered_by`; returns the passing mask.
        """
        inventory = self.inventory
        alive = np.ones(len(inventory), dtype=bool)
        affinity = self.policy.affinity
        if affinity is not None and affinity.required_terms:
            matched = required_affinity_mask(inventory, affinity.required_terms, alive)
            self.filtered_by[alive & ~matched] = REQUIRED_AFFINITY_REASON
            alive &= matched
        ineligible = np.flatnonzero(inventory.eligibility.ineligible(self.now, alive))
        self.filtered_by.put(ineligible, *inventory.eligibility.reasons(self.now, ineligible))
        alive[ineligible] = False
        rows = inventory.taints
        untolerated = untolerated_rows(rows, self.policy.tolerations) & alive[rows.owner]
        owners, first = rows.first_per_owner(untolerated)
        # one reason text per distinct taint, handed to every cluster it rejects
        reasons = [untolerated_reason(Taint(*kind)) for kind in rows.kinds]
        self.filtered_by.put(owners, reasons, rows.kind[first])
        alive[owners] = False
        self.rejected |= ~alive
        return alive

    def filtered_statuses(self, limit: int = DEFAULT_MAX_UNSELECTED_DECISIONS) -> list[tuple[str, str]]:
        """`(cluster, status text)` of the first `limit` clusters (by name) a filter plugin rejected."""
        return [
            (self.inventory.names[i], f"{CLUSTER_UNSCHEDULABLE}, {self.filtered_by[i]}")
            for i in np.flatnonzero(self.rejected)[:limit]
        ]

    # --- cross-reference ---------------------------------------------------------------------------

    def cross_reference(
        self, picked: Sequence[int], scores: Mapping[int, ClusterScore | None]
    ) -> tuple[list[ClusterResourceBinding], list[ClusterResourceBinding], list[ClusterResourceBinding]]:
        """Upstream `crossReferencePickedClustersAndDeDupBindings`: (created, patched, unscheduled)."""
        names = self.inventory.names
        picked_by_name = {names[i]: i for i in picked}
        checked: set[str] = set()
        patched: list[ClusterResourceBinding] = []
        to_delete: list[ClusterResourceBinding] = []
        for binding in self.groups.obsolete:
            checked.add(binding.target_cluster)
            index = picked_by_name.get(binding.target_cluster)
            if index is None:
                to_delete.append(binding)
            else:
                patched.append(self._repoint(binding, binding.state, scores[index]))
        for binding in self.groups.unscheduled:
            checked.add(binding.target_cluster)
            index = picked_by_name.get(binding.target_cluster)
            if index is None:
                continue
            patched.append(self._restore(binding, scores[index]))
        created = [self._new_binding(names[i], scores[i]) for i in picked if names[i] not in checked]
        return created, patched, to_delete

    def _decision(self, cluster: str, score: ClusterScore | None) -> ClusterDecision:
        return ClusterDecision(cluster, True, score, _picked_reason(cluster, score))

    def _repoint(
        self, binding: ClusterResourceBinding, state: str, score: ClusterScore | None
    ) -> ClusterResourceBinding:
        return replace(
            binding,
            state=state,
            scheduling_policy_snapshot_name=self.snapshot,
            latest_policy=None,
            cluster_decision=self._decision(binding.target_cluster, score),
        )

    def _restore(self, binding: ClusterResourceBinding, score: ClusterScore | None) -> ClusterResourceBinding:
        """An Unscheduled binding picked again, back in the state its previous-state annotation names."""
        if binding.previous_state is None:
            raise SchedulingError(
                "framework", f"failed to find the previous state of an unscheduled binding: {binding.name}"
            )
        return replace(self._repoint(binding, binding.previous_state, score), previous_state=None)

    def _new_binding(self, cluster: str, score: ClusterScore | None) -> ClusterResourceBinding:
        return ClusterResourceBinding(
            name=binding_name(self.crp.name, cluster),
            placement_name=self.crp.name,
            target_cluster=cluster,
            state=STATE_SCHEDULED,
            scheduling_policy_snapshot_name=self.snapshot,
            cluster_decision=self._decision(cluster, score),
        )

    def apply(
        self,
        created: list[ClusterResourceBinding],
        patched: list[ClusterResourceBinding],
        to_delete: list[ClusterResourceBinding],
        topology: TopologySpread | None = None,
    ) -> None:
        """Record the changes and move the bindings to their new groups (what the next cycle lists)."""
        for binding in created:
            self.record(CREATE, binding)
        for binding in patched:
            self.record(PATCH, binding)
        unscheduled = self.unschedule(to_delete)
        changed = {b.name for b in patched} | {b.name for b in to_delete}
        groups = self.groups
        groups.obsolete = [b for b in groups.obsolete if b.name not in changed]
        groups.unscheduled = sorted(
            [b for b in groups.unscheduled if b.name not in changed] + unscheduled, key=lambda b: b.name
        )
        for binding in created + patched:
            target = groups.bound if binding.state == STATE_BOUND else groups.scheduled
            target.append(binding)
            index = self.inventory.index[binding.target_cluster]
            if not self.held[index] and topology is not None:
                topology.add_binding(index)
            self.held[index] = self.selected[index] = self.picked_here[index] = True
        groups.scheduled.sort(key=lambda b: b.name)
        groups.bound.sort(key=lambda b: b.name)


def _decision_score(binding: ClusterResourceBinding) -> tuple[int, int, int, str]:
    score = binding.cluster_decision.cluster_score if binding.cluster_decision else None
    if score is None:
        # upstream: a binding without a stored score is trimmed first
        return (0, 0, 0, binding.target_cluster)
    return (1, score.topology_spread_score, score.affinity_score, binding.target_cluster)


def _downscale(run: _Run, wanted: int) -> FleetScheduleResult:
    """PickN with too many (or lingering obsolete) bindings: trim scheduled first, then bound."""
    groups = run.groups
    run.unschedule(groups.obsolete)
    count = groups.present - wanted
    scheduled, bound = groups.scheduled, groups.bound
    if 0 < count <= len(scheduled):
        ordered = sorted(scheduled, key=_decision_score)
        trimmed, scheduled = ordered[:count], ordered[count:]
    elif count > len(scheduled):
        left = count - len(scheduled)
        ordered = sorted(bound, key=_decision_score)
        trimmed, scheduled, bound = scheduled + ordered[:left], [], ordered[left:]
    else:
        trimmed = []
    for binding in trimmed:
        run.held[run.inventory.index[binding.target_cluster]] = False
    for binding in run.unschedule(trimmed):
        run.filtered_by[run.inventory.index[binding.target_cluster]] = DOWNSCALED
    run.notes.append(
        f"downscaled: {len(trimmed)} binding(s) unscheduled, {len(groups.obsolete)} obsolete removed"
    )
    decisions = build_decisions([scheduled, bound], [], [])
    return run.result(decisions, scheduled_condition(len(scheduled) + len(bound), wanted))


def _pick_n(run: _Run) -> FleetScheduleResult:
    groups = run.groups
    wanted = run.policy.number_of_clusters or 0
    if wanted <= groups.present and groups.present - wanted + len(groups.obsolete) > 0:
        return _downscale(run, wanted)
    if wanted <= groups.present:
        run.notes.append(f"no scheduling needed: {groups.present} binding(s) already satisfy the policy")
        decisions = build_decisions([groups.bound, groups.scheduled], [], [])
        return run.result(decisions, scheduled_condition(groups.present, wanted))

    passed = run.static_filters()
    preferred = run.policy.affinity.preferred if run.policy.affinity else ()
    # upstream scores only clusters not already selected (a bad preferred selector errors only then)
    affinity = affinity_scores(run.inventory, preferred, passed & ~run.held)
    constraints = run.policy.topology_spread_constraints
    topology = TopologySpread(run.inventory, constraints, run.held) if constraints else None
    violation = np.full(len(run.inventory), NO_VIOLATION)
    topology_scores = np.zeros(len(run.inventory), dtype=np.int64)
    # upstream SamePlacementAffinity: 1 on a cluster holding an obsolete binding when the cycle starts
    obsolete = np.zeros(len(run.inventory), dtype=np.int64)
    obsolete[[run.inventory.index[b.target_cluster] for b in groups.obsolete]] = 1
    cycles = 0
    while True:
        cycles += 1
        desired = wanted - groups.present
        # upstream PostBatch: topology spread constraints limit each cycle to one cluster
        limit = 1 if constraints else desired
        candidates = passed & ~run.held
        if topology is not None:
            violation, topology_scores = topology.evaluate()
            candidates &= violation == NO_VIOLATION
        indices = np.flatnonzero(candidates)
        count = min(desired, limit, indices.size)
        final = not (desired > limit and count == limit)
        listed = count + DEFAULT_MAX_UNSELECTED_DECISIONS
        order = (
            _ordered(indices, topology_scores, affinity, obsolete, top=listed)
            if final
            else _best(indices, topology_scores, affinity, obsolete)
        )
        picked = [int(i) for i in order[:count]]
        scores = {i: ClusterScore(int(affinity[i]), int(topology_scores[i])) for i in picked}
        for index in picked:
            run.scored[index] = True
            run.affinity[index], run.topology[index] = affinity[index], topology_scores[index]
        existing_scheduled, existing_bound = list(groups.scheduled), list(groups.bound)
        created, patched, to_delete = run.cross_reference(picked, scores)
        run.apply(created, patched, to_delete, topology)
        # every obsolete binding is now re-pointed (held) or marked Unscheduled: no later cycle sees one
        obsolete[:] = 0
        if not final and len(created) + len(patched) == limit:
            continue
        if not final:
            order = _ordered(indices, topology_scores, affinity, obsolete, top=listed)
        _explain_final_cycle(run, passed, candidates, violation, topology, affinity, topology_scores)
        shown = order[count : count + DEFAULT_MAX_UNSELECTED_DECISIONS]
        not_picked = [(run.inventory.names[i], int(affinity[i]), int(topology_scores[i])) for i in shown]
        statuses = run.filtered_statuses()
        decisions = build_decisions(
            [created, patched, existing_scheduled, existing_bound], not_picked, statuses
        )
        bindings = len(created) + len(patched) + len(existing_scheduled) + len(existing_bound)
        if cycles > 1:
            run.notes.append(f"topology spread: {cycles} cycles of one pick each, run to a fixed point")
        return run.result(decisions, scheduled_condition(bindings, wanted), cycles)


@dataclass(frozen=True, slots=True)
class ScoredCluster:
    """A cluster that passed every filter, with its score tuple."""

    name: str
    topology_spread_score: int = 0
    affinity_score: int = 0
    obsolete_placement_affinity_score: int = 0


def sort_scored_clusters(scored: Sequence[ScoredCluster]) -> list[ScoredCluster]:
    """Descending (topology, affinity, obsolete) tuple order, the larger name first on ties (PickN)."""
    by_name = sorted(scored, key=lambda c: c.name)
    order = _ordered(
        np.arange(len(by_name)),
        np.array([c.topology_spread_score for c in by_name], dtype=np.int64),
        np.array([c.affinity_score for c in by_name], dtype=np.int64),
        np.array([c.obsolete_placement_affinity_score for c in by_name], dtype=np.int64),
    )
    return [by_name[i] for i in order]


def pick_top_n(
    scored: Sequence[ScoredCluster], count: int
) -> tuple[list[ScoredCluster], list[ScoredCluster]]:
    """Upstream `pickTopNScoredClusters`: (picked, not picked), both in descending order."""
    ordered = sort_scored_clusters(scored)
    return ordered[:count], ordered[count:]


# (topology, affinity, obsolete) packed into one int64 so a single comparison orders whole tuples:
# 2 * affinity + obsolete stays far inside one topology step (affinity is a sum of weights <= 100).
_TOPOLOGY_STEP = np.int64(2**32)


def _tuple_keys(
    indices: np.ndarray, topology: np.ndarray, affinity: np.ndarray, obsolete: np.ndarray
) -> np.ndarray:
    keys: np.ndarray = (
        topology[indices] * _TOPOLOGY_STEP + affinity[indices].astype(np.int64) * 2 + obsolete[indices]
    )
    return keys


def _ordered(
    indices: np.ndarray,
    topology: np.ndarray,
    affinity: np.ndarray,
    obsolete: np.ndarray,
    top: int | None = None,
) -> np.ndarray:
    """Candidates by descending (topology, affinity, obsolete) tuple; ties put the larger name first.

    With `top`, only a prefix holding at least the best `top` is sorted (every tie at its edge kept).
    """
    keys = _tuple_keys(indices, topology, affinity, obsolete)
    if top is not None and 0 < top < keys.size:
        kept = keys >= np.partition(keys, keys.size - top)[keys.size - top]
        indices, keys = indices[kept], keys[kept]
    # index order is name order, so reversing a stable ascending sort reverses the name tie-break too
    return indices[np.argsort(keys, kind="stable")[::-1]]


def _best(
    indices: np.ndarray, topology: np.ndarray, affinity: np.ndarray, obsolete: np.ndarray
) -> np.ndarray:
    """The single best candidate: highest (topology, affinity, obsolete) tuple, then the larger name."""
    if indices.size == 0:
        return indices
    keys = _tuple_keys(indices, topology, affinity, obsolete)
    last_maximum = keys.size - 1 - int(np.argmax(keys[::-1]))
    return indices[last_maximum : last_maximum + 1]


def _explain_final_cycle(
    run: _Run,
    passed: np.ndarray,
    candidates: np.ndarray,
    violation: np.ndarray,
    topology: TopologySpread | None,
    affinity: np.ndarray,
    topology_scores: np.ndarray,
) -> None:
    """Explanation columns from the last cycle; clusters picked in this run keep their pick-time scores."""
    fresh = candidates & ~run.picked_here
    run.scored[fresh] = True
    run.affinity[fresh] = affinity[fresh]
    run.topology[fresh] = topology_scores[fresh]
    kept = passed & run.held & ~run.picked_here
    run.filtered_by[kept] = ALREADY_SELECTED
    if topology is not None:
        for position, constraint in enumerate(topology.constraints):
            violators = passed & ~run.held & (violation == position)
            run.filtered_by[violators] = violation_reason(constraint)
            run.rejected |= violators


def _pick_all(run: _Run) -> FleetScheduleResult:
    groups = run.groups
    passed = run.static_filters()
    candidates = passed & ~run.held
    violation = np.full(len(run.inventory), NO_VIOLATION)
    topology = None
    if run.policy.topology_spread_constraints:
        topology = TopologySpread(run.inventory, run.policy.topology_spread_constraints, run.held)
        violation, _ = topology.evaluate()
        candidates &= violation == NO_VIOLATION
    picked = [int(i) for i in np.flatnonzero(candidates)]
    zero = np.zeros(len(run.inventory), dtype=np.int64)
    existing_scheduled, existing_bound = list(groups.scheduled), list(groups.bound)
    created, patched, to_delete = run.cross_reference(picked, dict.fromkeys(picked, ClusterScore(0, 0)))
    run.apply(created, patched, to_delete)
    run.scored[picked] = True
    _explain_final_cycle(run, passed, candidates, violation, topology, zero, zero)
    statuses = run.filtered_statuses()
    decisions = build_decisions([created, patched, existing_scheduled, existing_bound], [], statuses)
    # upstream: for PickAll the wanted count is whatever was found, so Scheduled is always True
    count = len(created) + len(patched) + len(existing_scheduled) + len(existing_bound)
    return run.result(decisions, scheduled_condition(count, count))


def _pick_fixed(run: _Run) -> FleetScheduleResult:
    """PickFixed runs no plugin: each listed name is valid, invalid (ineligible) or not found."""
    groups, inventory = run.groups, run.inventory
    names = run.policy.cluster_names
    run.filtered_by[:] = NOT_LISTED
    valid: list[str] = []
    decisions: list[ClusterDecision] = []
    invalid: list[ClusterDecision] = []
    not_found: list[ClusterDecision] = []
    for name in names:
        cluster = inventory.get(name)
        if cluster is None:
            not_found.append(ClusterDecision(name, False, None, f'Specified cluster "{name}" is not found'))
            continue
        index = inventory.index[name]
        why = eligibility_reason(cluster, run.now)
        run.filtered_by[index] = why
        if why is not None:
            reason = f'Cluster "{name}" is not eligible for resource placement yet: {why}'
            invalid.append(ClusterDecision(name, False, None, reason))
            continue
        valid.append(name)
        decisions.append(ClusterDecision(name, True, None, _picked_reason(name, None)))
    if not names:
        run.notes.append("no scheduling needed: the list of target clusters is empty")
        return run.result((), scheduled_condition(0, 0))
    held = {b.target_cluster for b in groups.scheduled + groups.bound}
    obsolete = {b.target_cluster: b for b in groups.obsolete}
    unscheduled = {b.target_cluster: b for b in groups.unscheduled}
    valid_set = set(valid)
    # upstream cross-references every valid name before it writes anything, so a failure writes nothing
    writes: list[tuple[str, ClusterResourceBinding]] = []
    for name in valid:
        if name in held:
            continue
        if name in obsolete:
            binding = obsolete[name]
            writes.append((PATCH, run._repoint(binding, binding.state, None)))
        elif name in unscheduled:
            writes.append((PATCH, run._restore(unscheduled[name], None)))
        else:
            writes.append((CREATE, run._new_binding(name, None)))
    for action, binding in writes:
        run.record(action, binding)
        run.selected[inventory.index[binding.target_cluster]] = True
    run.unschedule(b for b in groups.obsolete if b.target_cluster not in valid_set)
    condition = (
        ScheduledCondition(True, FULLY_SCHEDULED_REASON, _fully_scheduled(len(valid)))
        if not invalid and not not_found
        else ScheduledCondition(False, NOT_FULLY_SCHEDULED_REASON, _not_fully_scheduled(len(valid)))
    )
    return run.result(tuple(decisions + invalid + not_found), condition)


def schedule_crp(
    crp: ClusterResourcePlacement,
    inventory: FleetInventory,
    bindings: Iterable[ClusterResourceBinding] = (),
    now: datetime | None = None,
    *,
    policy_snapshot_name: str | None = None,
) -> FleetScheduleResult:
    """Run the KubeFleet scheduler for `crp` against `inventory` at `now`.

    `bindings` may hold bindings of any placement; only those of `crp` are used. A binding is under the
    current policy when its `latest_policy` flag says so, or (flag None) when its snapshot name equals
    `policy_snapshot_name` (default `<crp>-0`). Dangling bindings (cluster gone or leaving) are marked
    Unscheduled; deleting ones are ignored. Raises `SchedulingError` where upstream aborts the cycle.
    """
    if now is None:
        raise ValueError("now is required: the scheduler never reads the clock")
    snapshot = policy_snapshot_name or default_policy_snapshot_name(crp)
    own = [b for b in bindings if b.placement_name == crp.name]
    groups = classify_bindings(own, inventory, snapshot)
    run = _Run(crp, inventory, groups, now, snapshot)
    dangling = run.unschedule(groups.dangling)
    groups.unscheduled = sorted(groups.unscheduled + dangling, key=lambda b: b.name)
    flow = {PICK_FIXED: _pick_fixed, PICK_ALL: _pick_all}.get(crp.policy.placement_type, _pick_n)
    try:
        return flow(run)
    except SchedulingError as exc:
        exc.written = tuple(change.binding for change in run.changes.values())
        raise
