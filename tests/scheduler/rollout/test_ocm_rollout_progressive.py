"""RolloutStrategy Progressive: mandatory groups first, then maxConcurrency clusters at a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
DEADLINE = "90s"
# Placement decisionGroups: "canary" spilled over two indices (clustersPerDecisionGroup 1), then the rest.
GROUPS = groups_from_decisions(
    [
        ("canary", 0, ["canary-a"]),
        ("canary", 1, ["canary-b"]),
        ("", 2, ["eu-1", "eu-2", "eu-3"]),
        ("", 3, ["us-1", "us-2", "us-3"]),
    ]
)
CANARY_0, CANARY_1, EU, US = (group.key for group in GROUPS)
CANARY_FIRST = (MandatoryDecisionGroup(group_name="canary"),)


def _status(name: str, group: GroupKey, status: str, seconds_ago: int | None = None) -> ClusterRolloutStatus:
    since = None if seconds_ago is None else NOW - timedelta(seconds=seconds_ago)
    return ClusterRolloutStatus(name, group, status, since)


def _names(statuses: tuple[ClusterRolloutStatus, ...]) -> list[str]:
    return [s.cluster_name for s in statuses]


def test_unset_max_concurrency_rolls_out_every_non_mandatory_cluster() -> None:
    # the API comment promises clustersPerDecisionGroup; the code takes every remaining cluster
    result = plan_rollout(RolloutStrategy(type="Progressive"), GROUPS, [], NOW)
    assert _names(result.clusters_to_rollout) == [
        "canary-a",
        "canary-b",
        "eu-1",
        "eu-2",
        "eu-3",
        "us-1",
        "us-2",
        "us-3",
    ]


def test_percent_max_concurrency_rounds_up() -> None:
    strategy = RolloutStrategy(type="Progressive", max_concurrency="25%")  # 25% of 8 = 2
    assert _names(plan_rollout(strategy, GROUPS, [], NOW).clusters_to_rollout) == ["canary-a", "canary-b"]
    strategy = RolloutStrategy(type="Progressive", max_concurrency="30%")  # 2.4 -> 3
    assert len(plan_rollout(strategy, GROUPS, [], NOW).clusters_to_rollout) == 3


def test_clusters_in_flight_count_against_max_concurrency_before_new_ones() -> None:
    strategy = RolloutStrategy(type="Progressive", progress_deadline=DEADLINE, max_concurrency=3)
    statuses = [
        _status("us-1", US, RolloutStatus.PROGRESSING, 60),
        _status("eu-2", EU, RolloutStatus.TO_APPLY),
    ]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert _names(result.clusters_to_rollout) == ["eu-2", "us-1", "canary-a"]
    assert result.recheck_after == timedelta(seconds=30)


def test_succeeded_clusters_still_soaking_hold_a_slot() -> None:
    strategy = RolloutStrategy(type="Progressive", min_success_time=timedelta(minutes=5), max_concurrency=2)
    statuses = [_status("canary-a", CANARY_0, RolloutStatus.SUCCEEDED, 60)]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert _names(result.clusters_to_rollout) == ["canary-a", "canary-b"]
    assert result.recheck_after == timedelta(minutes=4)


def test_failure_over_max_failures_breaches_and_stops_new_clusters() -> None:
    strategy = RolloutStrategy(type="Progressive", progress_deadline=DEADLINE, max_concurrency=4)
    statuses = [_status("canary-a", CANARY_0, RolloutStatus.FAILED, 30)]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert result.max_failure_breach
    assert _names(result.clusters_to_rollout) == ["canary-a"]


def test_after_a_breach_to_apply_statuses_are_not_rolled_out() -> None:
    strategy = RolloutStrategy(type="Progressive", progress_deadline=DEADLINE)
    statuses = [
        _status("eu-1", EU, RolloutStatus.FAILED, 120),
        _status("eu-2", EU, RolloutStatus.TO_APPLY),
        _status("eu-3", EU, RolloutStatus.PROGRESSING, 30),
    ]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert result.max_failure_breach
    assert _names(result.clusters_timeout) == ["eu-1"]
    assert _names(result.clusters_to_rollout) == ["eu-3"]


def test_max_failures_percent_is_of_all_placement_clusters() -> None:
    strategy = RolloutStrategy(
        type="Progressive", progress_deadline=DEADLINE, max_failures="25%", max_concurrency=4
    )
    statuses = [_status(name, EU, RolloutStatus.FAILED, 120) for name in ("eu-1", "eu-2")]  # 25% of 8 = 2
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert not result.max_failure_breach
    assert _names(result.clusters_timeout) == ["eu-1", "eu-2"]
    assert _names(result.clusters_to_rollout) == ["canary-a", "canary-b", "eu-3", "us-1"]


def test_mandatory_group_name_covers_every_index_with_that_name() -> None:
    strategy = RolloutStrategy(type="Progressive", mandatory_decision_groups=CANARY_FIRST, max_concurrency=2)
    first = plan_rollout(strategy, GROUPS, [], NOW)
    assert _names(first.clusters_to_rollout) == ["canary-a"]  # one mandatory group at a time
    second = plan_rollout(strategy, GROUPS, [_status("canary-a", CANARY_0, RolloutStatus.SUCCEEDED, 60)], NOW)
    assert [(s.cluster_name, s.group_key) for s in second.clusters_to_rollout] == [("canary-b", CANARY_1)]


def test_after_mandatory_groups_succeed_the_rest_rolls_out_by_concurrency() -> None:
    strategy = RolloutStrategy(type="Progressive", mandatory_decision_groups=CANARY_FIRST, max_concurrency=2)
    done = [
        _status(name, key, RolloutStatus.SUCCEEDED, 60)
        for name, key in (("canary-a", CANARY_0), ("canary-b", CANARY_1))
    ]
    assert _names(plan_rollout(strategy, GROUPS, done, NOW).clusters_to_rollout) == ["eu-1", "eu-2"]


def test_mandatory_group_tolerates_no_failure() -> None:
    strategy = RolloutStrategy(
        type="Progressive",
        progress_deadline=DEADLINE,
        max_failures="100%",
        mandatory_decision_groups=CANARY_FIRST,
    )
    statuses = [
        _status("canary-a", CANARY_0, RolloutStatus.FAILED, 120),
        _status("canary-b", CANARY_1, RolloutStatus.SUCCEEDED, 60),
    ]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert result.max_failure_breach
    assert _names(result.clusters_timeout) == ["canary-a"]
    assert result.clusters_to_rollout == ()


def test_mandatory_pass_also_judges_clusters_outside_the_mandatory_groups() -> None:
    strategy = RolloutStrategy(
        type="Progressive", progress_deadline=DEADLINE, mandatory_decision_groups=CANARY_FIRST
    )
    statuses = [_status("us-2", US, RolloutStatus.PROGRESSING, 30)]
    result = plan_rollout(strategy, GROUPS, statuses, NOW)
    assert _names(result.clusters_to_rollout) == ["us-2", "canary-a"]


def test_mandatory_group_by_index() -> None:
    strategy = RolloutStrategy(
        type="Progressive", mandatory_decision_groups=(MandatoryDecisionGroup(group_index=2),)
    )
    assert _names(plan_rollout(strategy, GROUPS, [], NOW).clusters_to_rollout) == ["eu-1", "eu-2", "eu-3"]


def test_mandatory_groups_that_do_not_exist_are_ignored() -> None:
    strategy = RolloutStrategy(
        type="Progressive",
        max_concurrency=1,
        mandatory_decision_groups=(
            MandatoryDecisionGroup(group_name="gone"),
            MandatoryDecisionGroup(group_index=9),
        ),
    )
    assert _names(plan_rollout(strategy, GROUPS, [], NOW).clusters_to_rollout) == ["canary-a"]


def test_max_concurrency_digits_without_percent_is_a_handler_error() -> None:
    with pytest.raises(RolloutError) as raised:
        plan_rollout(RolloutStrategy(type="Progressive", max_concurrency="5"), GROUPS, [], NOW)
    assert str(raised.value) == (
        "failed to parse the provided maxConcurrency: '5' is an invalid maximum threshold value: "
        "string is not a percentage"
    )


def test_bad_max_failures_is_reported_before_max_concurrency() -> None:
    strategy = RolloutStrategy(type="Progressive", max_failures="1", max_concurrency="2")
    with pytest.raises(RolloutError, match="^failed to parse the provided maxFailures: '1' is an invalid"):
        plan_rollout(strategy, GROUPS, [], NOW)
