"""Decision groups from the selected clusters."""

import pytest

from placement.scheduler.labels import LabelSelector, Requirement
from placement.scheduler.ocm.decisions import (
    DecisionGroup,
    DecisionGroupSpec,
    DecisionStrategy,
    GroupStrategyError,
    SelectedCluster,
    build_decision_groups,
)


def _cloud(name: str, cloud: str, **claims: str) -> SelectedCluster:
    return SelectedCluster(name, {"cloud": cloud}, claims)


def _group(name: str, cloud: str) -> DecisionGroupSpec:
    return DecisionGroupSpec(name, LabelSelector(match_labels=(("cloud", cloud),)))


def test_canary_group_first_then_the_rest_in_chunks() -> None:
    selected = [_cloud("cluster1", "Amazon"), _cloud("cluster2", "Amazon"), _cloud("cluster3", "Azure")]
    selected.append(_cloud("cluster4", "Azure"))
    strategy = DecisionStrategy(
        clusters_per_decision_group="25%", decision_groups=(_group("canary", "Azure"),)
    )
    assert build_decision_groups(strategy, selected) == [
        DecisionGroup(0, "canary", ("cluster3",)),
        DecisionGroup(1, "canary", ("cluster4",)),
        DecisionGroup(2, "", ("cluster1",)),
        DecisionGroup(3, "", ("cluster2",)),
    ]


def test_group_matching_nothing_creates_no_group() -> None:
    # the next group takes index 0 (vector groups-4)
    selected = [_cloud("cluster1", "Amazon"), _cloud("cluster2", "Amazon")]
    strategy = DecisionStrategy(decision_groups=(_group("canary", "Azure"),))
    assert build_decision_groups(strategy, selected) == [DecisionGroup(0, "", ("cluster1", "cluster2"))]


def test_groups_hold_clusters_by_name_not_by_score() -> None:
    # score order is c, a, b; within a group upstream sorts by name
    selected = [_cloud("c", "Azure"), _cloud("a", "Azure"), _cloud("b", "Azure")]
    strategy = DecisionStrategy(clusters_per_decision_group=2)
    assert build_decision_groups(strategy, selected) == [
        DecisionGroup(0, "", ("a", "b")),
        DecisionGroup(1, "", ("c",)),
    ]


def test_a_cluster_joins_only_the_first_matching_group() -> None:
    selected = [_cloud("cluster1", "Azure", region="east")]
    everything = DecisionGroupSpec("all", LabelSelector())
    strategy = DecisionStrategy(decision_groups=(_group("azure", "Azure"), everything))
    assert build_decision_groups(strategy, selected) == [DecisionGroup(0, "azure", ("cluster1",))]


def test_claim_selector_is_anded_with_label_selector() -> None:
    selected = [_cloud("cluster1", "Azure", region="east"), _cloud("cluster2", "Azure", region="west")]
    east = DecisionGroupSpec(
        "east", LabelSelector(match_labels=(("cloud", "Azure"),)), (Requirement("region", "In", ("east",)),)
    )
    groups = build_decision_groups(DecisionStrategy(decision_groups=(east,)), selected)
    assert groups == [DecisionGroup(0, "east", ("cluster1",)), DecisionGroup(1, "", ("cluster2",))]


def test_nothing_selected_gives_one_empty_group() -> None:
    assert build_decision_groups(DecisionStrategy(), []) == [DecisionGroup(0, "", ())]


def test_invalid_group_length_raises() -> None:
    with pytest.raises(GroupStrategyError, match="^25 invalid type: string is not a percentage$"):
        build_decision_groups(DecisionStrategy(clusters_per_decision_group="25"), [_cloud("c1", "Azure")])
