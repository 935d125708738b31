"""The hub's reports on a CRP's bindings queue one round while one is queued, as upstream's work queue
holds a key once: a burst of reports does not queue a round per report, reports arriving once a round
has started queue the next, and a queued round that another round answered meanwhile is skipped."""

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from demohub import DemoHub
from fleetui.celery import app
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub
from inventory.sync import apply_events
from placement.models import Placement
from placement.rollouts import tasks
from placement.tasks import QUEUED_TTL
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

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
__all__ = ["fleet_editor", "fleet_hub", "fleet_sim"]  # fixtures, used by name


class Queued(list[tuple[int, dict[str, Any]]]):
    """The rounds queued: (placement id, keyword arguments) each."""

    def ids(self) -> list[int]:
        return [placement_id for placement_id, _ in self]


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> Queued:
    """From here on, with a broker: each round queued (nothing runs)."""
    calls = Queued()
    monkeypatch.setitem(app.conf, "task_always_eager", False)

    def record(args: tuple[int], kwargs: dict[str, Any] | None = None, **_: object) -> None:
        calls.append((*args, kwargs or {}))

    monkeypatch.setattr(tasks.rolling_update_round, "apply_async", record)
    return calls


def report_each(hub: Hub, objects: list[dict[str, Any]]) -> None:
    """The watch reads the bindings' updates one event at a time."""
    for obj in objects:
        apply_events(hub, KINDS_BY_NAME[BINDING], [("MODIFIED", obj)])


def unavailable(sim: DemoHub, binding: dict[str, Any]) -> dict[str, Any]:
    """The hub reports this binding unavailable again; answers the object as the hub lists it now."""
    name = binding["metadata"]["name"]
    conditions = [
        {**c, "status": "False", "reason": "NotAvailableYet"} if c["type"] == "Available" else c
        for c in binding["status"]["conditions"]
    ]
    sim.store.patch(BINDING, name, {"status": {"conditions": conditions}}, subresource="status")
    return sim.store.get(BINDING, name)


def rollout_round(crp: Placement) -> int:
    crp.refresh_from_db()
    return int(crp.status["rollout"]["round"])


@pytest.fixture
def crp(fleet_hub: Hub, fleet_sim: DemoHub, editor: User) -> Placement:
    """A CRP whose four bindings have become available on the hub since its last round read them."""
    placement = create_crp(fleet_hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=1))
    settle(fleet_sim)
    return placement


def test_a_burst_of_reports_queues_one_round(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: list
) -> None:
    objects = list(hub_bindings(fleet_sim, crp).values())
    report_each(fleet_hub, objects)
    report_each(fleet_hub, objects)
    assert queued.ids() == [crp.pk]


def test_reports_after_the_round_started_queue_the_next(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: list
) -> None:
    first, *rest = hub_bindings(fleet_sim, crp).values()
    report_each(fleet_hub, [first])
    assert queued.ids() == [crp.pk]
    # a worker runs the queued round: it reads every binding's report, so those are no news now
    [(_, message)] = queued
    assert tasks.rolling_update_round(crp.pk, **message)["state"] == "rolled"
    report_each(fleet_hub, rest)
    assert len(queued) == 1
    # the hub reports a binding unavailable again: a new report, and no round is queued any more
    report_each(fleet_hub, [unavailable(fleet_sim, first)])
    assert queued.ids() == [crp.pk, crp.pk]


def test_a_marker_whose_message_was_lost_is_taken_again(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: list
) -> None:
    objects = list(hub_bindings(fleet_sim, crp).values())
    Placement.objects.filter(pk=crp.pk).update(round_queued_at=timezone.now() - timedelta(seconds=30))
    report_each(fleet_hub, objects)
    assert queued.ids() == []
    Placement.objects.filter(pk=crp.pk).update(round_queued_at=timezone.now() - QUEUED_TTL)
    report_each(fleet_hub, objects)
    assert queued.ids() == [crp.pk]


def test_a_queued_round_another_round_answered_is_skipped(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: Queued
) -> None:
    report_each(fleet_hub, list(hub_bindings(fleet_sim, crp).values()))
    [(_, message)] = queued
    # the round timed by the first one comes first: it reads the bindings after the reports
    crp.refresh_from_db()
    due = crp.status["rollout"]["requeueAt"]
    assert tasks.rolling_update_round(crp.pk, due)["state"] == "rolled"
    assert tasks.rolling_update_round(crp.pk, **message) == {"state": "skipped"}
    assert rollout_round(crp) == 2
    # a report after that round queues the next, which runs
    report_each(fleet_hub, [unavailable(fleet_sim, next(iter(hub_bindings(fleet_sim, crp).values())))])
    [_, (_, message)] = queued
    assert tasks.rolling_update_round(crp.pk, **message)["state"] == "rolled"
    assert rollout_round(crp) == 3


def test_a_round_asked_for_while_another_runs_is_queued_again_with_its_marker(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: Queued
) -> None:
    report_each(fleet_hub, list(hub_bindings(fleet_sim, crp).values()))
    [(_, message)] = queued
    Placement.objects.filter(pk=crp.pk).update(rollout_claimed_until=timezone.now() + timedelta(minutes=1))
    assert tasks.rolling_update_round(crp.pk, **message) == {"state": "skipped"}
    assert queued == [(crp.pk, message), (crp.pk, message)]
    # still queued: the hub's reports meanwhile queue no other round
    report_each(fleet_hub, [unavailable(fleet_sim, next(iter(hub_bindings(fleet_sim, crp).values())))])
    assert len(queued) == 2
