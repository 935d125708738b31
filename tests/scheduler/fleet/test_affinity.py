"""Required and preferred cluster affinity: exact quantities, Go rounding, extremes over all clusters."""

from __future__ import annotations

import numpy as np
import pytest

from placement.scheduler.fleet.affinity import affinity_scores, go_round, term_matches
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import (
    ClusterAffinity,
    ClusterSelectorTerm,
    PlacementPolicy,
    PreferredClusterSelector,
    PropertySelectorRequirement,
    PropertySorter,
    SchedulingError,
)
from placement.scheduler.labels import parse_label_selector
from tests.scheduler.fleet.builders import NOW, member, placement

NODE_COUNT = "kubernetes-fleet.io/node-count"


def _sorter_term(
    weight: int, order: str = "Descending", selector: dict | None = None
) -> PreferredClusterSelector:
    label_selector = None if selector is None else parse_label_selector(selector)
    return PreferredClusterSelector(
        weight, ClusterSelectorTerm(label_selector, property_sorter=PropertySorter(NODE_COUNT, order))
    )


def test_go_round_is_half_away_from_zero_not_bankers() -> None:
    values = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.8, 4.2, 0.49999999999999994])
    assert go_round(values).tolist() == [1, 2, 3, -1, -3, 3, 4, 0]


def test_sorter_rounds_worked_examples_from_the_spec() -> None:
    # range [2, 7], v = 4: Descending w8 -> 3.2 -> 3, Ascending w8 -> 4.8 -> 5, Ascending w7 -> 4.2 -> 4
    inventory = FleetInventory(
        member(n, properties={NODE_COUNT: v}) for n, v in (("lo", "2"), ("mid", "4"), ("hi", "7"))
    )
    every = np.ones(3, dtype=bool)
    mid = inventory.index["mid"]
    assert affinity_scores(inventory, [_sorter_term(8)], every)[mid] == 3
    assert affinity_scores(inventory, [_sorter_term(8, "Ascending")], every)[mid] == 5
    assert affinity_scores(inventory, [_sorter_term(7, "Ascending")], every)[mid] == 4


def test_sorter_extremes_include_clusters_that_fail_the_terms_label_selector() -> None:
    # "dev" (100) fails the selector but sets the maximum: b gets 90 * 10/90, not the full 90
    inventory = FleetInventory(
        [
            member("a", {"env": "prod"}, properties={NODE_COUNT: "10"}),
            member("b", {"env": "prod"}, properties={NODE_COUNT: "20"}),
            member("dev", {"env": "dev"}, properties={NODE_COUNT: "100"}),
            member("bare", {"env": "prod"}),
        ]
    )
    scores = affinity_scores(
        inventory, [_sorter_term(90, selector={"matchLabels": {"env": "prod"}})], np.ones(4, bool)
    )
    assert dict(zip(inventory.names, scores.tolist(), strict=True)) == {"a": 0, "b": 10, "bare": 0, "dev": 0}


def test_same_value_everywhere_scores_zero() -> None:
    inventory = FleetInventory(member(n, properties={NODE_COUNT: "4"}) for n in "ab")
    assert affinity_scores(inventory, [_sorter_term(100)], np.ones(2, bool)).tolist() == [0, 0]


def test_negative_weight_and_zero_weight_terms() -> None:
    inventory = FleetInventory([member("a", {"tier": "gold"})])
    gold = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"tier": "gold"}}))
    preferred = [PreferredClusterSelector(-30, gold), PreferredClusterSelector(0, gold)]
    assert affinity_scores(inventory, preferred, np.ones(1, bool)).tolist() == [-30]


def test_property_comparison_is_exact_across_units() -> None:
    cluster = member("a", allocatable={"memory": "1Gi"})
    equal = PropertySelectorRequirement("resources.kubernetes-fleet.io/allocatable-memory", "Eq", ("1024Mi",))
    greater = PropertySelectorRequirement(
        "resources.kubernetes-fleet.io/allocatable-memory", "Gt", ("1073741823",)
    )
    assert term_matches(cluster, ClusterSelectorTerm(property_selector=(equal, greater)))


def test_missing_property_does_not_match_and_is_not_an_error() -> None:
    requirement = PropertySelectorRequirement("resources.kubernetes-fleet.io/available-gpu", "Ge", ("1",))
    assert not term_matches(
        member("a", available={"cpu": "4"}), ClusterSelectorTerm(property_selector=(requirement,))
    )


def _required(*requirements: PropertySelectorRequirement) -> PlacementPolicy:
    term = ClusterSelectorTerm(property_selector=requirements)
    return PlacementPolicy("PickAll", affinity=ClusterAffinity((term,)))


def test_malformed_resource_property_name_aborts_the_cycle() -> None:
    inventory = FleetInventory([member("a", capacity={"cpu": "8"})])
    policy = _required(PropertySelectorRequirement("resources.kubernetes-fleet.io/cpu", "Ge", ("2",)))
    with pytest.raises(SchedulingError, match="invalid resource property name: cpu"):
        schedule_crp(placement(policy), inventory, [], NOW)


def test_unparsable_property_value_aborts_the_cycle_only_where_reached() -> None:
    broken = member("broken", {"env": "dev"}, properties={NODE_COUNT: "many"})
    inventory = FleetInventory([member("a", {"env": "prod"}, properties={NODE_COUNT: "3"}), broken])
    requirement = PropertySelectorRequirement(NODE_COUNT, "Ge", ("2",))
    prod_only = ClusterSelectorTerm(parse_label_selector({"matchLabels": {"env": "prod"}}), (requirement,))
    # the label selector stops "broken" before its property is read
    result = schedule_crp(
        placement(PlacementPolicy("PickAll", affinity=ClusterAffinity((prod_only,)))), inventory, [], NOW
    )
    assert result.selected == ("a",)
    with pytest.raises(SchedulingError, match="is not a valid quantity"):
        schedule_crp(placement(_required(requirement)), inventory, [], NOW)


def test_a_zero_weight_sorter_still_aborts_pick_n_on_an_unreadable_property() -> None:
    # upstream PreScore gathers the extremes of every sorter before Score skips the zero-weight terms;
    # the only cluster is ineligible, so nothing but that scan reads the property
    broken = member("broken", properties={NODE_COUNT: "many"}, heartbeat=NOW.replace(hour=10))
    sorter = PreferredClusterSelector(
        0, ClusterSelectorTerm(property_sorter=PropertySorter(NODE_COUNT, "Ascending"))
    )
    policy = PlacementPolicy("PickN", number_of_clusters=1, affinity=ClusterAffinity(preferred=(sorter,)))
    with pytest.raises(SchedulingError, match="is not a valid quantity"):
        schedule_crp(placement(policy), FleetInventory([broken]), [], NOW)
