"""KubeFleet staged update run engine: one pure reconcile of a ClusterStagedUpdateRun.

Mirrors `pkg/controllers/updaterun` (controller.go, initialization.go, validation.go, execution.go,
stop.go) at kubefleet b1bcc836, plus the later empty-stage skip (StageUpdatingSkippedNoClusters).
Kubernetes-shaped dicts in, a step out: the run's complete new status plus the bindings and approval
requests to write. No Django, no I/O and no clock (`now` is an argument), so the demo hub and the
dashboard drive runs the same way and tests can advance time by hand.

Conditions are merged with `meta.SetStatusCondition` semantics (`ocm.status.set_condition`), so a
condition's lastTransitionTime moves only when its status flips, even when a reconcile flips it twice.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.manifests import parse_cluster_resource_binding, parse_rollout_strategy
from placement.scheduler.fleet.types import (
    EXTERNAL,
    PICK_N,
    STATE_BOUND,
    STATE_UNSCHEDULED,
    ClusterResourceBinding,
    PlacementPolicy,
)
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.rollout.approval import (
    APPROVAL_ACCEPTED_CONDITION,
    APPROVED_CONDITION,
    accepted_condition,
    is_condition_true,
)
from placement.scheduler.rollout.rolling import AVAILABLE, DIFF_REPORTED, ROLLOUT_STARTED, has_binding_failed
from placement.scheduler.rollout.staged import (
    AFTER_STAGE,
    APPROVAL,
    BEFORE_STAGE,
    INITIALIZATION_FAILED,
    INITIALIZED,
    INITIALIZED_FAILED_REASON,
    INITIALIZED_SUCCEEDED_MESSAGE,
    INITIALIZED_SUCCEEDED_REASON,
    RUN_ABORTED,
    TIMED_WAIT,
    UNEXPECTED_BEHAVIOR,
    USER_ERROR,
    InitializationError,
    MemberClusterLabels,
    StagedUpdateStrategy,
    StagePlan,
    TransientBindingStateError,
    UpdateRunBinding,
    UpdateRunPlan,
    approval_request_labels,
    collect_scheduled_clusters,
    initialize_update_run,
    max_concurrency_value,
    parse_staged_update_strategy,
    timed_wait_elapsed,
)
from placement.scheduler.timeutil import format_time, parse_time

STATE_INITIALIZE, STATE_RUN, STATE_STOP = "Initialize", "Run", "Stop"

# upstream clusterUpdatingWaitTime, stageUpdatingWaitTime and updateRunStuckThreshold
CLUSTER_UPDATING_WAIT = timedelta(seconds=15)
STAGE_UPDATING_WAIT = timedelta(seconds=60)
STUCK_THRESHOLD = timedelta(minutes=5)
# upstream returns retriable errors to controller-runtime's rate limiter; we recheck like an update
RETRY_WAIT = CLUSTER_UPDATING_WAIT
MAX_STUCK_CLUSTERS_SHOWN = 3

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"
PROGRESSING, SUCCEEDED = "Progressing", "Succeeded"
CLUSTER_STARTED = "Started"
TASK_APPROVAL_REQUEST_CREATED = "ApprovalRequestCreated"
TASK_APPROVAL_REQUEST_APPROVED = "ApprovalRequestApproved"
TASK_WAIT_TIME_ELAPSED = "WaitTimeElapsed"

RUN_PROGRESSING_REASON = "UpdateRunProgressing"
RUN_FAILED_REASON = "UpdateRunFailed"
RUN_STUCK_REASON = "UpdateRunStuck"
RUN_WAITING_REASON = "UpdateRunWaiting"
RUN_STOPPING_REASON = "UpdateRunStopping"
RUN_STOPPED_REASON = "UpdateRunStopped"
RUN_SUCCEEDED_REASON = "UpdateRunSucceeded"
STAGE_STARTED_REASON = "StageUpdatingStarted"
STAGE_WAITING_REASON = "StageUpdatingWaiting"
STAGE_STOPPING_REASON = "StageUpdatingStopping"
STAGE_STOPPED_REASON = "StageUpdatingStopped"
STAGE_FAILED_REASON = "StageUpdatingFailed"
STAGE_SUCCEEDED_REASON = "StageUpdatingSucceeded"
STAGE_SKIPPED_REASON = "StageUpdatingSkippedNoClusters"
CLUSTER_STARTED_REASON = "ClusterUpdatingStarted"
CLUSTER_FAILED_REASON = "ClusterUpdatingFailed"
CLUSTER_SUCCEEDED_REASON = "ClusterUpdatingSucceeded"
TASK_APPROVED_REASON = "StageTaskApprovalRequestApproved"
TASK_CREATED_REASON = "StageTaskApprovalRequestCreated"
TASK_WAIT_ELAPSED_REASON = "AfterStageTaskWaitTimeElapsed"
ROLLOUT_STARTED_REASON = "RolloutStarted"

_WAITING_MESSAGE = "The updateRun is waiting for {} tasks in stage {} to complete"
_ABORTED_MESSAGE = "The stages are aborted due to a non-recoverable error"


# ---------------------------------------------------------------------------------------------------
# Interface


@dataclass(frozen=True)
class PolicySnapshot:
    """The placement's latest ClusterSchedulingPolicySnapshot as the run needs it.

    `index` is its kubernetes-fleet.io/policy-index label ("" when missing); `scheduled` is
    Scheduled=True for its current generation; `observed_cluster_count` is N for PickN,
    len(clusterNames) for PickFixed and None for PickAll.
    """

    name: str
    index: str
    scheduled: bool
    observed_cluster_count: int | None


@dataclass(frozen=True)
class UpdateRunInputs:
    """Everything one reconcile reads, as Kubernetes-shaped dicts.

    `bindings` are every ClusterResourceBinding of the placement (labelled parent-CRP);
    `approval_requests` are the existing ClusterApprovalRequests by name; `latest_resource_snapshot_index`
    is what an empty `spec.resourceSnapshotIndex` resolves to.
    """

    run: Mapping[str, Any]
    strategy: Mapping[str, Any] | None
    placement: Mapping[str, Any] | None
    policy_snapshot: PolicySnapshot | None
    bindings: Sequence[Mapping[str, Any]]
    member_clusters: Sequence[Mapping[str, Any]]
    approval_requests: Mapping[str, Mapping[str, Any]]
    latest_resource_snapshot_index: str


@dataclass(frozen=True)
class BindingUpdate:
    """A ClusterResourceBinding write: its complete new spec and complete new status conditions.

    `generation` is the binding's metadata.generation after the write: one more than now when the spec
    changes (as the API server bumps it), the same otherwise. The RolloutStarted condition observes it,
    as upstream writes the condition after the spec update returned the new generation.
    """

    name: str
    spec: dict[str, Any]
    conditions: tuple[dict[str, Any], ...]
    generation: int


@dataclass(frozen=True)
class ApprovalAcceptance:
    """A ClusterApprovalRequest status write: its name and complete new status (ApprovalAccepted=True)."""

    name: str
    status: dict[str, Any]


@dataclass(frozen=True)
class UpdateRunStep:
    """The outcome of one reconcile: the run's complete new status and the writes to make.

    `requeue_after` is when to reconcile again: None when the run is finished, dead, idle in
    Initialize or stopped; timedelta(0) means again right away (a stage just finished or was skipped).
    """

    status: dict[str, Any]
    binding_updates: tuple[BindingUpdate, ...] = ()
    bindings_to_delete: tuple[str, ...] = ()
    approvals_to_create: tuple[dict[str, Any], ...] = ()
    approvals_to_accept: tuple[ApprovalAcceptance, ...] = ()
    requeue_after: timedelta | None = None
    events: tuple[str, ...] = ()


def reconcile_update_run(inputs: UpdateRunInputs, now: datetime) -> UpdateRunStep:
    """Reconcile a ClusterStagedUpdateRun once (upstream `Reconciler.Reconcile`).

    Initialises the run the first time (Initialized True, or False and dead for good), re-validates
    it on every later reconcile (drift aborts it with Succeeded=False / UpdateRunFailed), then executes
    (`state: Run`) or stops (`state: Stop`) it. Malformed objects raise ManifestError.
    """
    return _Reconcile(inputs, now).run()


# ---------------------------------------------------------------------------------------------------
# Errors and small helpers


class _Abort(Exception):
    """A non-retriable error (upstream errStagedUpdatedAborted): the run fails with this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Retry(Exception):
    """A retriable error: upstream returns it to the work queue and tries again later."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _aborted(detail: str) -> _Abort:
    return _Abort(f"{RUN_ABORTED}: {detail}")


def _unexpected(detail: str) -> _Abort:
    return _aborted(f"{UNEXPECTED_BEHAVIOR}: {detail}")


def _init_failed(detail: str) -> _Abort:
    return _Abort(f"{INITIALIZATION_FAILED}: {detail}")


def _aggregate(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _find(holder: Mapping[str, Any] | None, condition_type: str) -> dict[str, Any] | None:
    conditions: Sequence[dict[str, Any]] = (holder or {}).get("conditions") or ()
    for condition in conditions:
        if condition.get("type") == condition_type:
            return condition
    return None


def _is(condition: Mapping[str, Any] | None, status: str, generation: int) -> bool:
    """condition.IsConditionStatusTrue/False: that status, observed at `generation`."""
    return (
        condition is not None
        and condition.get("status") == status
        and (condition.get("observedGeneration") or 0) == generation
    )


def _since(condition: Mapping[str, Any] | None, now: datetime) -> timedelta:
    when = parse_time((condition or {}).get("lastTransitionTime"))
    return timedelta(0) if when is None else now - when


def _stuck_names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_STUCK_CLUSTERS_SHOWN])
    return shown + "..." if len(names) > MAX_STUCK_CLUSTERS_SHOWN else shown


def _go_value(value: Any) -> str:
    """A compact rendering of an object for messages (upstream prints Go structs with %v)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class _Binding:
    """A binding as given (to write back) and parsed (to read its state and conditions)."""

    raw: Mapping[str, Any]
    parsed: ClusterResourceBinding

    @property
    def name(self) -> str:
        return self.parsed.name

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.raw.get("spec") or {})

    def condition(self, condition_type: str) -> dict[str, Any] | None:
        return _find(self.raw.get("status"), condition_type)


@dataclass(frozen=True)
class _Targets:
    """What initialisation or validation found: the stages and the bindings execution works on."""

    plan: UpdateRunPlan
    to_update: dict[str, _Binding]
    to_delete: list[_Binding]


# ---------------------------------------------------------------------------------------------------
# The reconcile


class _Reconcile:
    """One reconcile: reads the inputs, edits a copy of the status and collects the writes."""

    def __init__(self, inputs: UpdateRunInputs, now: datetime) -> None:
        self.inputs = inputs
        self.now = now
        metadata = inputs.run.get("metadata") or {}
        spec = inputs.run.get("spec") or {}
        self.name = str(metadata.get("name") or "")
        self.generation = int(metadata.get("generation") or 0)
        self.placement_name = str(spec.get("placementName") or "")
        self.strategy_name = str(spec.get("stagedRolloutStrategyName") or "")
        self.snapshot_index = str(spec.get("resourceSnapshotIndex") or "")
        # the CRD defaults an absent state to Initialize
        self.state = spec.get("state") or STATE_INITIALIZE
        self.original = dict(inputs.run.get("status") or {})
        self.status: dict[str, Any] = copy.deepcopy(self.original)
        self.binding_updates: list[BindingUpdate] = []
        self.bindings_to_delete: list[str] = []
        self.approvals_to_create: list[dict[str, Any]] = []
        self.approvals_to_accept: list[ApprovalAcceptance] = []
        self.events: list[str] = []

    # --- controller.go ------------------------------------------------------------------------------

    def run(self) -> UpdateRunStep:
        self._observe_generation()
        initialized = _find(self.status, INITIALIZED)
        if not _is(initialized, TRUE, self.generation):
            if _is(initialized, FALSE, self.generation):
                return self._unchanged(None)
            return self._first_reconcile()
        finished = _find(self.status, SUCCEEDED)
        if _is(finished, TRUE, self.generation) or _is(finished, FALSE, self.generation):
            return self._unchanged(None)
        try:
            stage_index, targets = self._validate()
        except _Abort as exc:
            return self._failed(exc.message)
        except _Retry as exc:
            return self._unchanged(RETRY_WAIT, exc.message)
        if self.state == STATE_INITIALIZE and stage_index != -1:
            return self._unchanged(None)
        return self._proceed(stage_index, targets)

    def _first_reconcile(self) -> UpdateRunStep:
        try:
            targets = self._initialize()
        except _Abort as exc:
            self._set(self.status, INITIALIZED, FALSE, INITIALIZED_FAILED_REASON, exc.message)
            self.events.append(f"Initialization failed: {exc.message}")
            return self._step(None)
        except _Retry as exc:
            return self._unchanged(RETRY_WAIT, exc.message)
        self._set(self.status, INITIALIZED, TRUE, INITIALIZED_SUCCEEDED_REASON, INITIALIZED_SUCCEEDED_MESSAGE)
        plan = targets.plan
        self.events.append(
            f"Initialized {len(plan.stages)} stage(s) for {plan.policy_observed_cluster_count} cluster(s), "
            f"{len(plan.deletion_stage.clusters)} to delete"
        )
        if self.state == STATE_INITIALIZE:
            return self._step(None)
        return self._proceed(0, targets)

    def _proceed(self, stage_index: int, targets: _Targets) -> UpdateRunStep:
        if stage_index == -1:
            # the previous reconcile finished but could not record it
            return self._succeeded()
        if self.state == STATE_RUN:
            return self._drive(self._execute, stage_index, targets, self._succeeded)
        if self.state == STATE_STOP:
            return self._drive(self._stop, stage_index, targets, self._stopped)
        return self._failed(f"{UNEXPECTED_BEHAVIOR}: found unsupported updateRun state: {self.state}")

    def _drive(
        self,
        action: Callable[[int, _Targets], tuple[bool, timedelta]],
        stage_index: int,
        targets: _Targets,
        on_finish: Callable[[], UpdateRunStep],
    ) -> UpdateRunStep:
        try:
            finished, wait = action(stage_index, targets)
        except _Abort as exc:
            return self._failed(exc.message)
        except _Retry as exc:
            self.events.append(exc.message)
            return self._step(RETRY_WAIT)
        return on_finish() if finished else self._step(wait)

    def _observe_generation(self) -> None:
        """updateAllStatusConditionsGeneration: every condition now observes the run's generation."""
        holders = [self.status, *(self.status.get("stagesStatus") or [])]
        if self.status.get("deletionStageStatus") is not None:
            holders.append(self.status["deletionStageStatus"])
        for holder in list(holders):
            for key in ("beforeStageTaskStatus", "afterStageTaskStatus", "clusters"):
                holders.extend(holder.get(key) or [])
        for holder in holders:
            for condition in holder.get("conditions") or []:
                condition["observedGeneration"] = self.generation

    def _succeeded(self) -> UpdateRunStep:
        self._set(self.status, PROGRESSING, FALSE, RUN_SUCCEEDED_REASON, "All stages are completed")
        self._set(self.status, SUCCEEDED, TRUE, RUN_SUCCEEDED_REASON, "All stages are completed successfully")
        self.events.append("The update run succeeded")
        return self._step(None)

    def _failed(self, message: str) -> UpdateRunStep:
        self._set(self.status, PROGRESSING, FALSE, RUN_FAILED_REASON, _ABORTED_MESSAGE)
        self._set(self.status, SUCCEEDED, FALSE, RUN_FAILED_REASON, message)
        self.events.append(f"The update run failed: {message}")
        return self._step(None)

    def _stopped(self) -> UpdateRunStep:
        self._set(self.status, PROGRESSING, FALSE, RUN_STOPPED_REASON, "The update run has been stopped")
        self.events.append("The update run stopped")
        return self._step(None)

    def _unchanged(self, requeue: timedelta | None, event: str | None = None) -> UpdateRunStep:
        """Upstream returns without a status write: hand back the status as it came."""
        return UpdateRunStep(
            status=copy.deepcopy(self.original), requeue_after=requeue, events=(event,) if event else ()
        )

    def _step(self, requeue: timedelta | None) -> UpdateRunStep:
        return UpdateRunStep(
            status=self.status,
            binding_updates=tuple(self.binding_updates),
            bindings_to_delete=tuple(self.bindings_to_delete),
            approvals_to_create=tuple(self.approvals_to_create),
            approvals_to_accept=tuple(self.approvals_to_accept),
            requeue_after=requeue,
            events=tuple(self.events),
        )

    def _set(
        self, holder: dict[str, Any], condition_type: str, status: str, reason: str, message: str
    ) -> None:
        condition = {
            "type": condition_type,
            "status": status,
            "observedGeneration": self.generation,
            "reason": reason,
            "message": message,
        }
        holder["conditions"] = set_condition(holder.get("conditions") or [], condition, self.now)

    # --- initialization.go --------------------------------------------------------------------------

    def _initialize(self) -> _Targets:
        """Upstream initialize; records each status field as it goes, as upstream does before failing."""
        self.status["appliedStrategy"] = self._placement_apply_strategy()
        snapshot = self._policy_snapshot()
        self.status["policySnapshotIndexUsed"] = snapshot.index
        # upstream: -1 stands for PickAll until the selected bindings are counted
        count = snapshot.observed_cluster_count
        self.status["policyObservedClusterCount"] = -1 if count is None else count
        self._require_scheduled(snapshot)
        bindings = self._bindings()
        self.status["policyObservedClusterCount"] = self._collect(snapshot, bindings)
        if self.inputs.strategy is None:
            raise _init_failed(f"{USER_ERROR}: referenced updateStrategy not found: `/{self.strategy_name}`")
        strategy_spec = copy.deepcopy(dict(self.inputs.strategy.get("spec") or {}))
        _drop_approval_wait_times(strategy_spec)
        self.status["stagedUpdateStrategySnapshot"] = strategy_spec
        targets = self._targets(snapshot, bindings, strategy_spec)
        self.status["stagesStatus"] = [self._stage_status(stage) for stage in targets.plan.stages]
        self.status["deletionStageStatus"] = self._stage_status(targets.plan.deletion_stage)
        self.status["resourceSnapshotIndexUsed"] = self._resource_snapshot_index()
        return targets

    def _placement_apply_strategy(self) -> dict[str, Any]:
        """validatePlacement: the placement exists and is External; returns its (defaulted) applyStrategy."""
        placement = self.inputs.placement
        if placement is None:
            raise _init_failed(f"{USER_ERROR}: parent placement not found")
        strategy = parse_rollout_strategy((placement.get("spec") or {}).get("strategy"))
        if strategy.type != EXTERNAL:
            raise _init_failed(
                f"{USER_ERROR}: parent placement does not have an external rollout strategy, current "
                "strategy: "
                f"{strategy.type}"
            )
        return dict(strategy.apply_strategy)

    def _policy_snapshot(self) -> PolicySnapshot:
        """determinePolicySnapshot, up to the Scheduled check: it exists and carries its index label."""
        snapshot = self.inputs.policy_snapshot
        if snapshot is None:
            raise _init_failed(
                f"no latest policy snapshot associated with the placement: `/{self.placement_name}`"
            )
        if not snapshot.index:
            raise _init_failed(
                f"{UNEXPECTED_BEHAVIOR}: policy snapshot `/{snapshot.name}` does not have a policy index "
                "label"
            )
        return snapshot

    @staticmethod
    def _require_scheduled(snapshot: PolicySnapshot) -> None:
        if not snapshot.scheduled:
            raise _init_failed(f"policy snapshot `{snapshot.name}` not fully scheduled yet")

    def _bindings(self) -> list[_Binding]:
        return [_Binding(raw, parse_cluster_resource_binding(raw)) for raw in self.inputs.bindings]

    @staticmethod
    def _run_bindings(snapshot: PolicySnapshot, bindings: Sequence[_Binding]) -> list[UpdateRunBinding]:
        return [
            UpdateRunBinding(
                b.parsed.target_cluster,
                b.parsed.state,
                latest_policy=b.parsed.scheduling_policy_snapshot_name == snapshot.name,
            )
            for b in bindings
        ]

    def _collect(self, snapshot: PolicySnapshot, bindings: Sequence[_Binding]) -> int:
        """collectScheduledClusters' checks; returns the observed cluster count."""
        try:
            _, _, observed = collect_scheduled_clusters(
                _policy(snapshot), self._run_bindings(snapshot, bindings), f"/{snapshot.name}"
            )
            return observed
        except InitializationError as exc:
            raise _Abort(exc.message) from exc
        except TransientBindingStateError as exc:
            raise _Retry(str(exc)) from exc

    def _targets(
        self, snapshot: PolicySnapshot, bindings: Sequence[_Binding], strategy_spec: Mapping[str, Any]
    ) -> _Targets:
        """computeRunStageStatus over the strategy snapshot, and the bindings each stage acts on."""
        members = [
            MemberClusterLabels(
                str((m.get("metadata") or {}).get("name") or ""),
                (m.get("metadata") or {}).get("labels") or {},
            )
            for m in self.inputs.member_clusters
        ]
        try:
            plan = initialize_update_run(
                self.name,
                _policy(snapshot),
                members,
                self._run_bindings(snapshot, bindings),
                self._strategy(strategy_spec),
            )
        except InitializationError as exc:
            raise _Abort(exc.message) from exc
        # bindings of older policies are all Unscheduled here, or collecting them would have failed
        to_update = {b.parsed.target_cluster: b for b in bindings if b.parsed.state != STATE_UNSCHEDULED}
        to_delete = [b for b in bindings if b.parsed.state == STATE_UNSCHEDULED]
        return _Targets(plan, to_update, to_delete)

    def _strategy(self, spec: Mapping[str, Any]) -> StagedUpdateStrategy:
        document = {"metadata": {"name": self.strategy_name}, "spec": spec}
        try:
            return parse_staged_update_strategy(document, initializer_checks=False)
        except ManifestError as exc:
            raise _init_failed(
                f"{USER_ERROR}: the updateStrategy `/{self.strategy_name}` is invalid: {exc}"
            ) from exc

    @staticmethod
    def _stage_status(stage: StagePlan) -> dict[str, Any]:
        status: dict[str, Any] = {
            "stageName": stage.name,
            "clusters": [{"clusterName": c} for c in stage.clusters],
        }
        for key, tasks in (
            ("afterStageTaskStatus", stage.after_stage_tasks),
            ("beforeStageTaskStatus", stage.before_stage_tasks),
        ):
            if tasks:
                status[key] = [
                    {"type": t.type, "approvalRequestName": t.approval_request_name}
                    if t.approval_request_name
                    else {"type": t.type}
                    for t in tasks
                ]
        return status

    def _resource_snapshot_index(self) -> str:
        """recordOverrideSnapshots' index check; "" takes the latest snapshot (newer upstream resolves it)."""
        index = self.snapshot_index or self.inputs.latest_resource_snapshot_index
        if not _is_go_int(index) or int(index) < 0:
            raise _init_failed(
                f"{USER_ERROR}: invalid resource snapshot index `{index}` provided, expected an integer >= 0"
            )
        return index

    # --- validation.go ------------------------------------------------------------------------------

    def _validate(self) -> tuple[int, _Targets]:
        """Upstream validate: the run still matches the world; returns the stage to work on (-1: done)."""
        latest = self._placement_apply_strategy()
        recorded = self.status.get("appliedStrategy")
        if latest != recorded:
            raise _aborted(
                f"{USER_ERROR}: the applyStrategy in the updateRun is outdated, latest: {_go_value(latest)}, "
                f"recorded: {_go_value(recorded)}"
            )
        snapshot = self._policy_snapshot()
        self._require_scheduled(snapshot)
        recorded_index = self.status.get("policySnapshotIndexUsed", "")
        if snapshot.index != recorded_index:
            raise _aborted(
                f"the policy snapshot index used in the updateRun is outdated, latest: {snapshot.index}, "
                f"recorded: {recorded_index}"
            )
        recorded_count = self.status.get("policyObservedClusterCount", 0)
        count = snapshot.observed_cluster_count
        if count is not None and count != recorded_count:
            raise _aborted(
                f"the cluster count initialized in the updateRun is outdated, latest: {count}, "
                f"recorded: {recorded_count}"
            )
        bindings = self._bindings()
        self._collect(snapshot, bindings)
        strategy_spec = self.status.get("stagedUpdateStrategySnapshot")
        if strategy_spec is None:
            raise _unexpected("the updateRun has nil updateStrategySnapshot")
        targets = self._targets(snapshot, bindings, strategy_spec)
        existing = self.status.get("stagesStatus")
        if existing is None:
            raise _unexpected("the updateRun has nil stagesStatus")
        updating, last_finished = self._validate_stages(existing, targets.plan.stages)
        return self._validate_delete_stage(updating, last_finished, len(existing), targets), targets

    def _validate_stages(
        self, existing: Sequence[Mapping[str, Any]], computed: Sequence[StagePlan]
    ) -> tuple[int, int]:
        """validateUpdateStagesStatus: same stages, same clusters in the same order; finds the current one."""
        if len(existing) != len(computed):
            raise _aborted(
                f"the number of stages in the updateRun has changed, new: {len(computed)}, existing: "
                f"{len(existing)}"
            )
        updating, last_finished = -1, -1
        for index, (stage, plan) in enumerate(zip(existing, computed, strict=True)):
            if stage.get("stageName") != plan.name:
                raise _aborted(
                    f"index `{index}` stage name in the updateRun has changed, new: {plan.name}, "
                    f"existing: {stage.get('stageName')}"
                )
            clusters = [c.get("clusterName") for c in stage.get("clusters") or []]
            if len(clusters) != len(plan.clusters):
                raise _aborted(
                    f"the number of clusters in index `{index}` stage has changed, new: "
                    f"{len(plan.clusters)}, "
                    f"existing: {len(clusters)}"
                )
            for position, (old, new) in enumerate(zip(clusters, plan.clusters, strict=True)):
                if old != new:
                    raise _aborted(
                        f"the `{position}` cluster in the `{index}` stage has changed, new: {new}, "
                        f"existing: {old}"
                    )
            limit = max_concurrency_value(plan.max_concurrency, len(plan.clusters))
            updating, last_finished = self._validate_stage(index, updating, last_finished, stage, limit)
        return updating, last_finished

    def _validate_stage(
        self, index: int, updating: int, last_finished: int, stage: Mapping[str, Any], limit: int
    ) -> tuple[int, int]:
        """validateClusterUpdatingStatus: finished stages come first, then at most one updating stage."""
        name = stage.get("stageName")
        succeeded = _find(stage, SUCCEEDED)
        if _is(succeeded, TRUE, self.generation):
            if updating != -1 and index > updating:
                raise _unexpected(f"the finished stage `{index}` is after the updating stage `{updating}`")
            for cluster in stage.get("clusters") or []:
                if not _is(_find(cluster, SUCCEEDED), TRUE, self.generation):
                    raise _unexpected(
                        f"cluster `{cluster.get('clusterName')}` in the finished stage `{name}` has not "
                        "succeeded"
                    )
            if index != last_finished + 1:
                raise _unexpected(
                    f"the finished stage `{name}` is not right after the last finished stage with index "
                    f"`{last_finished}`"
                )
            return updating, index
        if _is(succeeded, FALSE, self.generation):
            raise _aborted(
                f"the stage `{name}` has failed, err: {succeeded.get('message', '') if succeeded else ''}"
            )
        if _find(stage, PROGRESSING) is None:
            return updating, last_finished
        if updating != -1:
            raise _unexpected(
                f"the stage `{name}` is updating, but there is already a stage with index `{updating}` "
                "updating"
            )
        if index != last_finished + 1:
            raise _unexpected(
                f"the updating stage `{name}` is not right after the last finished stage with index "
                f"`{last_finished}`"
            )
        in_flight = [
            c
            for c in stage.get("clusters") or []
            if _is(_find(c, CLUSTER_STARTED), TRUE, self.generation)
            and not _is(_find(c, SUCCEEDED), TRUE, self.generation)
        ]
        if len(in_flight) > limit:
            raise _unexpected(
                f"the number of updating clusters `{len(in_flight)}` in the updating stage `{name}` exceeds "
                f"maxConcurrency `{limit}`"
            )
        return index, last_finished

    def _validate_delete_stage(self, updating: int, last_finished: int, total: int, targets: _Targets) -> int:
        """validateDeleteStageStatus: no new cluster to delete, and the delete stage only runs last."""
        deletion = self.status.get("deletionStageStatus")
        if deletion is None:
            raise _unexpected("the updateRun has nil deletionStageStatus")
        known = {c.get("clusterName") for c in deletion.get("clusters") or []}
        for binding in targets.to_delete:
            if binding.parsed.target_cluster not in known:
                raise _unexpected(
                    f"the cluster `{binding.parsed.target_cluster}` to be deleted is not in the delete stage"
                )
        finished = _find(deletion, SUCCEEDED)
        progressing = _find(deletion, PROGRESSING)
        if updating != -1 or last_finished < total - 1:
            if (
                _is(finished, TRUE, self.generation)
                or _is(finished, FALSE, self.generation)
                or _is(progressing, TRUE, self.generation)
            ):
                raise _unexpected(
                    "the delete stage is active, but there are still stages updating, updatingStageIndex: "
                    f"{updating}, lastFinishedStageIndex: {last_finished}"
                )
            return last_finished + 1 if updating == -1 else updating
        if _is(finished, TRUE, self.generation):
            return -1
        if _is(finished, FALSE, self.generation):
            raise _aborted(
                f"the delete stage has failed, err: {finished.get('message', '') if finished else ''}"
            )
        return total

    # --- execution.go -------------------------------------------------------------------------------

    def _execute(self, stage_index: int, targets: _Targets) -> tuple[bool, timedelta]:
        """Upstream execute: work on the current stage, or on the delete stage once all stages are done."""
        self._mark_progressing_unless_waiting_or_stuck()
        stages = self.status["stagesStatus"]
        if stage_index >= len(stages):
            return self._guard(self.status["deletionStageStatus"], self._execute_delete_stage, targets)
        stage = stages[stage_index]
        return self._guard(stage, self._execute_stage, stage, targets.plan.stages[stage_index], targets)

    def _guard(
        self, stage: dict[str, Any], action: Callable[..., tuple[bool, timedelta]], *args: Any
    ) -> tuple[bool, timedelta]:
        """checkIfErrorStagedUpdateAborted: an abort marks the stage it happened in as failed."""
        try:
            return action(*args)
        except _Abort as exc:
            self._mark_stage_failed(stage, exc.message)
            raise

    def _execute_stage(
        self, stage: dict[str, Any], plan: StagePlan, targets: _Targets
    ) -> tuple[bool, timedelta]:
        name = stage["stageName"]
        if not stage.get("clusters"):
            message = "Stage skipped because it has no clusters"
            self._set_times(stage, "startTime", "endTime")
            self._set(stage, PROGRESSING, FALSE, STAGE_SKIPPED_REASON, message)
            self._set(stage, SUCCEEDED, TRUE, STAGE_SKIPPED_REASON, message)
            self.events.append(f"Stage {name} skipped: it has no clusters")
            return False, timedelta(0)
        if not self._before_stage_tasks_done(stage, plan):
            self._set(
                stage,
                PROGRESSING,
                FALSE,
                STAGE_WAITING_REASON,
                "Not all before-stage tasks are completed, waiting for approval",
            )
            self._mark_waiting(_WAITING_MESSAGE.format("before-stage", name))
            return False, STAGE_UPDATING_WAIT
        limit = max_concurrency_value(plan.max_concurrency, len(stage["clusters"]))
        return False, self._execute_updating_stage(stage, plan, targets, limit)

    def _before_stage_tasks_done(self, stage: dict[str, Any], plan: StagePlan) -> bool:
        """checkBeforeStageTasksStatus: Approval is the only before-stage task."""
        for index, task in enumerate(plan.before_stage_tasks):
            if task.type != APPROVAL:
                raise _unexpected(f"found unsupported task type in before stage tasks: {task.type}")
            return self._approval_task_done(
                stage["beforeStageTaskStatus"][index], stage["stageName"], BEFORE_STAGE
            )
        return True

    def _execute_updating_stage(
        self, stage: dict[str, Any], plan: StagePlan, targets: _Targets, limit: int
    ) -> timedelta:
        """executeUpdatingStage: keep up to `limit` clusters in flight, in the stage's order."""
        name = stage["stageName"]
        snapshot_name = self._resource_snapshot_name()
        finished = updating = 0
        stuck: list[str] = []
        errors: list[_Abort | _Retry] = []
        for cluster in stage["clusters"]:
            if updating >= limit:
                break
            cluster_name = cluster["clusterName"]
            succeeded = _find(cluster, SUCCEEDED)
            if _is(succeeded, TRUE, self.generation):
                finished += 1
                continue
            updating += 1
            if _is(succeeded, FALSE, self.generation):
                errors.append(_aborted(f"the cluster `{cluster_name}` in the stage {name} has failed"))
                continue
            binding = targets.to_update.get(cluster_name)
            if binding is None:
                errors.append(
                    _unexpected(
                        f"the binding for cluster `{cluster_name}` in stage `{name}` is not found in the "
                        "toBeUpdatedBindings map"
                    )
                )
                continue
            started = _find(cluster, CLUSTER_STARTED)
            if not _is(started, TRUE, self.generation):
                error = self._start_cluster(cluster, binding, name, snapshot_name)
                if error is not None:
                    errors.append(error)
                    continue
                self._mark_cluster_started(cluster)
                self._mark_stage_started(stage)
                self.events.append(f"Started updating cluster {cluster_name} in stage {name}")
                continue
            if not self._still_ours(binding, cluster, snapshot_name):
                message = (
                    f"{USER_ERROR}: the binding of the updating cluster `{cluster_name}` in the stage "
                    f"`{name}` is "
                    "not up-to-date with the desired status, please check the status of binding "
                    f"`{binding.name}` "
                    "and see if there is a concurrent updateRun referencing the same placement and "
                    "updating the "
                    "same cluster"
                )
                self._set(cluster, SUCCEEDED, FALSE, CLUSTER_FAILED_REASON, message)
                errors.append(_aborted(message))
                continue
            done, error = self._check_cluster(binding, cluster, name)
            if error is not None:
                errors.append(error)
            if done:
                finished += 1
                updating -= 1
            elif _since(started, self.now) > STUCK_THRESHOLD:
                stuck.append(cluster_name)
        self._aggregate_run_status(name, stuck)
        _raise_errors(errors)
        if finished == len(stage["clusters"]):
            return self._complete_stage(stage, plan)
        return CLUSTER_UPDATING_WAIT

    def _start_cluster(
        self, cluster: dict[str, Any], binding: _Binding, stage_name: str, snapshot_name: str
    ) -> _Abort | _Retry | None:
        """The not-yet-started branch: point the binding at the run's snapshot, or notice it already is."""
        if not self._synced(binding, cluster, snapshot_name):
            spec = copy.deepcopy(binding.spec)
            spec["state"] = STATE_BOUND
            spec["resourceSnapshotName"] = snapshot_name
            _put(spec, "resourceOverrideSnapshots", cluster.get("resourceOverrideSnapshots"))
            _put(spec, "clusterResourceOverrideSnapshots", cluster.get("clusterResourceOverrideSnapshots"))
            _put(spec, "applyStrategy", copy.deepcopy(self.status.get("appliedStrategy")))
            self._write_binding(binding, spec)
            return None
        if binding.parsed.state != STATE_BOUND:
            self._write_binding(binding, {**copy.deepcopy(binding.spec), "state": STATE_BOUND})
            return None
        if not _is(binding.condition(ROLLOUT_STARTED), TRUE, binding.parsed.generation):
            # the scheduler bumped the binding's generation: announce the rollout again
            self._write_binding(binding, copy.deepcopy(binding.spec))
            return None
        _, error = self._check_cluster(binding, cluster, stage_name)
        return error

    def _write_binding(self, binding: _Binding, spec: dict[str, Any]) -> None:
        """updateBindingRolloutStarted after the spec update: RolloutStarted=True at the new generation."""
        generation = binding.parsed.generation + (1 if spec != binding.spec else 0)
        conditions = [
            dict(c)
            for c in (binding.raw.get("status") or {}).get("conditions") or ()
            if c.get("type") != ROLLOUT_STARTED
        ]
        conditions.append(
            {
                "type": ROLLOUT_STARTED,
                "status": TRUE,
                "observedGeneration": generation,
                "lastTransitionTime": format_time(self.now),
                "reason": ROLLOUT_STARTED_REASON,
                "message": "Detected the new changes on the resources and started the rollout process, "
                f"resourceSnapshotIndex: {self.status.get('resourceSnapshotIndexUsed', '')}, updateRun: "
                f"{self.name}",
            }
        )
        self.binding_updates.append(BindingUpdate(binding.name, spec, tuple(conditions), generation))

    def _synced(self, binding: _Binding, cluster: Mapping[str, Any], snapshot_name: str) -> bool:
        """isBindingSyncedWithClusterStatus: snapshot, override snapshots and apply strategy match the run."""
        spec = binding.spec
        return (
            spec.get("resourceSnapshotName") == snapshot_name
            and (cluster.get("resourceOverrideSnapshots") or [])
            == (spec.get("resourceOverrideSnapshots") or [])
            and (cluster.get("clusterResourceOverrideSnapshots") or [])
            == (spec.get("clusterResourceOverrideSnapshots") or [])
            and spec.get("applyStrategy") == self.status.get("appliedStrategy")
        )

    def _still_ours(self, binding: _Binding, cluster: Mapping[str, Any], snapshot_name: str) -> bool:
        """A started cluster's binding is still synced, Bound and RolloutStarted (nobody else changed it)."""
        return (
            self._synced(binding, cluster, snapshot_name)
            and _is(binding.condition(ROLLOUT_STARTED), TRUE, binding.parsed.generation)
            and binding.parsed.state == STATE_BOUND
        )

    def _check_cluster(
        self, binding: _Binding, cluster: dict[str, Any], stage_name: str
    ) -> tuple[bool, _Retry | None]:
        """checkClusterUpdateResult: Available or DiffReported True for the binding's generation."""
        generation = binding.parsed.generation
        diff_reported = binding.condition(DIFF_REPORTED)
        if _is(binding.condition(AVAILABLE), TRUE, generation) or _is(diff_reported, TRUE, generation):
            self._mark_cluster_succeeded(cluster)
            self.events.append(f"Cluster {cluster['clusterName']} in stage {stage_name} is updated")
            return True, None
        if has_binding_failed(binding.parsed) or _is(diff_reported, FALSE, generation):
            # upstream cannot tell a recoverable failure, so it keeps checking instead of failing the cluster
            return False, _Retry(
                f"the cluster updating encountered an error at stage `{stage_name}`, updateRun := "
                f"`{self.name}`"
            )
        return False, None

    def _complete_stage(self, stage: dict[str, Any], plan: StagePlan) -> timedelta:
        """handleStageCompletion: all clusters are updated; wait for the after-stage tasks."""
        name = stage["stageName"]
        self._mark_waiting(_WAITING_MESSAGE.format("after-stage", name))
        self._set(
            stage,
            PROGRESSING,
            FALSE,
            STAGE_WAITING_REASON,
            "All clusters in the stage are updated, waiting for after-stage tasks to complete",
        )
        done, wait = self._after_stage_tasks(stage, plan)
        if done:
            self._mark_run_progressing()
            self._mark_stage_succeeded(stage)
            self.events.append(f"Stage {name} succeeded")
            return timedelta(0)
        # upstream's stageUpdatingWaitTime: 60 s, or the remaining TimedWait when that is shorter
        return STAGE_UPDATING_WAIT if wait is None else min(wait, STAGE_UPDATING_WAIT)

    def _after_stage_tasks(self, stage: dict[str, Any], plan: StagePlan) -> tuple[bool, timedelta | None]:
        """checkAfterStageTasksStatus: (all done, remaining TimedWait or None)."""
        done, wait = True, None
        waiting_since = parse_time((_find(stage, PROGRESSING) or {}).get("lastTransitionTime")) or self.now
        for index, task in enumerate(plan.after_stage_tasks):
            status = stage["afterStageTaskStatus"][index]
            if task.type == TIMED_WAIT and task.wait_time is not None:
                if timed_wait_elapsed(waiting_since, task.wait_time, self.now):
                    self._set(
                        status, TASK_WAIT_TIME_ELAPSED, TRUE, TASK_WAIT_ELAPSED_REASON, "Wait time elapsed"
                    )
                else:
                    done, wait = False, waiting_since + task.wait_time - self.now
            elif task.type == APPROVAL and not self._approval_task_done(
                status, stage["stageName"], AFTER_STAGE
            ):
                done = False
        return done, wait

    def _approval_task_done(self, task: dict[str, Any], stage_name: str, task_type: str) -> bool:
        """handleStageApprovalTask: create the request, then accept it once it is approved."""
        if _is(_find(task, TASK_APPROVAL_REQUEST_APPROVED), TRUE, self.generation):
            return True
        request_name = task["approvalRequestName"]
        request = self.inputs.approval_requests.get(request_name)
        self._set(
            task,
            TASK_APPROVAL_REQUEST_CREATED,
            TRUE,
            TASK_CREATED_REASON,
            "ApprovalRequest object is created",
        )
        if request is None:
            self.approvals_to_create.append(self._approval_request(request_name, stage_name, task_type))
            self.events.append(f"Created approval request {request_name}")
            return False
        spec = request.get("spec") or {}
        if spec.get("targetStage") != stage_name or spec.get("parentStageRollout") != self.name:
            raise _unexpected(
                f"the approval request task `/{request_name}` is targeting update run "
                f"`/{spec.get('parentStageRollout', '')}` and stage `{spec.get('targetStage', '')}`, want "
                "target "
                f"update run `/{self.name} and stage `{stage_name}`"
            )
        accepted = is_condition_true(request, APPROVAL_ACCEPTED_CONDITION)
        if not accepted and not is_condition_true(request, APPROVED_CONDITION):
            return False
        if not accepted:
            self._accept(request_name, request)
        self._set(
            task,
            TASK_APPROVAL_REQUEST_APPROVED,
            TRUE,
            TASK_APPROVED_REASON,
            "ApprovalRequest object is approved",
        )
        return True

    def _approval_request(self, name: str, stage_name: str, task_type: str) -> dict[str, Any]:
        return {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterApprovalRequest",
            "metadata": {"name": name, "labels": approval_request_labels(self.name, stage_name, task_type)},
            "spec": {"parentStageRollout": self.name, "targetStage": stage_name},
        }

    def _accept(self, name: str, request: Mapping[str, Any]) -> None:
        generation = int((request.get("metadata") or {}).get("generation") or 0)
        status = copy.deepcopy(dict(request.get("status") or {}))
        status["conditions"] = set_condition(
            status.get("conditions") or [], accepted_condition(generation, self.now), self.now
        )
        self.approvals_to_accept.append(ApprovalAcceptance(name, status))
        self.events.append(f"Accepted the approval of {name}")

    def _execute_delete_stage(self, targets: _Targets) -> tuple[bool, timedelta]:
        """executeDeleteStage: delete the bindings of the to-delete clusters; done once none is left."""
        deletion = self.status["deletionStageStatus"]
        pending = {c["clusterName"]: c for c in deletion.get("clusters") or []}
        self._mark_stage_started(deletion)
        for binding in targets.to_delete:
            cluster_name = binding.parsed.target_cluster
            cluster = pending.pop(cluster_name, None)
            if cluster is None:
                raise _unexpected(
                    f"the to be deleted cluster `{cluster_name}` is not in the deleting stage during "
                    "execution"
                )
            if _is(_find(cluster, SUCCEEDED), TRUE, self.generation):
                raise _unexpected(
                    f"the deleted cluster `{cluster_name}` in the deleting stage still has a binding"
                )
            if _is(_find(cluster, CLUSTER_STARTED), TRUE, self.generation):
                self._require_deleting(binding, cluster_name)
                continue
            self.bindings_to_delete.append(binding.name)
            self._mark_cluster_started(cluster)
            self.events.append(f"Deleting the binding of cluster {cluster_name}")
        for cluster in pending.values():
            if not _is(_find(cluster, CLUSTER_STARTED), TRUE, self.generation):
                self._mark_cluster_started(cluster)
            self._mark_cluster_succeeded(cluster)
        if targets.to_delete:
            return False, CLUSTER_UPDATING_WAIT
        self._mark_stage_succeeded(deletion)
        return True, CLUSTER_UPDATING_WAIT

    @staticmethod
    def _require_deleting(binding: _Binding, cluster_name: str) -> None:
        if not binding.parsed.deleting:
            raise _unexpected(
                f"the cluster `{cluster_name}` in the deleting stage is marked as deleting but its "
                "corresponding "
                "binding is not deleting"
            )

    # --- stop.go ------------------------------------------------------------------------------------

    def _stop(self, stage_index: int, targets: _Targets) -> tuple[bool, timedelta]:
        """Upstream stop: let in-flight clusters finish, start nothing new."""
        self._set(
            self.status,
            PROGRESSING,
            UNKNOWN,
            RUN_STOPPING_REASON,
            "The update run is the process of stopping, waiting for all the updating clusters to finish "
            "updating "
            "before completing the stop process",
        )
        stages = self.status["stagesStatus"]
        if stage_index < len(stages):
            return self._stop_updating_stage(stages[stage_index], targets)
        # upstream marks the delete stage failed on any abort while stopping
        return self._guard(self.status["deletionStageStatus"], self._pause_delete_stage, targets)

    def _stop_updating_stage(self, stage: dict[str, Any], targets: _Targets) -> tuple[bool, timedelta]:
        name = stage["stageName"]
        updating = 0
        stuck: list[str] = []
        errors: list[_Abort | _Retry] = []
        for cluster in stage.get("clusters") or []:
            started = _find(cluster, CLUSTER_STARTED)
            succeeded = _find(cluster, SUCCEEDED)
            if (
                started is None
                or _is(succeeded, TRUE, self.generation)
                or _is(succeeded, FALSE, self.generation)
            ):
                continue
            binding = targets.to_update.get(cluster["clusterName"])
            done, error = (False, None) if binding is None else self._check_cluster(binding, cluster, name)
            if error is not None:
                errors.append(error)
            if not done:
                updating += 1
                if _since(started, self.now) > STUCK_THRESHOLD:
                    stuck.append(cluster["clusterName"])
        self._aggregate_run_status(name, stuck)
        _raise_errors(errors)
        if updating == 0:
            self._mark_stage_stopped(stage)
            return True, timedelta(0)
        self._mark_stage_stopping(stage)
        return False, CLUSTER_UPDATING_WAIT

    def _pause_delete_stage(self, targets: _Targets) -> tuple[bool, timedelta]:
        deletion = self.status["deletionStageStatus"]
        clusters = {c["clusterName"]: c for c in deletion.get("clusters") or []}
        self._mark_stage_stopping(deletion)
        for binding in targets.to_delete:
            cluster = clusters.get(binding.parsed.target_cluster)
            if cluster is None or _is(_find(cluster, SUCCEEDED), TRUE, self.generation):
                continue
            if _is(_find(cluster, CLUSTER_STARTED), TRUE, self.generation):
                self._require_deleting(binding, cluster["clusterName"])
                return False, CLUSTER_UPDATING_WAIT
        if targets.to_delete:
            return False, CLUSTER_UPDATING_WAIT
        self._mark_stage_stopped(deletion)
        return True, CLUSTER_UPDATING_WAIT

    # --- condition writers --------------------------------------------------------------------------

    def _mark_progressing_unless_waiting_or_stuck(self) -> None:
        """Avoid a waiting/stuck -> progressing -> waiting/stuck flip that would move lastTransitionTime."""
        current = _find(self.status, PROGRESSING)
        if (
            _is(current, FALSE, self.generation)
            and current
            and current.get("reason")
            in (
                RUN_WAITING_REASON,
                RUN_STUCK_REASON,
            )
        ):
            return
        self._mark_run_progressing()

    def _mark_run_progressing(self) -> None:
        self._set(self.status, PROGRESSING, TRUE, RUN_PROGRESSING_REASON, "The update run is making progress")

    def _mark_waiting(self, message: str) -> None:
        self._set(self.status, PROGRESSING, FALSE, RUN_WAITING_REASON, message)

    def _aggregate_run_status(self, stage_name: str, stuck: Sequence[str]) -> None:
        """aggregateUpdateRunStatus: stuck clusters make the run Stuck; otherwise a running run progresses."""
        if stuck:
            self._set(
                self.status,
                PROGRESSING,
                FALSE,
                RUN_STUCK_REASON,
                f"The updateRun is stuck waiting for {_stuck_names(stuck)} cluster(s) in stage "
                f"{stage_name} to "
                "finish updating, please check placement status for potential errors",
            )
        elif self.state == STATE_RUN:
            self._mark_run_progressing()

    def _mark_stage_started(self, stage: dict[str, Any]) -> None:
        self._set_times(stage, "startTime")
        self._set(stage, PROGRESSING, TRUE, STAGE_STARTED_REASON, "Clusters in the stage started updating")

    def _mark_stage_succeeded(self, stage: dict[str, Any]) -> None:
        self._set_times(stage, "endTime")
        message = "All clusters in the stage are updated and after-stage tasks are completed"
        self._set(stage, PROGRESSING, FALSE, STAGE_SUCCEEDED_REASON, message)
        self._set(stage, SUCCEEDED, TRUE, STAGE_SUCCEEDED_REASON, "Stage update completed successfully")

    def _mark_cluster_started(self, cluster: dict[str, Any]) -> None:
        self._set(cluster, CLUSTER_STARTED, TRUE, CLUSTER_STARTED_REASON, "Cluster update started")

    def _mark_cluster_succeeded(self, cluster: dict[str, Any]) -> None:
        self._set(cluster, SUCCEEDED, TRUE, CLUSTER_SUCCEEDED_REASON, "Cluster update completed successfully")

    def _mark_stage_stopping(self, stage: dict[str, Any]) -> None:
        self._set(
            stage,
            PROGRESSING,
            UNKNOWN,
            STAGE_STOPPING_REASON,
            "Waiting for all the updating clusters to finish updating before completing the stop process",
        )

    def _mark_stage_stopped(self, stage: dict[str, Any]) -> None:
        self._set(
            stage,
            PROGRESSING,
            FALSE,
            STAGE_STOPPED_REASON,
            "All the updating clusters have finished updating, the stage is now stopped, waiting to be "
            "resumed",
        )

    def _mark_stage_failed(self, stage: dict[str, Any], message: str) -> None:
        self._set_times(stage, "endTime")
        self._set(
            stage,
            PROGRESSING,
            FALSE,
            STAGE_FAILED_REASON,
            "Stage update aborted due to a non-recoverable error",
        )
        self._set(stage, SUCCEEDED, FALSE, STAGE_FAILED_REASON, message)

    def _set_times(self, stage: dict[str, Any], *keys: str) -> None:
        for key in keys:
            stage.setdefault(key, format_time(self.now))

    def _resource_snapshot_name(self) -> str:
        """`<placement>-<index>-snapshot` (upstream ResourceSnapshotNameFmt with the parsed index)."""
        return f"{self.placement_name}-{int(self.status.get('resourceSnapshotIndexUsed') or 0)}-snapshot"


# ---------------------------------------------------------------------------------------------------
# Module helpers


def _policy(snapshot: PolicySnapshot) -> PlacementPolicy:
    """The policy initialisation needs: a fixed count (PickN, PickFixed) or none (PickAll)."""
    if snapshot.observed_cluster_count is None:
        return PlacementPolicy()
    return PlacementPolicy(placement_type=PICK_N, number_of_clusters=snapshot.observed_cluster_count)


def _drop_approval_wait_times(strategy_spec: dict[str, Any]) -> None:
    """removeWaitTimeFromUpdateRunStatus: an Approval task never keeps a waitTime in the snapshot."""
    for stage in strategy_spec.get("stages") or []:
        for key in ("beforeStageTasks", "afterStageTasks"):
            for task in stage.get(key) or []:
                if task.get("type") == APPROVAL:
                    task.pop("waitTime", None)


def _put(spec: dict[str, Any], key: str, value: Any) -> None:
    """Set a spec field as Go's omitempty would serialise it: empty values are left out."""
    if value:
        spec[key] = value
    else:
        spec.pop(key, None)


def _is_go_int(text: str) -> bool:
    """strconv.Atoi accepts it (optional sign, ASCII digits)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return digits.isascii() and digits.isdigit()


def _raise_errors(errors: Sequence[_Abort | _Retry]) -> None:
    """Upstream aggregates a round's errors; any abort among them aborts the run."""
    if not errors:
        return
    message = _aggregate([e.message for e in errors])
    if any(isinstance(e, _Abort) for e in errors):
        raise _Abort(message)
    raise _Retry(message)
