"""One KubeFleet rolling-update round: which ClusterResourceBindings move next, and why.

Mirrors the rollout controller (`pkg/controllers/rollout/controller.go` at kubefleet e160c1cd): the
deleting-binding guard, the binding classification (`pickBindingsToRoll`), readiness derived from
the binding's conditions (`isBindingReady`, `HasBindingFailed`), and the maxUnavailable / maxSurge
budgets (`calculateMaxToRemove`, `calculateMaxToAdd`). Plain data in, a `RolloutRound` out; `now` is
an argument and nothing is written back. The inputs (`PlacementPolicy`, `RollingUpdateConfig`,
`ClusterResourceBinding`) are the KubeFleet types of `fleet.types`; `fleet.manifests` parses them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from placement.scheduler.fleet.types import (
    PICK_ALL,
    PICK_FIXED,
    PICK_N,
    STATE_BOUND,
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    BindingCondition,
    ClusterResourceBinding,
    OverrideSnapshots,
    PlacementPolicy,
    RollingUpdateConfig,
)
from placement.scheduler.intstr import scaled_value

# upstream: a cluster with a deleting binding and a pending one is retried after 5 s
CLEANUP_RETRY_AFTER = timedelta(seconds=5)

ROLLOUT_STARTED = "RolloutStarted"
OVERRIDDEN = "Overridden"
WORK_SYNCHRONIZED = "WorkSynchronized"
APPLIED = "Applied"
AVAILABLE = "Available"
DIFF_REPORTED = "DiffReported"

TRUE, FALSE = "True", "False"

# upstream HasBindingFailed walks Overridden..Available in this order
_FAILURE_CONDITION_TYPES = (OVERRIDDEN, WORK_SYNCHRONIZED, APPLIED, AVAILABLE)
# upstream: in-progress states reported as Status=False are not failures
IN_PROGRESS_REASONS = frozenset(
    {"OverriddenPending", "WorkNotSynchronizedYet", "ApplyPending", "ResourceNotAvailableYet"}
)
# upstream: Available=True with these reasons only means "applied"; readiness waits out the period
_NOT_TRACKABLE_REASONS = frozenset({"NotAllWorkAreAvailabilityTrackable", "WorkNotTrackable"})

CANDIDATE_APPLY_FAILED = "ApplyFailedUpdate"
CANDIDATE_REMOVE = "Remove"
CANDIDATE_UPDATE = "Update"
CANDIDATE_BIND = "Bind"


class BindingConflictError(RuntimeError):
    """Bindings the rollout controller refuses to plan over (upstream `UnexpectedBehaviorError`)."""


# ---------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class BindingAssessment:
    """What the controller derived from one binding's conditions this round."""

    binding: ClusterResourceBinding
    ready: bool
    # time until a not-trackable binding counts as ready; None when nobody knows
    wait: timedelta | None
    failed: bool
    diff_reported: bool


@dataclass(frozen=True, slots=True)
class BindingUpdate:
    """A binding chosen (or held back) this round; `desired` is None when the binding is deleted."""

    binding: ClusterResourceBinding
    candidate: str
    desired: ClusterResourceBinding | None

    @property
    def action(self) -> str:
        """`Delete` for unscheduled bindings, otherwise `Bind` (Bound, latest snapshot, overrides)."""
        return "Delete" if self.desired is None else "Bind"


@dataclass(frozen=True, slots=True)
class RolloutBudgets:
    """The numbers behind this round's choice (upstream log line "Calculated the max number ...")."""

    target_number: int
    max_unavailable: int
    min_available: int
    max_to_remove: int
    max_surge: int
    max_to_add: int
    ready: int
    can_be_ready: int
    can_be_unavailable: int


@dataclass(frozen=True, slots=True)
class RolloutRound:
    """The plan of one reconcile round.

    `to_be_updated` is in upstream order (apply-failed, removals, in-place updates, new binds);
    `stale` bindings get RolloutStarted=False; `up_to_date` bound bindings only get a status refresh.
    When `waiting_for_cleanup` names a cluster, the round was skipped by the deleting-binding guard.
    """

    to_be_updated: tuple[BindingUpdate, ...] = ()
    stale: tuple[BindingUpdate, ...] = ()
    up_to_date: tuple[ClusterResourceBinding, ...] = ()
    need_roll: bool = False
    requeue_after: timedelta = timedelta(0)
    budgets: RolloutBudgets | None = None
    assessments: tuple[BindingAssessment, ...] = ()
    waiting_for_cleanup: str | None = None


@dataclass(slots=True)
class _Classification:
    targeted: list[ClusterResourceBinding] = field(default_factory=list)
    ready: list[ClusterResourceBinding] = field(default_factory=list)
    can_be_ready: list[ClusterResourceBinding] = field(default_factory=list)
    can_be_unavailable: list[ClusterResourceBinding] = field(default_factory=list)
    bounding: list[BindingUpdate] = field(default_factory=list)
    remove: list[BindingUpdate] = field(default_factory=list)
    update: list[BindingUpdate] = field(default_factory=list)
    apply_failed: list[BindingUpdate] = field(default_factory=list)
    up_to_date: list[ClusterResourceBinding] = field(default_factory=list)
    assessments: list[BindingAssessment] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------
# Readiness, derived from the binding's conditions


def _is_status(condition: BindingCondition | None, status: str, generation: int) -> bool:
    """condition.IsConditionStatusTrue/False: the status for the binding's current generation."""
    return (
        condition is not None and condition.status == status and condition.observed_generation == generation
    )


def is_binding_ready(
    binding: ClusterResourceBinding, ready_cutoff: datetime
) -> tuple[bool, timedelta | None]:
    """Upstream isBindingReady: (ready, wait) with `ready_cutoff = now - unavailablePeriodSeconds`.

    `wait` is how long a not-trackable binding still needs, or None when the wait is unknown.
    """
    generation = binding.generation
    if _is_status(binding.condition(DIFF_REPORTED), TRUE, generation):
        return True, timedelta(0)
    available = binding.condition(AVAILABLE)
    if available is None or not _is_status(available, TRUE, generation):
        return False, None
    if available.reason not in _NOT_TRACKABLE_REASONS:
        return True, timedelta(0)
    if available.last_transition_time is None:
        return False, None
    wait = available.last_transition_time - ready_cutoff
    # upstream: only a strictly negative wait is ready; exactly at the cutoff it waits 0 more
    if wait < timedelta(0):
        return True, timedelta(0)
    return False, wait


def has_binding_failed(binding: ClusterResourceBinding) -> bool:
    """Upstream HasBindingFailed: a terminal False among Overridden, WorkSynchronized, Applied, Available."""
    for condition_type in _FAILURE_CONDITION_TYPES:
        condition = binding.condition(condition_type)
        if condition is None or not _is_status(condition, FALSE, binding.generation):
            continue
        # an empty reason is not in the in-progress set, so it counts as a failure
        if condition.reason not in IN_PROGRESS_REASONS:
            return True
    return False


def is_binding_diff_reported(binding: ClusterResourceBinding) -> bool:
    """Upstream IsBindingDiffReported: a DiffReported condition for this generation, whatever its status."""
    condition = binding.condition(DIFF_REPORTED)
    return condition is not None and condition.observed_generation == binding.generation


def assess_binding(binding: ClusterResourceBinding, ready_cutoff: datetime) -> BindingAssessment:
    """All readiness facts of one binding, computed once for planning and explanations."""
    ready, wait = is_binding_ready(binding, ready_cutoff)
    return BindingAssessment(
        binding=binding,
        ready=ready,
        wait=wait,
        failed=has_binding_failed(binding),
        diff_reported=is_binding_diff_reported(binding),
    )


# ---------------------------------------------------------------------------------------------------
# Planning


def target_number(policy: PlacementPolicy, targeted_bindings: int) -> int:
    """Upstream calculateRealTarget: N per placement type (PickAll: the Scheduled + Bound bindings)."""
    if policy.placement_type == PICK_FIXED:
        return len(policy.cluster_names)
    if policy.placement_type == PICK_N:
        return policy.number_of_clusters or 0
    if policy.placement_type == PICK_ALL:
        return targeted_bindings
    # upstream: an unknown placement type is logged and targets 0
    return 0


def check_deleting_bindings(bindings: Sequence[ClusterResourceBinding]) -> str | None:
    """Upstream waitForResourcesToCleanUp: the cluster to wait for, None to go on; raises on conflicts.

    Clusters are checked in name order so the answer is deterministic (upstream walks a Go map).
    """
    deleting_clusters: set[str] = set()
    live: dict[str, ClusterResourceBinding] = {}
    for binding in bindings:
        if binding.deleting:
            deleting_clusters.add(binding.target_cluster)
            continue
        if binding.target_cluster in live:
            raise BindingConflictError(
                f"the same cluster `{binding.target_cluster}` has bindings "
                f"`{live[binding.target_cluster].name}` and `{binding.name}` pointing to it"
            )
        live[binding.target_cluster] = binding
    for cluster in sorted(live.keys() & deleting_clusters):
        binding = live[cluster]
        if binding.state == STATE_BOUND:
            # upstream: rollout never binds next to a deleting binding, so this cannot be explained
            raise BindingConflictError(
                f"find a cluster `{cluster}` that has a bound binding `{binding.name}` "
                "and a deleting binding point to it"
            )
        if binding.state == STATE_UNSCHEDULED and binding.previous_state == STATE_BOUND:
            raise BindingConflictError(
                f"find a cluster `{cluster}` that has a unscheduled binding `{binding.name}` "
                "with previous state is `bound` and a deleting binding point to it"
            )
        return cluster
    return None


def plan_rolling_update_round(
    policy: PlacementPolicy,
    config: RollingUpdateConfig,
    bindings: Sequence[ClusterResourceBinding],
    latest_resource_snapshot_name: str,
    now: datetime,
    desired_overrides: Mapping[str, OverrideSnapshots] | None = None,
) -> RolloutRound:
    """Plan one rollout-controller round over a placement's bindings (in API list order).

    `desired_overrides` maps a target cluster to the override snapshots it should carry (missing
    clusters: none). Raises BindingConflictError where upstream returns an unexpected-behavior error.
    """
    blocked = check_deleting_bindings(bindings)
    if blocked is not None:
        return RolloutRound(requeue_after=CLEANUP_RETRY_AFTER, waiting_for_cleanup=blocked)

    period = timedelta(seconds=config.unavailable_period_seconds)
    found = _classify(bindings, latest_resource_snapshot_name, now - period, desired_overrides or {})
    budgets = _budgets(policy, config, found)
    requeue_after = _requeue_after(found.assessments, period)
    assessments = tuple(found.assessments)
    if not (found.remove or found.update or found.bounding or found.apply_failed):
        return RolloutRound(
            up_to_date=tuple(found.up_to_date),
            requeue_after=requeue_after,
            budgets=budgets,
            assessments=assessments,
        )

    chosen = list(found.apply_failed)
    removal_slots = max(budgets.max_to_remove, 0)
    removals = found.remove[:removal_slots]
    updates = found.update[: removal_slots - len(removals)]
    binds = found.bounding[: max(budgets.max_to_add, 0)]
    chosen += removals + updates + binds
    # upstream: unchosen removals are never reported stale; unchosen updates/binds are
    stale = found.update[len(updates) :] + found.bounding[len(binds) :]
    return RolloutRound(
        to_be_updated=tuple(chosen),
        stale=tuple(stale),
        up_to_date=tuple(found.up_to_date),
        need_roll=True,
        requeue_after=requeue_after,
        budgets=budgets,
        assessments=assessments,
    )


def _desired(
    binding: ClusterResourceBinding, latest: str, overrides: Mapping[str, OverrideSnapshots]
) -> ClusterResourceBinding:
    """Upstream createUpdateInfo: Bound, pointing at the latest snapshot, with the cluster's overrides."""
    wanted = overrides.get(binding.target_cluster, OverrideSnapshots())
    return replace(binding, state=STATE_BOUND, resource_snapshot_name=latest, overrides=wanted)


def _classify(
    bindings: Sequence[ClusterResourceBinding],
    latest: str,
    ready_cutoff: datetime,
    overrides: Mapping[str, OverrideSnapshots],
) -> _Classification:
    found = _Classification()
    for binding in bindings:
        if binding.state == STATE_SCHEDULED:
            # upstream: Scheduled bindings are not assessed; they only wait for a bind slot
            found.targeted.append(binding)
            found.bounding.append(
                BindingUpdate(binding, CANDIDATE_BIND, _desired(binding, latest, overrides))
            )
            continue
        if binding.state not in (STATE_BOUND, STATE_UNSCHEDULED):
            continue
        assessment = assess_binding(binding, ready_cutoff)
        found.assessments.append(assessment)
        if assessment.ready:
            found.ready.append(binding)
        if not assessment.failed and not assessment.diff_reported:
            found.can_be_ready.append(binding)
        if binding.deleting:
            # upstream: a deleting binding may vanish at any time, so a ready one can become unavailable
            if assessment.ready:
                found.can_be_unavailable.append(binding)
            if binding.state == STATE_BOUND:
                found.targeted.append(binding)
            continue
        if binding.state == STATE_UNSCHEDULED:
            found.remove.append(BindingUpdate(binding, CANDIDATE_REMOVE, None))
            continue
        found.targeted.append(binding)
        _classify_live_bound(found, assessment, latest, overrides)
    return found


def _classify_live_bound(
    found: _Classification,
    assessment: BindingAssessment,
    latest: str,
    overrides: Mapping[str, OverrideSnapshots],
) -> None:
    binding = assessment.binding
    desired = _desired(binding, latest, overrides)
    if binding.resource_snapshot_name == latest and binding.overrides == desired.overrides:
        found.up_to_date.append(binding)
    elif assessment.failed:
        # upstream: updating a failed binding cannot lower availability, so it skips the budget
        found.apply_failed.append(BindingUpdate(binding, CANDIDATE_APPLY_FAILED, desired))
    else:
        found.update.append(BindingUpdate(binding, CANDIDATE_UPDATE, desired))


def _budgets(policy: PlacementPolicy, config: RollingUpdateConfig, found: _Classification) -> RolloutBudgets:
    target = target_number(policy, len(found.targeted))
    # upstream: both percentages are taken of N and rounded up; no extra clamp to 1
    max_unavailable = scaled_value(config.max_unavailable, target, round_up=True)
    max_surge = scaled_value(config.max_surge, target, round_up=True)
    min_available = target - max_unavailable
    return RolloutBudgets(
        target_number=target,
        max_unavailable=max_unavailable,
        min_available=min_available,
        max_to_remove=(len(found.ready) - len(found.can_be_unavailable)) - min_available,
        max_surge=max_surge,
        max_to_add=(target + max_surge) - len(found.can_be_ready),
        ready=len(found.ready),
        can_be_ready=len(found.can_be_ready),
        can_be_unavailable=len(found.can_be_unavailable),
    )


def _requeue_after(assessments: Sequence[BindingAssessment], period: timedelta) -> timedelta:
    """Smallest known wait of a not-ready binding, capped at the period; 0 when everything is ready."""
    not_ready = [a for a in assessments if not a.ready]
    if not not_ready:
        return timedelta(0)
    known = [a.wait for a in not_ready if a.wait is not None and a.wait < period]
    return min(known, default=period)
