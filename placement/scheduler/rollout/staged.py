"""KubeFleet staged update runs: strategy validation, run initialisation and pure execution helpers.

Mirrors `pkg/controllers/updaterun` (initialization.go, execution.go, validation.go) at kubefleet
e160c1cd and the ClusterStagedUpdateStrategy CRD rules. Initialisation turns a placement's bindings
and a strategy into ordered stages (or the exact upstream failure text); the helpers answer the
questions the execution engine asks each reconcile (max concurrency, TimedWait, current stage,
ApprovalRequest labels). Plain data in, plans out; `now` is an argument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from placement.scheduler.errors import ManifestError, in_range
from placement.scheduler.fleet.types import PICK_FIXED, PICK_N, STATE_UNSCHEDULED, PlacementPolicy
from placement.scheduler.intstr import go_atoi, scaled_value
from placement.scheduler.labels import LabelSelector, parse_optional_label_selector
from placement.scheduler.timeutil import DurationError, parse_go_duration

APPROVAL, TIMED_WAIT = "Approval", "TimedWait"
BEFORE_STAGE, AFTER_STAGE = "beforeStage", "afterStage"
DELETE_STAGE_NAME = "kubernetes-fleet.io/deleteStage"
MAX_STAGES = 31
MAX_STAGE_NAME_LENGTH = 63

INITIALIZED = "Initialized"
INITIALIZED_SUCCEEDED_REASON = "UpdateRunInitializedSuccessfully"
INITIALIZED_FAILED_REASON = "UpdateRunInitializedFailed"
INITIALIZED_SUCCEEDED_MESSAGE = "ClusterStagedUpdateRun initialized successfully"

TARGET_UPDATING_STAGE_LABEL = "kubernetes-fleet.io/targetUpdatingStage"
TARGET_UPDATE_RUN_LABEL = "kubernetes-fleet.io/targetUpdateRun"
TASK_TYPE_LABEL = "kubernetes-fleet.io/taskType"
IS_LATEST_UPDATE_RUN_APPROVAL_LABEL = "kubernetes-fleet.io/isLatestUpdateRunApproval"

# upstream error wrappers: errStagedUpdatedAborted, errInitializedFailed, ErrUserError, ErrUnexpectedBehavior
RUN_ABORTED = "cannot continue the updateRun"
INITIALIZATION_FAILED = f"{RUN_ABORTED}: failed to initialize the updateRun"
USER_ERROR = "failed to process the request due to a client error"
UNEXPECTED_BEHAVIOR = "unexpected behavior which cannot be handled by the controller"
# upstream: only the first 10 unplaced clusters are named in the condition
_MAX_UNPLACED_SHOWN = 10

_STAGE_NAME = re.compile(r"^[a-z0-9]+$")
_WAIT_TIME = re.compile(r"^([0-9]+(\.[0-9]+)?(h|m|s))+$")
_MAX_CONCURRENCY_PERCENT_PATTERN = r"^(100|[1-9][0-9]?)%$"
_MAX_CONCURRENCY_PERCENT = re.compile(_MAX_CONCURRENCY_PERCENT_PATTERN)


class InitializationError(ValueError):
    """Initialisation failed for good: the run gets Initialized=False and is never retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def condition(self) -> RunCondition:
        """The Initialized=False condition upstream writes for this failure."""
        return RunCondition(INITIALIZED, "False", INITIALIZED_FAILED_REASON, self.message)


class TransientBindingStateError(RuntimeError):
    """A binding of an older policy is not Unscheduled yet: upstream retries initialisation later."""


# ---------------------------------------------------------------------------------------------------
# Strategy


@dataclass(frozen=True, slots=True)
class StageTask:
    """A before- or after-stage task: an Approval, or a TimedWait of `wait_time`."""

    type: str
    wait_time: timedelta | None = None


@dataclass(frozen=True, slots=True)
class StageConfig:
    """One stage of a ClusterStagedUpdateStrategy; a None selector selects no clusters, `{}` all."""

    name: str
    label_selector: LabelSelector | None = None
    sorting_label_key: str | None = None
    max_concurrency: int | str = 1
    after_stage_tasks: tuple[StageTask, ...] = ()
    before_stage_tasks: tuple[StageTask, ...] = ()


@dataclass(frozen=True, slots=True)
class StagedUpdateStrategy:
    """A ClusterStagedUpdateStrategy (namespace "" when cluster-scoped)."""

    name: str
    stages: tuple[StageConfig, ...]
    namespace: str = ""

    @property
    def key(self) -> str:
        """Go's types.NamespacedName.String(): always `namespace/name`, so `/name` when cluster-scoped."""
        return f"{self.namespace}/{self.name}"


def after_stage_tasks_error(tasks: Sequence[StageTask]) -> str | None:
    """Upstream validateAfterStageTask: why the after-stage tasks are invalid, or None."""
    if len(tasks) == 2 and tasks[0].type == tasks[1].type:
        return f"afterStageTasks cannot have two tasks of the same type: {tasks[0].type}"
    for index, task in enumerate(tasks):
        if task.type != TIMED_WAIT:
            continue
        if task.wait_time is None:
            return f"task {index} of type TimedWait has wait duration set to nil"
        if task.wait_time <= timedelta(0):
            return f"task {index} of type TimedWait has wait duration <= 0"
    return None


def parse_staged_update_strategy(
    raw: Mapping[str, Any], field_path: str = "", *, initializer_checks: bool = True
) -> StagedUpdateStrategy:
    """Parse a ClusterStagedUpdateStrategy manifest with the CRD rules and the initializer's task checks.

    `field_path` is where `raw` sits in its document ("" for a whole document). Raises ManifestError.
    `initializer_checks=False` parses a strategy the hub already admitted: the after-stage task checks
    the CRD does not enforce are left to `initialize_update_run`, which reports them as upstream does.
    """
    metadata = raw.get("metadata") or {}
    spec_path = _join(field_path, "spec")
    spec = raw.get("spec")
    if not isinstance(spec, Mapping):
        raise ManifestError(spec_path, "Required value")
    stages_path = f"{spec_path}.stages"
    raw_stages = spec.get("stages")
    if not isinstance(raw_stages, list):
        raise ManifestError(stages_path, "Required value")
    if len(raw_stages) > MAX_STAGES:
        raise ManifestError(stages_path, f"Too many: {len(raw_stages)}: must have at most {MAX_STAGES} items")
    stages = tuple(
        _parse_stage(item, f"{stages_path}[{i}]", initializer_checks) for i, item in enumerate(raw_stages)
    )
    seen: set[str] = set()
    for index, stage in enumerate(stages):
        if stage.name in seen:
            raise ManifestError(f"{stages_path}[{index}].name", f'Duplicate value: "{stage.name}"')
        seen.add(stage.name)
    return StagedUpdateStrategy(
        name=str(metadata.get("name") or ""),
        namespace=str(metadata.get("namespace") or ""),
        stages=stages,
    )


def _join(base: str, child: str) -> str:
    return f"{base}.{child}" if base else child


def _parse_stage(raw: Any, path: str, initializer_checks: bool) -> StageConfig:
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{path}.name", "Required value")
    if len(name) > MAX_STAGE_NAME_LENGTH:
        raise ManifestError(f"{path}.name", f"Too long: may not be longer than {MAX_STAGE_NAME_LENGTH}")
    if not _STAGE_NAME.match(name):
        raise ManifestError(f"{path}.name", f"Invalid value: \"{name}\": should match '^[a-z0-9]+$'")
    sorting_label_key = raw.get("sortingLabelKey")
    if sorting_label_key is not None and not isinstance(sorting_label_key, str):
        raise ManifestError(f"{path}.sortingLabelKey", "must be a string")
    after_path, before_path = f"{path}.afterStageTasks", f"{path}.beforeStageTasks"
    after = _parse_tasks(raw.get("afterStageTasks"), after_path, limit=2)
    before = _parse_tasks(raw.get("beforeStageTasks"), before_path, limit=1)
    _check_after_stage_tasks(after, after_path, initializer_checks)
    _check_before_stage_tasks(before, before_path)
    return StageConfig(
        name=name,
        # upstream: a nil selector selects no cluster, unlike `{}` which selects all
        label_selector=parse_optional_label_selector(raw.get("labelSelector"), f"{path}.labelSelector"),
        sorting_label_key=sorting_label_key,
        max_concurrency=_parse_max_concurrency(raw.get("maxConcurrency"), f"{path}.maxConcurrency"),
        after_stage_tasks=after,
        before_stage_tasks=before,
    )


def _parse_max_concurrency(raw: Any, path: str) -> int | str:
    if raw is None:
        return 1
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise ManifestError(path, "must be an integer or a percentage string")
    if isinstance(raw, int):
        if raw < 1:
            raise ManifestError(path, "maxConcurrency must be at least 1")
        return in_range(raw, path)
    if not _MAX_CONCURRENCY_PERCENT.match(raw):
        raise ManifestError(
            path, f"Invalid value: \"{raw}\": should match '{_MAX_CONCURRENCY_PERCENT_PATTERN}'"
        )
    return raw


def _parse_tasks(raw: Any, path: str, *, limit: int) -> tuple[StageTask, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    if len(raw) > limit:
        raise ManifestError(path, f"Too many: {len(raw)}: must have at most {limit} items")
    return tuple(_parse_task(item, f"{path}[{i}]") for i, item in enumerate(raw))


def _parse_task(raw: Any, path: str) -> StageTask:
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    task_type = raw.get("type")
    if task_type not in (TIMED_WAIT, APPROVAL):
        raise ManifestError(
            f"{path}.type",
            f'Unsupported value: "{task_type}": supported values: "{TIMED_WAIT}", "{APPROVAL}"',
        )
    wait_text = raw.get("waitTime")
    if wait_text is None:
        return StageTask(task_type)
    if not isinstance(wait_text, str) or not _WAIT_TIME.match(wait_text):
        raise ManifestError(
            f"{path}.waitTime", f'Invalid value: "{wait_text}": use hours, minutes and seconds, e.g. 1h30m'
        )
    try:
        return StageTask(task_type, parse_go_duration(wait_text))
    except DurationError as exc:
        raise ManifestError(f"{path}.waitTime", str(exc)) from exc


def _check_after_stage_tasks(tasks: tuple[StageTask, ...], path: str, initializer_checks: bool) -> None:
    # CRD CEL rules first, then the initializer's own checks (same texts as the Initialized condition)
    if any(t.type == APPROVAL and t.wait_time is not None for t in tasks):
        raise ManifestError(path, "AfterStageTaskType is Approval, waitTime is not allowed")
    if any(t.type == TIMED_WAIT and t.wait_time is None for t in tasks):
        raise ManifestError(path, "AfterStageTaskType is TimedWait, waitTime is required")
    if initializer_checks and (problem := after_stage_tasks_error(tasks)) is not None:
        raise ManifestError(path, problem)


def _check_before_stage_tasks(tasks: tuple[StageTask, ...], path: str) -> None:
    if any(t.type == TIMED_WAIT for t in tasks):
        raise ManifestError(path, "BeforeStageTaskType cannot be TimedWait")
    if any(t.wait_time is not None for t in tasks):
        raise ManifestError(path, "AfterStageTaskType is Approval, waitTime is not allowed")


# ---------------------------------------------------------------------------------------------------
# Initialisation


@dataclass(frozen=True, slots=True)
class MemberClusterLabels:
    """A member cluster as stage selection sees it: its name and labels."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UpdateRunBinding:
    """A placement binding as initialisation sees it; `latest_policy`: it names the latest policy."""

    target_cluster: str
    state: str
    latest_policy: bool = True


@dataclass(frozen=True, slots=True)
class RunCondition:
    """A status condition of the run (type, status, reason, message)."""

    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class StageTaskPlan:
    """A stage task as recorded in the run status; approvals carry their request name."""

    type: str
    wait_time: timedelta | None = None
    approval_request_name: str | None = None


@dataclass(frozen=True, slots=True)
class StagePlan:
    """A computed stage: its clusters in update order, its tasks and its configured maxConcurrency."""

    name: str
    clusters: tuple[str, ...]
    before_stage_tasks: tuple[StageTaskPlan, ...] = ()
    after_stage_tasks: tuple[StageTaskPlan, ...] = ()
    max_concurrency: int | str = 1

    @property
    def before_stage_approval_request_name(self) -> str | None:
        """The before-stage ApprovalRequest name, or None without a before-stage approval."""
        return _approval_name(self.before_stage_tasks)

    @property
    def after_stage_approval_request_name(self) -> str | None:
        """The after-stage ApprovalRequest name, or None without an after-stage approval."""
        return _approval_name(self.after_stage_tasks)


@dataclass(frozen=True, slots=True)
class UpdateRunPlan:
    """A successfully initialised run: stages, the delete stage, the observed count and the condition."""

    run_name: str
    stages: tuple[StagePlan, ...]
    deletion_stage: StagePlan
    policy_observed_cluster_count: int
    initialized: RunCondition


def _approval_name(tasks: Sequence[StageTaskPlan]) -> str | None:
    return next((t.approval_request_name for t in tasks if t.approval_request_name), None)


def approval_request_name(run_name: str, stage_name: str, task_type: str) -> str:
    """The ClusterApprovalRequest name: `<run>-before-<stage>` / `<run>-after-<stage>` (since Dec 2025)."""
    if task_type == BEFORE_STAGE:
        return f"{run_name}-before-{stage_name}"
    if task_type == AFTER_STAGE:
        return f"{run_name}-after-{stage_name}"
    raise ValueError(f"task type must be {BEFORE_STAGE!r} or {AFTER_STAGE!r}, got {task_type!r}")


def initialize_update_run(
    run_name: str,
    policy: PlacementPolicy,
    member_clusters: Sequence[MemberClusterLabels],
    bindings: Sequence[UpdateRunBinding],
    strategy: StagedUpdateStrategy,
) -> UpdateRunPlan:
    """Compute a staged update run's stages as upstream initialisation does (collect the bindings, check the
    observed cluster count, then sort the selected clusters into stages).

    Raises InitializationError (Initialized=False, never retried) with upstream's message, or
    TransientBindingStateError when a binding of an older policy is not Unscheduled yet.
    """
    selected, to_delete, observed = collect_scheduled_clusters(policy, bindings)
    stages = _compute_stages(run_name, member_clusters, set(selected), strategy)
    deletion = StagePlan(DELETE_STAGE_NAME, tuple(sorted(to_delete)))
    return UpdateRunPlan(
        run_name=run_name,
        stages=stages,
        deletion_stage=deletion,
        policy_observed_cluster_count=observed,
        initialized=RunCondition(
            INITIALIZED, "True", INITIALIZED_SUCCEEDED_REASON, INITIALIZED_SUCCEEDED_MESSAGE
        ),
    )


def _failure(kind: str, detail: str) -> InitializationError:
    return InitializationError(f"{INITIALIZATION_FAILED}: {kind}: {detail}")


def collect_scheduled_clusters(
    policy: PlacementPolicy, bindings: Sequence[UpdateRunBinding], policy_snapshot_key: str = ""
) -> tuple[list[str], list[str], int]:
    """Upstream collectScheduledClusters: (selected clusters, to-delete clusters, observed cluster count).

    The run engine calls it on its own because upstream checks the bindings before it fetches the
    strategy; `policy_snapshot_key` (`namespace/name`) ends the "no bindings" message as upstream's does.
    Raises InitializationError or TransientBindingStateError like initialize_update_run.
    """
    selected, to_delete = _collect_bindings(bindings, policy_snapshot_key)
    observed = _observed_cluster_count(policy, len(selected))
    if observed != len(selected):
        raise _failure(
            UNEXPECTED_BEHAVIOR,
            f"the number of selected bindings {len(selected)} is not equal to the observed cluster count "
            f"{observed}",
        )
    return selected, to_delete, observed


def _collect_bindings(
    bindings: Sequence[UpdateRunBinding], policy_snapshot_key: str
) -> tuple[list[str], list[str]]:
    """(selected clusters, to-delete clusters), in binding order."""
    selected: list[str] = []
    to_delete: list[str] = []
    for binding in bindings:
        if binding.state == STATE_UNSCHEDULED:
            to_delete.append(binding.target_cluster)
        elif binding.latest_policy:
            selected.append(binding.target_cluster)
        else:
            # upstream: the scheduler has not caught up with the new policy yet; retry, don't fail
            raise TransientBindingStateError(
                f"binding for cluster `{binding.target_cluster}` with an old policy snapshot has state "
                f"{binding.state}, we might observe a transient state, need retry"
            )
    if not selected and not to_delete:
        snapshot = f"snapshot {policy_snapshot_key}" if policy_snapshot_key else "snapshot"
        raise InitializationError(
            f"{INITIALIZATION_FAILED}: no scheduled or to-be-deleted bindings found for the latest policy "
            + snapshot
        )
    return selected, to_delete


def _observed_cluster_count(policy: PlacementPolicy, selected: int) -> int:
    """N for PickN, len(clusterNames) for PickFixed, and the selected bindings for PickAll."""
    if policy.placement_type == PICK_N:
        return policy.number_of_clusters or 0
    if policy.placement_type == PICK_FIXED:
        return len(policy.cluster_names)
    return selected


def _compute_stages(
    run_name: str,
    member_clusters: Sequence[MemberClusterLabels],
    selected: set[str],
    strategy: StagedUpdateStrategy,
) -> tuple[StagePlan, ...]:
    """Upstream computeRunStageStatus: every selected cluster in exactly one stage, in strategy order."""
    # upstream lists MemberClusters from the API server, which returns them sorted by name
    clusters = sorted(member_clusters, key=lambda c: c.name)
    placed: set[str] = set()
    stages = []
    for stage in strategy.stages:
        if (problem := after_stage_tasks_error(stage.after_stage_tasks)) is not None:
            raise _failure(
                USER_ERROR,
                f"the after stage tasks are invalid, updateStrategy: `{strategy.key}`, stage: {stage.name}, "
                f"err: {problem}",
            )
        members = [c for c in clusters if c.name in selected and _selects(stage.label_selector, c.labels)]
        for cluster in members:
            if cluster.name in placed:
                raise _failure(USER_ERROR, f"cluster `{cluster.name}` appears in more than one stages")
            if stage.sorting_label_key is not None:
                _sorting_value(stage.sorting_label_key, cluster)
            placed.add(cluster.name)
        stages.append(_stage_plan(run_name, stage, _order(members, stage.sorting_label_key)))
    unplaced = sorted(selected - placed)
    if unplaced:
        shown = ", ".join(unplaced[:_MAX_UNPLACED_SHOWN])
        raise _failure(
            USER_ERROR,
            f"some clusters are not placed in any stage, total {len(unplaced)}, showing up to 10: {shown}",
        )
    return tuple(stages)


def _selects(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    # upstream LabelSelectorAsSelector: nil -> labels.Nothing(), {} -> labels.Everything()
    return selector is not None and selector.matches(labels)


def _sorting_value(key: str, cluster: MemberClusterLabels) -> int:
    value = cluster.labels.get(key, "")
    try:
        return go_atoi(value)
    except ValueError as exc:
        raise _failure(
            USER_ERROR, f"the sorting label `{key}:{value}` on cluster `{cluster.name}` is not valid: {exc}"
        ) from exc


def _order(members: list[MemberClusterLabels], sorting_label_key: str | None) -> tuple[str, ...]:
    """Sorting label as an integer ascending, then name; name only without a sorting key."""
    if sorting_label_key is None:
        return tuple(c.name for c in members)
    ordered = sorted(members, key=lambda c: (go_atoi(c.labels.get(sorting_label_key, "")), c.name))
    return tuple(c.name for c in ordered)


def _stage_plan(run_name: str, stage: StageConfig, clusters: tuple[str, ...]) -> StagePlan:
    return StagePlan(
        name=stage.name,
        clusters=clusters,
        before_stage_tasks=tuple(
            _task_plan(run_name, stage.name, t, BEFORE_STAGE) for t in stage.before_stage_tasks
        ),
        after_stage_tasks=tuple(
            _task_plan(run_name, stage.name, t, AFTER_STAGE) for t in stage.after_stage_tasks
        ),
        max_concurrency=stage.max_concurrency,
    )


def _task_plan(run_name: str, stage_name: str, task: StageTask, task_type: str) -> StageTaskPlan:
    if task.type != APPROVAL:
        return StageTaskPlan(task.type, task.wait_time)
    # upstream removeWaitTimeFromUpdateRunStatus: an approval never keeps a waitTime
    return StageTaskPlan(task.type, None, approval_request_name(run_name, stage_name, task_type))


# ---------------------------------------------------------------------------------------------------
# Execution helpers


@dataclass(frozen=True, slots=True)
class StageStatus:
    """A stage's Succeeded condition as execution reads it: True, False (failed) or None (not yet)."""

    stage_name: str
    succeeded: bool | None = None


def max_concurrency_value(value: int | str, stage_cluster_count: int) -> int:
    """Upstream calculateMaxConcurrencyValue: an int as given, a percentage rounded down; 0 becomes 1.

    Raises IntOrStringError for a string that is not a percentage.
    """
    scaled = scaled_value(value, stage_cluster_count, round_up=False)
    # upstream: only an exact 0 is lifted to 1 (a small percentage of a small stage)
    return 1 if scaled == 0 else scaled


def timed_wait_elapsed(stage_finished_at: datetime, wait: timedelta, now: datetime) -> bool:
    """A TimedWait is done once `now >= finished + wait`; the wait starts when the last cluster finished."""
    return now >= stage_finished_at + wait


def current_stage_index(stage_statuses: Sequence[StageStatus]) -> int | None:
    """The first stage that has not succeeded (the one execution works on), or None when all have."""
    return next((i for i, s in enumerate(stage_statuses) if s.succeeded is not True), None)


def approval_request_labels(run_name: str, stage_name: str, task_type: str) -> dict[str, str]:
    """The four labels of a ClusterApprovalRequest (`task_type`: beforeStage or afterStage)."""
    if task_type not in (BEFORE_STAGE, AFTER_STAGE):
        raise ValueError(f"task type must be {BEFORE_STAGE!r} or {AFTER_STAGE!r}, got {task_type!r}")
    return {
        TARGET_UPDATING_STAGE_LABEL: stage_name,
        TARGET_UPDATE_RUN_LABEL: run_name,
        TASK_TYPE_LABEL: task_type,
        IS_LATEST_UPDATE_RUN_APPROVAL_LABEL: "true",
    }
