"""A cluster that fails to apply: reported failed, not counted ready, updated outside the budget."""

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from inventory.models import Hub
from placement.models import PlacementEvent
from placement.rollouts import rolling
from tests.placement.rollout_hub import (
    create_crp,
    crp_spec,
    fleet_editor,
    fleet_hub,
    fleet_sim,
    make_apply_fail,
    own_rows,
    settle,
    snapshots,
)

pytestmark = pytest.mark.django_db
__all__ = ["fleet_editor", "fleet_hub", "fleet_sim"]  # fixtures, used by name


def test_a_failing_cluster_holds_the_rollout_and_is_retried_on_the_next_snapshot(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User, django_capture_on_commit_callbacks
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=1))
    settle(fleet_sim)
    rolling.run_round(crp)
    rows = own_rows(crp)
    # the first binding in list (name) order is the first the rollout updates
    bad = min(rows.values(), key=lambda row: row.name).spec["targetCluster"]
    others = sorted(set(rows) - {bad})
    make_apply_fail(fleet_sim, bad)

    with django_capture_on_commit_callbacks(execute=True):
        rolling.roll_out_new_snapshot(crp, actor=editor)
    crp.refresh_from_db()
    assert crp.status["rollout"]["updated"] == [bad]

    settle(fleet_sim)
    summary = rolling.run_round(crp)
    assert summary["failed"] == [bad] and sorted(summary["ready"]) == others
    # the failed cluster is neither ready nor able to become ready: no budget is left to update another
    budgets = summary["budgets"]
    assert (budgets["ready"], budgets["canBeReady"], budgets["maxToRemove"]) == (3, 3, 0)
    assert summary["updated"] == [] and sorted(summary["stale"]) == others
    assert summary["needRoll"] and summary["requeueAt"] is not None
    warning = crp.events.get(reason="RollingUpdateFailed")
    assert warning.type == PlacementEvent.Type.WARNING and bad in warning.message

    with django_capture_on_commit_callbacks(execute=True):
        rolling.roll_out_new_snapshot(crp, actor=editor)
    crp.refresh_from_db()
    # a failed binding is updated at once, outside maxUnavailable; the ready ones still wait
    assert crp.status["rollout"]["updated"] == [bad]
    assert snapshots(fleet_sim, crp)[bad] == "web-2-snapshot"
    assert {snapshots(fleet_sim, crp)[name] for name in others} == {"web-0-snapshot"}
