"""An aborted scheduling cycle keeps the bindings written before the failing step, as upstream's do."""

from __future__ import annotations

import pytest

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import (
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    ClusterResourceBinding,
    MemberCluster,
    PlacementPolicy,
    SchedulingError,
    TopologySpreadConstraint,
)
from tests.scheduler.fleet.builders import NOW, binding, member, placement

# an Unscheduled binding without the previous-state annotation: picking its cluster again aborts
LOST = binding("a1", STATE_UNSCHEDULED, previous_state=None)


def _written(
    policy: PlacementPolicy, bindings: list[ClusterResourceBinding], clusters: list[MemberCluster]
) -> dict[str, str]:
    with pytest.raises(SchedulingError, match="failed to find the previous state") as raised:
        schedule_crp(placement(policy), FleetInventory(clusters), bindings, NOW)
    return {b.target_cluster: b.state for b in raised.value.written}


def test_a_dangling_binding_stays_unscheduled_when_the_cycle_aborts() -> None:
    gone = binding("gone", STATE_SCHEDULED)
    assert _written(PlacementPolicy("PickAll"), [LOST, gone], [member("a1")]) == {"gone": STATE_UNSCHEDULED}


def test_picks_of_earlier_topology_cycles_stay_when_a_later_cycle_aborts() -> None:
    # cycle 1 picks the unlabelled cluster (score 0 beats -1), cycle 2 picks a1 and aborts
    spread = TopologySpreadConstraint("zone", 1, "DoNotSchedule")
    policy = PlacementPolicy("PickN", number_of_clusters=2, topology_spread_constraints=(spread,))
    written = _written(policy, [LOST], [member("a1", {"zone": "a"}), member("plain")])
    assert written == {"plain": STATE_SCHEDULED}


def test_pick_fixed_writes_nothing_of_its_own_when_one_name_aborts() -> None:
    # b1 is listed first and would get a new binding, but the whole list is cross-referenced first
    policy = PlacementPolicy("PickFixed", cluster_names=("b1", "a1"))
    assert _written(policy, [LOST], [member("a1"), member("b1")]) == {}
