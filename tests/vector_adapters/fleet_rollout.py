"""Vector adapters for KubeFleet rollout planning: rolling-update rounds and staged update runs.

Kinds: `rollout_pick_bindings`, `staged_max_concurrency`, `staged_stage_assignment`,
`staged_task_validation`. Readiness shorthands follow `conventions.rollout.readiness` of fleet.json.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.manifests import parse_placement_policy, parse_rollout_strategy
from placement.scheduler.fleet.types import BindingCondition, ClusterResourceBinding, PlacementPolicy
from placement.scheduler.intstr import IntOrStringError
from placement.scheduler.rollout.rolling import (
    APPLIED,
    AVAILABLE,
    FALSE,
    TRUE,
    BindingUpdate,
    RolloutRound,
    plan_rolling_update_round,
)
from placement.scheduler.rollout.staged import (
    InitializationError,
    MemberClusterLabels,
    UpdateRunBinding,
    initialize_update_run,
    max_concurrency_value,
    parse_staged_update_strategy,
)
from tests.vector_adapters.common import check

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
GENERATION = 1
DEFAULT_RUN_NAME = "example-run"
PLACEMENT_NAME = "example-crp"
IGNORED_EXPECTED_KEYS = frozenset({"note"})


def _no_warning(message: str) -> None:
    raise AssertionError(f"unexpected manifest warning: {message}")


def _policy(raw: dict[str, Any] | None, field_path: str) -> PlacementPolicy:
    """The vector's placement policy, defaulted and validated like the CRP's `spec.policy`."""
    return parse_placement_policy(raw, _no_warning, field_path)


# ---------------------------------------------------------------------------------------------------
# rollout_pick_bindings


def _condition(condition_type: str, status: str, reason: str = "", ago: float = 0) -> BindingCondition:
    return BindingCondition(
        type=condition_type,
        status=status,
        reason=reason,
        observed_generation=GENERATION,
        last_transition_time=NOW - timedelta(seconds=ago),
    )


def _readiness_conditions(raw: dict[str, Any]) -> tuple[BindingCondition, ...]:
    """The conditions behind a readiness shorthand (fleet.json `conventions.rollout.readiness`)."""
    readiness = raw.get("readiness", "none")
    if readiness == "none":
        return ()
    if readiness == "canBeReady":
        return (_condition(APPLIED, TRUE),)
    if readiness == "ready":
        return (_condition(APPLIED, TRUE), _condition(AVAILABLE, TRUE, "AllManifestsAvailable"))
    if readiness == "failedToApply":
        return (_condition(APPLIED, FALSE),)
    if readiness == "notTrackable":
        ago = raw["availableLastTransitionSecondsAgo"]
        return (
            _condition(APPLIED, TRUE),
            _condition(AVAILABLE, TRUE, "NotAllWorkAreAvailabilityTrackable", ago),
        )
    raise AssertionError(f"unknown readiness shorthand {readiness!r}")


def _binding(raw: dict[str, Any]) -> ClusterResourceBinding:
    return ClusterResourceBinding(
        name=f"binding-{raw['index']}",
        placement_name=PLACEMENT_NAME,
        target_cluster=raw["targetCluster"],
        state=raw["state"],
        resource_snapshot_name=raw.get("resourceSnapshotName") or "",
        deleting=bool(raw.get("deleting")),
        generation=GENERATION,
        conditions=_readiness_conditions(raw),
        previous_state=raw.get("previousState") or None,
    )


def _update_indices(updates: tuple[BindingUpdate, ...], index_of: dict[str, int]) -> list[int]:
    return [index_of[update.binding.name] for update in updates]


_ROUND_FIELDS: dict[str, Callable[[RolloutRound, dict[str, int]], Any]] = {
    "toBeUpdatedIndices(ordered)": lambda r, ix: _update_indices(r.to_be_updated, ix),
    "staleUnselectedIndices": lambda r, ix: sorted(_update_indices(r.stale, ix)),
    "upToDateBoundIndices": lambda r, ix: sorted(ix[b.name] for b in r.up_to_date),
    "needRoll": lambda r, ix: r.need_roll,
    "requeueAfterSeconds(rounded)": lambda r, ix: round(r.requeue_after.total_seconds()),
}
_UNORDERED_ROUND_FIELDS = frozenset({"staleUnselectedIndices", "upToDateBoundIndices"})


def run_rollout_pick_bindings(vector: dict[str, Any]) -> None:
    """One rollout-controller round over the vector's bindings; asserts every expected field."""
    given = vector["input"]
    strategy = parse_rollout_strategy(
        {"type": "RollingUpdate", "rollingUpdate": given.get("rollingUpdate")}, "input"
    )
    assert strategy.rolling_update is not None
    bindings = [_binding(raw) for raw in given["bindings"]]
    index_of = {b.name: raw["index"] for b, raw in zip(bindings, given["bindings"], strict=True)}
    plan = plan_rolling_update_round(
        _policy(given.get("policy"), "input.policy"),
        strategy.rolling_update,
        bindings,
        given.get("latestResourceSnapshotName") or "",
        NOW,
    )
    for key, expected in vector["expected"].items():
        if key in IGNORED_EXPECTED_KEYS:
            continue
        assert key in _ROUND_FIELDS, f"unknown expected field {key!r}"
        if key in _UNORDERED_ROUND_FIELDS:
            expected = sorted(expected)
        check(vector, key, _ROUND_FIELDS[key](plan, index_of), expected)


# ---------------------------------------------------------------------------------------------------
# staged_max_concurrency


def run_staged_max_concurrency(vector: dict[str, Any]) -> None:
    """maxConcurrency of a stage of the given size (or the error for a non-percentage string)."""
    given, expected = vector["input"], vector["expected"]
    try:
        value = max_concurrency_value(given["maxConcurrency"], given["stageClusterCount"])
    except IntOrStringError as exc:
        check(vector, "error", True, bool(expected.get("error")))
        assert "value" not in expected, f"unexpected error: {exc}"
        return
    check(vector, "error", False, bool(expected.get("error")))
    check(vector, "value", value, expected["value"])


# ---------------------------------------------------------------------------------------------------
# staged_stage_assignment / staged_task_validation


def _strategy_manifest(stages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": "example-strategy"}, "spec": {"stages": stages}}


def _world(given: dict[str, Any]) -> tuple[list[MemberClusterLabels], list[UpdateRunBinding]]:
    clusters = [MemberClusterLabels(c["name"], dict(c.get("labels") or {})) for c in given["clusters"]]
    bindings = [
        UpdateRunBinding(
            target_cluster=c["name"],
            state=c["binding"]["state"],
            latest_policy=c["binding"].get("policySnapshot", "latest") == "latest",
        )
        for c in given["clusters"]
        if c.get("binding")
    ]
    return clusters, bindings


def _expect_failure(vector: dict[str, Any], message: str | None) -> None:
    """Compare an outcome with `expected.initialized` / `expected.messageContains`."""
    expected = vector["expected"]
    check(vector, "initialized", message is None, expected.get("initialized", True))
    if "messageContains" in expected:
        assert message is not None
        check(vector, "messageContains", expected["messageContains"] in message, True)


def _stage_view(stage: Any, expected: dict[str, Any]) -> dict[str, Any]:
    view = {"name": stage.name, "clusters": list(stage.clusters)}
    if "beforeStageApprovalRequestName" in expected:
        view["beforeStageApprovalRequestName"] = stage.before_stage_approval_request_name
    if "afterStageApprovalRequestName" in expected:
        view["afterStageApprovalRequestName"] = stage.after_stage_approval_request_name
    return view


def run_staged_stage_assignment(vector: dict[str, Any]) -> None:
    """Initialise a run over the vector's clusters/bindings/stages; assert stages or the failure text."""
    given, expected = vector["input"], vector["expected"]
    clusters, bindings = _world(given)
    try:
        plan = initialize_update_run(
            given.get("updateRunName") or DEFAULT_RUN_NAME,
            _policy(given.get("placementPolicy"), "input.placementPolicy"),
            clusters,
            bindings,
            parse_staged_update_strategy(_strategy_manifest(given["stages"])),
        )
    except (InitializationError, ManifestError) as exc:
        _expect_failure(vector, str(exc))
        return
    _expect_failure(vector, None)
    if "stages" in expected:
        actual = [_stage_view(s, e) for s, e in zip(plan.stages, expected["stages"], strict=False)]
        check(vector, "stages.count", len(plan.stages), len(expected["stages"]))
        check(vector, "stages", actual, expected["stages"])
    if "deletionStage" in expected:
        deletion = {"name": plan.deletion_stage.name, "clusters": list(plan.deletion_stage.clusters)}
        check(vector, "deletionStage", deletion, expected["deletionStage"])
    if "policyObservedClusterCount" in expected:
        check(
            vector,
            "policyObservedClusterCount",
            plan.policy_observed_cluster_count,
            expected["policyObservedClusterCount"],
        )


def run_staged_task_validation(vector: dict[str, Any]) -> None:
    """Validate a stage's task lists as the CRD and the initializer would, via a one-stage run."""
    given = vector["input"]
    stage: dict[str, Any] = {"name": "stage1", "labelSelector": {}}
    for key in ("afterStageTasks", "beforeStageTasks"):
        if key in given:
            stage[key] = given[key]
    member = MemberClusterLabels("member-1", {})
    try:
        strategy = parse_staged_update_strategy(_strategy_manifest([stage]))
        initialize_update_run(
            DEFAULT_RUN_NAME,
            PlacementPolicy(),
            [member],
            [UpdateRunBinding(member.name, "Scheduled")],
            strategy,
        )
    except (InitializationError, ManifestError) as exc:
        _expect_failure(vector, str(exc))
        return
    _expect_failure(vector, None)


ADAPTERS = {
    "rollout_pick_bindings": run_rollout_pick_bindings,
    "staged_max_concurrency": run_staged_max_concurrency,
    "staged_stage_assignment": run_staged_stage_assignment,
    "staged_task_validation": run_staged_task_validation,
}
