"""RolloutStrategy ProgressivePerGroup: one decision group at a time, maxFailures per group size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from placement.scheduler.rollout.ocm import (
    ClusterRolloutStatus,
    GroupKey,
    MandatoryDecisionGroup,
    RolloutError,
    RolloutStatus,
    RolloutStrategy,
    groups_from_decisions,
    plan_rollout,
)

NOW = datetime(2022, 1, 1, tzinfo=UTC)
GROUPS = groups_from_decisions(
    [
        ("canary", 0, ["canary-a", "canary-b", "canary-c"]),
        ("", 1, ["eu-1", "eu-2", "eu-3"]),
        ("", 2, ["us-1", "us-2", "us-3"]),
    ]
)
CANARY, EU, US = (group.key for group in GROUPS)


def _strategy(**config: Any) -> RolloutStrategy:
    return RolloutStrategy(type="ProgressivePerGroup", progress_deadline="90s", **config)


def _status(name: str, group: GroupKey, status: str, seconds_ago: int | None = None) -> ClusterRolloutStatus:
    since = None if seconds_ago is None else NOW - timedelta(seconds=seconds_ago)
    return ClusterRolloutStatus(name, group, status, since)


def _names(statuses: tuple[ClusterRolloutStatus, ...]) -> list[str]:
    return [s.cluster_name for s in statuses]


def test_fresh_rollout_takes_the_first_group_only() -> None:
    result = plan_rollout(_strategy(), GROUPS, [], NOW)
    assert [(s.cluster_name, s.group_key) for s in result.clusters_to_rollout] == [
        ("canary-a", CANARY),
        ("canary-b", CANARY),
        ("canary-c", CANARY),
    ]


def test_a_failure_with_zero_max_failures_breaches_in_the_group() -> None:
    statuses = [
        _status("canary-a", CANARY, RolloutStatus.SUCCEEDED, 60),
        _status("canary-b", CANARY, RolloutStatus.FAILED, 120),
        _status("canary-c", CANARY, RolloutStatus.PROGRESSING, 60),
    ]
    result = plan_rollout(_strategy(), GROUPS, statuses, NOW)
    assert result.max_failure_breach
    assert _names(result.clusters_to_rollout) == ["canary-c"]
    assert [(s.cluster_name, s.status) for s in result.clusters_timeout] == [
        ("canary-b", RolloutStatus.TIME_OUT)
    ]
    assert result.recheck_after == timedelta(seconds=30)


def test_failures_within_max_failures_let_the_next_group_start() -> None:
    statuses = [
        _status("canary-a", CANARY, RolloutStatus.SUCCEEDED, 60),
        _status("canary-b", CANARY, RolloutStatus.FAILED, 120),
        _status("canary-c", CANARY, RolloutStatus.SUCCEEDED, 60),
    ]
    result = plan_rollout(_strategy(max_failures=2), GROUPS, statuses, NOW)
    assert not result.max_failure_breach
    assert [(s.cluster_name, s.group_key) for s in result.clusters_to_rollout] == [
        ("eu-1", EU),
        ("eu-2", EU),
        ("eu-3", EU),
    ]
    assert _names(result.clusters_timeout) == ["canary-b"]
    assert result.recheck_after is None


def test_max_failures_percent_is_of_the_group_size() -> None:
    statuses = [
        _status("canary-a", CANARY, RolloutStatus.FAILED, 120),
        _status("canary-b", CANARY, RolloutStatus.FAILED, 120),
        _status("canary-c", CANARY, RolloutStatus.SUCCEEDED, 60),
    ]
    assert not plan_rollout(
        _strategy(max_failures="50%"), GROUPS, statuses, NOW
    ).max_failure_breach  # 1.5 -> 2
    assert plan_rollout(_strategy(max_failures="33%"), GROUPS, statuses, NOW).max_failure_breach  # 0.99 -> 1


def test_to_apply_statuses_come_back_as_new_clusters_of_their_group() -> None:
    statuses = [
        _status("eu-2", EU, RolloutStatus.TO_APPLY),
        _status("canary-b", CANARY, RolloutStatus.TO_APPLY),
        _status("canary-a", CANARY, RolloutStatus.PROGRESSING, 30),
    ]
    result = plan_rollout(_strategy(), GROUPS, statuses, NOW)
    assert _names(result.clusters_to_rollout) == ["canary-a", "canary-b", "canary-c"]


def test_succeeded_groups_are_passed_until_one_has_work() -> None:
    done = [_status(f"canary-{x}", CANARY, RolloutStatus.SUCCEEDED, 60) for x in "abc"]
    done += [_status(f"eu-{n}", EU, RolloutStatus.SUCCEEDED, 60) for n in (1, 2, 3)]
    result = plan_rollout(_strategy(), GROUPS, done, NOW)
    assert [(s.cluster_name, s.group_key) for s in result.clusters_to_rollout] == [
        ("us-1", US),
        ("us-2", US),
        ("us-3", US),
    ]


def test_everything_done_plans_nothing() -> None:
    done = [
        _status(name, group.key, RolloutStatus.SUCCEEDED, 60) for group in GROUPS for name in group.clusters
    ]
    result = plan_rollout(_strategy(), GROUPS, done, NOW)
    assert result.clusters_to_rollout == result.clusters_timeout == ()
    assert result.recheck_after is None


def test_mandatory_group_comes_first_whatever_its_index() -> None:
    result = plan_rollout(
        _strategy(mandatory_decision_groups=(MandatoryDecisionGroup(group_index=2),)), GROUPS, [], NOW
    )
    assert _names(result.clusters_to_rollout) == ["us-1", "us-2", "us-3"]


def test_max_failures_is_validated_even_when_unused() -> None:
    with pytest.raises(RolloutError) as raised:
        plan_rollout(_strategy(max_failures="2"), GROUPS, [], NOW)
    assert str(raised.value) == (
        "failed to parse the provided maxFailures: '2' is an invalid maximum threshold value: "
        "string is not a percentage"
    )
