"""PickAll (filters only, name order, no downscale) and PickFixed (no plugins, exact reason texts)."""

from __future__ import annotations

from datetime import timedelta

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import PlacementPolicy, Taint, Toleration
from tests.scheduler.fleet.builders import NOW, binding, member, placement

GPU = Taint("dedicated", "gpu")


def test_pick_all_selects_every_passing_cluster_in_name_order_with_zero_scores() -> None:
    inventory = FleetInventory([member("c"), member("a"), member("b", taints=(GPU,))])
    result = schedule_crp(placement(PlacementPolicy()), inventory, [], NOW)
    assert result.selected == ("a", "c")
    assert result.decisions[0].reason == (
        'Successfully scheduled resources for placement in "a" '
        "(affinity score: 0, topology spread score: 0): picked by scheduling policy"
    )
    assert result.decisions[-1].reason == (
        "ClusterUnschedulable, taint &{Key:dedicated Value:gpu Effect:NoSchedule} cannot be tolerated"
    )
    assert result.condition.status


def test_tolerated_taint_passes() -> None:
    inventory = FleetInventory([member("b", taints=(GPU,))])
    policy = PlacementPolicy(tolerations=(Toleration("dedicated", "Exists"),))
    assert schedule_crp(placement(policy), inventory, [], NOW).selected == ("b",)


def test_pick_all_keeps_a_binding_whose_cluster_became_tainted_under_the_same_policy() -> None:
    inventory = FleetInventory([member("a", taints=(GPU,))])
    result = schedule_crp(placement(PlacementPolicy()), inventory, [binding("a")], NOW)
    assert result.selected == ("a",)
    assert result.binding_changes == ()


def test_pick_all_unschedules_obsolete_bindings_that_fail_filters_after_a_policy_change() -> None:
    inventory = FleetInventory([member("a", taints=(GPU,)), member("b")])
    old = [binding("a", snapshot="web-0"), binding("b", snapshot="web-0")]
    result = schedule_crp(placement(PlacementPolicy()), inventory, old, NOW, policy_snapshot_name="web-1")
    assert [(c.action, c.binding.target_cluster) for c in result.binding_changes] == [
        ("patch", "b"),
        ("unschedule", "a"),
    ]


def test_pick_fixed_ignores_taints_and_reports_invalid_and_missing_names() -> None:
    stale = member("stale", heartbeat=NOW - timedelta(minutes=6, seconds=30))
    inventory = FleetInventory([member("tainted", taints=(GPU,)), stale])
    policy = PlacementPolicy("PickFixed", cluster_names=("tainted", "stale", "ghost"))
    result = schedule_crp(placement(policy), inventory, [], NOW)
    assert result.selected == ("tainted",)
    reasons = [d.reason for d in result.decisions]
    assert reasons[1] == (
        'Cluster "stale" is not eligible for resource placement yet: cluster is not connected to the fleet: '
        "no recent heartbeat signals (last received 6.50 minutes ago)"
    )
    assert reasons[2] == 'Specified cluster "ghost" is not found'
    assert result.decisions[0].reason == (
        'Successfully scheduled resources for placement in "tainted": picked by scheduling policy'
    )
    assert result.condition.message == (
        "could not find all clusters needed as specified by the scheduling policy, found 1 cluster(s) instead"
    )
    assert [c.binding.target_cluster for c in result.binding_changes] == ["tainted"]
