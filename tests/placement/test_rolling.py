"""Rolling updates of a dashboard-owned PickN CRP executed against the demo hub's simulated apply."""

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from inventory.models import Hub
from placement.models import Placement
from placement.rollouts import rolling
from tests.placement.rollout_hub import (
    create_crp,
    crp_spec,
    fleet_editor,
    fleet_hub,
    fleet_sim,
    settle,
    snapshots,
)

pytestmark = pytest.mark.django_db
__all__ = ["fleet_editor", "fleet_hub", "fleet_sim"]  # fixtures, used by name


def rollout(crp: Placement) -> dict:
    crp.refresh_from_db()
    return crp.status["rollout"]


def new_snapshot(crp: Placement, editor: User, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        rolling.roll_out_new_snapshot(crp, actor=editor)


def test_the_first_round_binds_every_scheduled_cluster_within_the_surge(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=1))
    summary = rollout(crp)
    # N=4, maxSurge 1: maxToAdd = 4 + 1 - 0 can-be-ready bindings
    assert summary["budgets"]["maxToAdd"] == 5 and summary["targetNumber"] == 4
    assert summary["wave"]["number"] == 1 and len(summary["updated"]) == 4
    assert set(snapshots(fleet_sim, crp).values()) == {"web-0-snapshot"}
    assert summary["needRoll"] and summary["requeueAt"] is not None

    settle(fleet_sim)
    summary = rolling.run_round(crp)
    assert sorted(summary["ready"]) == sorted(snapshots(fleet_sim, crp)) and summary["requeueAt"] is None


def test_a_new_resource_snapshot_rolls_wave_by_wave_within_max_unavailable(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User, django_capture_on_commit_callbacks
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable="50%", maxSurge=1))
    settle(fleet_sim)
    rolling.run_round(crp)
    clusters = sorted(snapshots(fleet_sim, crp))

    new_snapshot(crp, editor, django_capture_on_commit_callbacks)
    summary = rollout(crp)
    # 50% of 4 rounds up to 2: two clusters leave the ready set per wave, in binding-name order
    assert summary["budgets"]["maxUnavailable"] == 2 and summary["budgets"]["maxToRemove"] == 2
    first = summary["updated"]
    assert len(first) == 2 and summary["wave"]["number"] == 1
    assert sorted(summary["stale"]) == sorted(set(clusters) - set(first))

    # while the first wave applies nothing else moves
    fleet_sim.reconcile()
    summary = rolling.run_round(crp)
    assert summary["updated"] == [] and summary["wave"]["number"] == 1 and summary["needRoll"]

    settle(fleet_sim)
    summary = rolling.run_round(crp)
    assert sorted(summary["updated"]) == sorted(set(clusters) - set(first)) and summary["wave"]["number"] == 2

    settle(fleet_sim)
    summary = rolling.run_round(crp)
    assert set(snapshots(fleet_sim, crp).values()) == {"web-1-snapshot"}
    assert not summary["needRoll"] and summary["requeueAt"] is None and sorted(summary["ready"]) == clusters
