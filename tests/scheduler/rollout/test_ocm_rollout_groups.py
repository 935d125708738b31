"""Decision groups from PlacementDecisions, removed clusters and the tracker's group-index quirks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from placement.scheduler.rollout.ocm import (
    ClusterGroup,
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


def test_pages_of_one_group_are_merged_and_groups_ordered_by_index() -> None:
    groups = groups_from_decisions(
        [
            ("", "1", ["eu-2"]),
            ("canary", "0", ["canary-a"]),
            ("", "1", ["eu-1"]),  # a second PlacementDecision page of group 1
        ]
    )
    assert groups == [
        ClusterGroup(GroupKey("canary", 0), frozenset({"canary-a"})),
        ClusterGroup(GroupKey("", 1), frozenset({"eu-1", "eu-2"})),
    ]


def test_missing_group_name_label_is_the_empty_name() -> None:
    assert groups_from_decisions([(None, 0, ["eu-1"])])[0].key == GroupKey("", 0)


@pytest.mark.parametrize("label", ["", "first", "1.0"])
def test_bad_group_index_label_is_a_tracker_error(label: str) -> None:
    with pytest.raises(
        RolloutError, match=f'^incorrect group index: strconv.Atoi: parsing "{label}": invalid syntax$'
    ):
        groups_from_decisions([("", label, ["eu-1"])])


def test_statuses_of_clusters_no_longer_decided_are_removed_unjudged() -> None:
    groups = groups_from_decisions([("", 0, ["eu-1", "eu-3"])])
    gone = ClusterRolloutStatus("eu-2", GroupKey("", 0), RolloutStatus.FAILED, NOW - timedelta(hours=1))
    kept = ClusterRolloutStatus("eu-1", GroupKey("", 0), RolloutStatus.SUCCEEDED, NOW - timedelta(hours=1))
    result = plan_rollout(
        RolloutStrategy(type="Progressive", progress_deadline="90s"), groups, [kept, gone], NOW
    )
    assert result.clusters_removed == (gone,)
    assert [s.cluster_name for s in result.clusters_to_rollout] == ["eu-3"]
    assert not result.max_failure_breach  # a removed cluster's failure does not count


def test_removed_clusters_keep_their_input_order() -> None:
    groups = groups_from_decisions([("", 0, ["eu-1"])])
    statuses = [ClusterRolloutStatus(name) for name in ("us-2", "eu-1", "ap-1")]
    result = plan_rollout(RolloutStrategy(), groups, statuses, NOW)
    assert [s.cluster_name for s in result.clusters_removed] == ["us-2", "ap-1"]


def test_groups_past_a_gap_in_the_indices_are_not_seen() -> None:
    # upstream ExistingClusterGroupsBesides walks indices 0..n-1 for n distinct indices
    groups = groups_from_decisions([("", 0, ["eu-1"]), ("", 2, ["us-1"])])
    status = ClusterRolloutStatus("us-1", GroupKey("", 2), RolloutStatus.SUCCEEDED)
    result = plan_rollout(RolloutStrategy(), groups, [status], NOW)
    assert [s.cluster_name for s in result.clusters_to_rollout] == ["eu-1"]
    assert result.clusters_removed == (status,)


def test_an_empty_mandatory_entry_selects_group_index_zero() -> None:
    groups = groups_from_decisions([("canary", 0, ["canary-a"]), ("", 1, ["eu-1", "eu-2"])])
    done = [ClusterRolloutStatus("canary-a", GroupKey("canary", 0), RolloutStatus.SUCCEEDED, NOW)]
    strategy = RolloutStrategy(
        type="ProgressivePerGroup", mandatory_decision_groups=(MandatoryDecisionGroup(),)
    )
    assert [s.cluster_name for s in plan_rollout(strategy, groups, [], NOW).clusters_to_rollout] == [
        "canary-a"
    ]
    assert [s.cluster_name for s in plan_rollout(strategy, groups, done, NOW).clusters_to_rollout] == [
        "eu-1",
        "eu-2",
    ]


def test_no_groups_plans_nothing() -> None:
    result = plan_rollout(RolloutStrategy(type="Progressive"), [], [], NOW)
    assert result.clusters_to_rollout == result.clusters_timeout == result.clusters_removed == ()
