"""RolloutStrategy All: everything at once; minSuccessTime and maxFailures are ignored, as upstream."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from placement.scheduler.rollout.ocm import (
    ClusterRolloutStatus,
    GroupKey,
    RolloutStatus,
    RolloutStrategy,
    groups_from_decisions,
    plan_rollout,
)

NOW = datetime(2022, 1, 1, tzinfo=UTC)
CANARY, FLEET = GroupKey("canary", 0), GroupKey("", 1)
GROUPS = groups_from_decisions(
    [("canary", "0", ["canary-a", "canary-b"]), ("", "1", ["eu-1", "eu-2", "us-1"])]
)


def _status(name: str, group: GroupKey, status: str, seconds_ago: int) -> ClusterRolloutStatus:
    return ClusterRolloutStatus(name, group, status, NOW - timedelta(seconds=seconds_ago))


def test_fresh_rollout_targets_every_cluster_in_name_order() -> None:
    result = plan_rollout(RolloutStrategy(type="All"), GROUPS, [], NOW)
    assert [(s.cluster_name, s.group_key, s.status) for s in result.clusters_to_rollout] == [
        ("canary-a", CANARY, RolloutStatus.TO_APPLY),
        ("canary-b", CANARY, RolloutStatus.TO_APPLY),
        ("eu-1", FLEET, RolloutStatus.TO_APPLY),
        ("eu-2", FLEET, RolloutStatus.TO_APPLY),
        ("us-1", FLEET, RolloutStatus.TO_APPLY),
    ]
    assert result.recheck_after is None
    assert not result.max_failure_breach


def test_all_ignores_min_success_time_and_max_failures() -> None:
    strategy = RolloutStrategy(type="All", min_success_time=timedelta(hours=1), max_failures=0)
    statuses = [
        _status("canary-a", CANARY, RolloutStatus.SUCCEEDED, 30),  # would still soak under Progressive
        _status("canary-b", CANARY, RolloutStatus.FAILED, 30),
        _status("eu-1", FLEET, RolloutStatus.FAILED, 30),
    ]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert [s.cluster_name for s in result.clusters_to_rollout] == ["canary-b", "eu-1", "eu-2", "us-1"]
    assert not result.max_failure_breach


def test_progress_deadline_times_out_stale_clusters_and_sets_recheck_after() -> None:
    strategy = RolloutStrategy(type="All", progress_deadline="90s")
    statuses = [
        _status("canary-a", CANARY, RolloutStatus.FAILED, 120),
        _status("eu-1", FLEET, RolloutStatus.PROGRESSING, 60),
    ]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert [(s.cluster_name, s.status) for s in result.clusters_timeout] == [
        ("canary-a", RolloutStatus.TIME_OUT)
    ]
    assert [s.cluster_name for s in result.clusters_to_rollout] == ["eu-1", "canary-b", "eu-2", "us-1"]
    assert result.recheck_after == timedelta(seconds=30)
