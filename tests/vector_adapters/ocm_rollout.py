"""Vector adapters for OCM rollout planning (sdk-go RolloutHandler and its helpers).

Vectors spell cluster rollout statuses as upstream's Go structs: `groupKey` may be null or omit zero
fields, `status` is a name (or Go's integer enum), times are RFC 3339 and omitted when nil. Both sides
are normalised to that shape before comparing, lists in the order upstream produces them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.rollout.ocm import (
    ClusterRolloutStatus,
    GroupKey,
    RolloutError,
    RolloutResult,
    RolloutStatus,
    calculate_rollout_size,
    determine_rollout_status,
    groups_from_decisions,
    parse_rollout_strategy,
    parse_timeout,
    plan_rollout,
)
from placement.scheduler.timeutil import format_time, parse_time
from tests.vector_adapters.common import check

# Go's RolloutStatus enum order (ToApply = iota).
_STATUS_BY_NUMBER = dict(enumerate(RolloutStatus))


def _status_name(raw: Any) -> str:
    if raw is None:
        return RolloutStatus.TO_APPLY
    if isinstance(raw, int):
        return _STATUS_BY_NUMBER.get(raw, str(raw))
    return str(raw)


def _group_key(raw: dict[str, Any] | None) -> GroupKey:
    raw = raw or {}
    return GroupKey(raw.get("groupName") or "", raw.get("groupIndex") or 0)


def _cluster_status(raw: dict[str, Any]) -> ClusterRolloutStatus:
    return ClusterRolloutStatus(
        cluster_name=raw.get("clusterName", ""),
        group_key=_group_key(raw.get("groupKey")),
        status=_status_name(raw.get("status")),
        last_transition_time=parse_time(raw.get("lastTransitionTime")),
        recheck_time=parse_time(raw.get("recheckTime")),
    )


def _render(status: ClusterRolloutStatus) -> dict[str, Any]:
    return {
        "clusterName": status.cluster_name,
        "groupKey": {"groupName": status.group_key.group_name, "groupIndex": status.group_key.group_index},
        "status": str(status.status),
        "lastTransitionTime": format_time(status.last_transition_time),
        "recheckTime": format_time(status.recheck_time),
    }


def _rendered(statuses: Any) -> list[dict[str, Any]]:
    return [_render(s) for s in statuses]


def _expected_statuses(raw: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return _rendered(_cluster_status(entry) for entry in raw or [])


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def _duration(seconds: float | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)


def _assert_error(vector: dict[str, Any], exc: Exception) -> None:
    expected = vector.get("expected_error")
    if isinstance(expected, str):
        check(vector, "expected_error", str(exc), expected)


def _plan(vector: dict[str, Any]) -> RolloutResult:
    pages = [
        (group["groupKey"].get("groupName"), group["groupKey"].get("groupIndex") or 0, group["clusters"])
        for group in vector.get("cluster_groups", [])
    ]
    existing = [_cluster_status(entry) for entry in vector.get("existing_status") or []]
    strategy = parse_rollout_strategy(vector.get("strategy"))
    return plan_rollout(strategy, groups_from_decisions(pages), existing, parse_time(vector["now"]))


def run_rollout_handler(vector: dict[str, Any]) -> None:
    """RolloutHandler.GetRolloutCluster: strategy + decision groups + existing statuses at a fake now."""
    if vector.get("expected_error"):
        with pytest.raises((RolloutError, ManifestError)) as raised:
            _plan(vector)
        _assert_error(vector, raised.value)
        return
    result = _plan(vector)
    expected = vector["expected"]
    for field, actual in (
        ("clustersToRollout", result.clusters_to_rollout),
        ("clustersTimeOut", result.clusters_timeout),
        ("clustersRemoved", result.clusters_removed),
    ):
        if field in expected:
            check(vector, f"expected.{field}", _rendered(actual), _expected_statuses(expected[field]))
    if "maxFailureBreach" in expected:
        check(vector, "expected.maxFailureBreach", result.max_failure_breach, expected["maxFailureBreach"])
    if "recheckAfterSeconds" in expected:
        check(
            vector,
            "expected.recheckAfterSeconds",
            _seconds(result.recheck_after),
            expected["recheckAfterSeconds"],
        )


def run_determine_rollout_status(vector: dict[str, Any]) -> None:
    """determineRolloutStatus for one status; `timeoutSeconds` null is the infinite ("None") timeout."""
    given = vector["input"]
    rollout, timed_out = determine_rollout_status(
        _cluster_status(given["status"]),
        _duration(given.get("minSuccessTimeSeconds")) or timedelta(0),
        _duration(given.get("timeoutSeconds")),
        parse_time(vector["now"]),
    )
    expected = vector["expected"]
    check(
        vector,
        "expected.rolloutClusters",
        _rendered(rollout),
        _expected_statuses(expected["rolloutClusters"]),
    )
    check(
        vector,
        "expected.timeoutClusters",
        _rendered(timed_out),
        _expected_statuses(expected["timeoutClusters"]),
    )


def run_calculate_rollout_size(vector: dict[str, Any]) -> None:
    """calculateRolloutSize(value, total, default); an error case only asserts the error."""
    given = vector["input"]
    if vector.get("expected_error"):
        with pytest.raises(RolloutError) as raised:
            calculate_rollout_size(given["value"], given["total"], given["default"])
        _assert_error(vector, raised.value)
        return
    check(
        vector,
        "expected",
        calculate_rollout_size(given["value"], given["total"], given["default"]),
        vector["expected"],
    )


def run_parse_timeout(vector: dict[str, Any]) -> None:
    """parseTimeout; `expected_seconds` null is the infinite timeout."""
    if vector.get("expected_error"):
        with pytest.raises(RolloutError) as raised:
            parse_timeout(vector["input"])
        _assert_error(vector, raised.value)
        return
    check(vector, "expected_seconds", _seconds(parse_timeout(vector["input"])), vector["expected_seconds"])


ADAPTERS = {
    "RolloutHandler": run_rollout_handler,
    "determineRolloutStatus": run_determine_rollout_status,
    "calculateRolloutSize": run_calculate_rollout_size,
    "parseTimeout": run_parse_timeout,
}
