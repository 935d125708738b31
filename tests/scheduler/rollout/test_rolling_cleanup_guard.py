"""The deleting-binding guard (waitForResourcesToCleanUp) in front of every round."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from placement.scheduler.fleet.types import (
    PICK_ALL,
    STATE_BOUND,
    STATE_SCHEDULED,
    STATE_UNSCHEDULED,
    ClusterResourceBinding,
    PlacementPolicy,
    RollingUpdateConfig,
)
from placement.scheduler.rollout.rolling import BindingConflictError, plan_rolling_update_round
from tests.scheduler.fleet.builders import binding

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def plan(*bindings: ClusterResourceBinding):
    return plan_rolling_update_round(PlacementPolicy(PICK_ALL), RollingUpdateConfig(), bindings, "app-1", NOW)


def crb(name: str, cluster: str, state: str, snapshot: str = "", **extra) -> ClusterResourceBinding:
    return binding(cluster, state, name=name, resource_snapshot_name=snapshot, **extra)


def deleting(cluster: str) -> ClusterResourceBinding:
    return crb(f"old-{cluster}", cluster, STATE_UNSCHEDULED, "app-0", deleting=True)


def test_scheduled_binding_next_to_a_deleting_one_waits_five_seconds() -> None:
    round_ = plan(deleting("eu-1"), crb("new-eu-1", "eu-1", STATE_SCHEDULED))

    assert round_.waiting_for_cleanup == "eu-1"
    assert round_.requeue_after == timedelta(seconds=5)
    assert not round_.need_roll and not round_.to_be_updated


def test_unscheduled_binding_previously_scheduled_also_waits() -> None:
    again = crb("new-eu-1", "eu-1", STATE_UNSCHEDULED, previous_state=STATE_SCHEDULED)

    assert plan(deleting("eu-1"), again).waiting_for_cleanup == "eu-1"


def test_bound_binding_next_to_a_deleting_one_is_an_error() -> None:
    with pytest.raises(BindingConflictError, match="has a bound binding"):
        plan(deleting("eu-1"), crb("new-eu-1", "eu-1", STATE_BOUND, "app-1"))


def test_unscheduled_binding_previously_bound_next_to_a_deleting_one_is_an_error() -> None:
    again = crb("new-eu-1", "eu-1", STATE_UNSCHEDULED, previous_state=STATE_BOUND)

    with pytest.raises(BindingConflictError, match="previous state is `bound`"):
        plan(deleting("eu-1"), again)


def test_two_live_bindings_on_one_cluster_is_an_error() -> None:
    with pytest.raises(BindingConflictError, match="has bindings"):
        plan(crb("a", "eu-1", STATE_SCHEDULED), crb("b", "eu-1", STATE_SCHEDULED))


def test_a_lone_deleting_binding_does_not_block_the_round() -> None:
    assert plan(deleting("eu-1")).waiting_for_cleanup is None
