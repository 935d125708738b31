"""Topology spread: skew arithmetic traps, domains over all clusters, greedy one-pick cycles."""

from __future__ import annotations

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.topology import will_violate
from placement.scheduler.fleet.types import ClusterScore, PlacementPolicy, TopologySpreadConstraint
from tests.scheduler.fleet.builders import NOW, binding, member, placement


def test_reducing_the_skew_can_still_violate() -> None:
    # skew 3 -> 2 still exceeds maxSkew 1
    assert will_violate({"v1": 1, "v2": 4, "v3": 4}, "v1", 1) == (True, -1)


def test_two_domains_with_different_counts() -> None:
    assert will_violate({"v1": 0, "v2": 1}, "v1", 1) == (False, -1)
    assert will_violate({"v1": 0, "v2": 1}, "v2", 1) == (True, 1)


def _spread(count: int, when: str = "DoNotSchedule") -> PlacementPolicy:
    constraint = TopologySpreadConstraint("zone", 1, when)
    return PlacementPolicy("PickN", number_of_clusters=count, topology_spread_constraints=(constraint,))


def test_greedy_cycles_spread_across_zones() -> None:
    inventory = FleetInventory(
        member(name, {"zone": zone}) for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"))
    )
    result = schedule_crp(placement(_spread(4)), inventory, [], NOW)
    assert result.cycles == 4
    picks = [c.binding.target_cluster for c in result.binding_changes]
    assert picks == ["b2", "a2", "b1", "a1"]
    assert result.condition.status


def test_domains_include_ineligible_clusters() -> None:
    # zone c has only an unhealthy cluster: it still counts as an empty domain and blocks a second pick in a
    stale = member("c1", {"zone": "c"}, heartbeat=NOW.replace(hour=10))
    inventory = FleetInventory([member("a1", {"zone": "a"}), member("a2", {"zone": "a"}), stale])
    result = schedule_crp(placement(_spread(2)), inventory, [], NOW)
    assert result.selected == ("a2",)
    explanation = result.explain("a1")
    assert explanation is not None
    assert explanation.filtered_by == 'violated doNotSchedule topology spread constraint "zone" (max skew 1)'
    assert result.cycles == 2


def test_schedule_anyway_violation_costs_1000() -> None:
    inventory = FleetInventory([member("a1", {"zone": "a"}), member("b1", {"zone": "b"})])
    result = schedule_crp(placement(_spread(2, "ScheduleAnyway")), inventory, [binding("a1")], NOW)
    assert result.selected[0] == "b1"
    assert result.explain("b1").topology_spread_score == 1  # type: ignore[union-attr]


def test_cluster_without_the_topology_label_is_never_filtered() -> None:
    inventory = FleetInventory([member("a1", {"zone": "a"}), member("a2", {"zone": "a"}), member("plain")])
    result = schedule_crp(placement(_spread(3)), inventory, [binding("a1")], NOW)
    assert "plain" in result.selected


def test_an_obsolete_binding_unscheduled_in_one_cycle_loses_its_tie_break_in_the_next() -> None:
    # cycle 1 picks "plain" and marks the obsolete binding on a1 Unscheduled; from cycle 2 on a1 has no
    # obsolete binding, so the tie at -1 goes to the larger name b1 and a1 comes back last, at +1
    inventory = FleetInventory([member("a1", {"zone": "a"}), member("b1", {"zone": "b"}), member("plain")])
    old = binding("a1", snapshot="web-old", score=None)
    result = schedule_crp(placement(_spread(3)), inventory, [old], NOW)
    scores = {
        c.binding.target_cluster: c.binding.cluster_decision.cluster_score  # type: ignore[union-attr]
        for c in result.binding_changes
    }
    assert scores == {"plain": ClusterScore(0, 0), "a1": ClusterScore(0, 1), "b1": ClusterScore(0, -1)}
    assert [c.binding.target_cluster for c in result.binding_changes] == ["plain", "a1", "b1"]
