"""A rolling update with nothing left to roll queues no round; the hub's reports on its bindings, read by the
watch, bring the next one (upstream's rollout controller stops there and re-plans on binding updates)."""

from typing import Any

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub
from inventory.signals import managed_objects_reported
from inventory.sync import apply_events
from placement import queries
from placement.models import Placement
from placement.rollouts import rolling
from tests.placement.rollout_hub import (
    BINDING,
    create_crp,
    crp_spec,
    fleet_editor,
    fleet_hub,
    fleet_sim,
    hub_bindings,
    settle,
)
from tests.watching import watch_kind_until

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
__all__ = ["fleet_editor", "fleet_hub", "fleet_sim"]  # fixtures, used by name


def rollout(crp: Placement) -> dict[str, Any]:
    crp.refresh_from_db()
    return crp.status["rollout"]


def in_progress(crp: Placement) -> bool:
    return queries.filter_rollout(Placement.objects.all(), queries.ROLLOUT_ACTIVE).filter(pk=crp.pk).exists()


def available(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)


def test_a_round_that_finds_every_binding_on_the_latest_snapshot_queues_none(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=1))
    assert rollout(crp)["needRoll"] and rollout(crp)["requeueAt"] is not None
    fleet_sim.reconcile()  # the bindings are applying, none is available yet
    summary = rolling.run_round(crp)
    assert not summary["needRoll"] and summary["ready"] == [] and summary["requeueAt"] is None
    # still in progress for the lists and the page, which follow the bindings' reports
    assert sorted(summary["applying"]) == sorted(hub_bindings(fleet_sim, crp))
    assert in_progress(crp)


def test_the_watched_reports_of_the_bindings_run_the_round_that_finds_them_ready(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=1))
    settle(fleet_sim)
    clusters = sorted(hub_bindings(fleet_sim, crp))

    def all_available(objects: list[dict[str, Any]], **_: object) -> bool:
        return sum(available(obj) for obj in objects) == len(clusters)

    watch_kind_until(fleet_hub, BINDING, managed_objects_reported, all_available)

    summary = rollout(crp)
    assert summary["round"] == 2 and sorted(summary["ready"]) == clusters
    assert not summary["needRoll"] and summary["requeueAt"] is None
    assert summary["applying"] == [] and not in_progress(crp)

    # the same reports again (a re-list) are no news: no round
    unchanged = [("MODIFIED", obj) for obj in hub_bindings(fleet_sim, crp).values()]
    apply_events(fleet_hub, KINDS_BY_NAME[BINDING], unchanged)
    assert rollout(crp)["round"] == 2


@pytest.mark.parametrize(
    "status",
    [
        ["not", "a", "mapping"],
        {"conditions": "none"},
        {"conditions": [7, {"type": "Available", "status": "True", "observedGeneration": "x"}]},
        {"conditions": [{"type": "Available", "status": "True", "observedGeneration": True}]},
    ],
)
def test_a_malformed_report_on_a_binding_is_read_as_the_conditions_it_holds(
    fleet_hub: Hub, fleet_sim: DemoHub, editor: User, status: Any
) -> None:
    crp = create_crp(fleet_hub, editor, crp_spec(2, maxUnavailable=1, maxSurge=1))
    obj = next(iter(hub_bindings(fleet_sim, crp).values()))
    report = {**obj, "status": status}
    # a report whose Available reads as one is news (the stored row has none yet); one with no readable
    # condition is not: neither raises
    news = isinstance(status, dict) and isinstance(status["conditions"], list)
    assert rolling.reported(fleet_hub, [report]) == ([crp.pk] if news else [])
