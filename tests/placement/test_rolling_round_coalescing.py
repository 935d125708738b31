"""The hub's reports on a CRP's bindings queue one round while one is queued, as upstream's work queue
holds a key once: a burst of reports does not queue a round per report, and reports arriving once the
round has started queue the next."""

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


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """From here on, with a broker: the arguments of each round queued (nothing runs)."""
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    monkeypatch.setattr(
        tasks.rolling_update_round, "apply_async", lambda args, kwargs=None, **_: calls.append(tuple(args))
    )
    return calls


def report_each(hub: Hub, objects: list[dict[str, Any]]) -> None:
    """The watch reads the bindings' updates one event at a time."""
    for obj in objects:
        apply_events(hub, KINDS_BY_NAME[BINDING], [("MODIFIED", obj)])


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
    assert queued == [(crp.pk,)]


def test_reports_after_the_round_started_queue_the_next(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: list
) -> None:
    first, *rest = hub_bindings(fleet_sim, crp).values()
    report_each(fleet_hub, [first])
    assert queued == [(crp.pk,)]
    # a worker runs the queued round: it reads every binding's report, so those are no news now
    assert tasks.rolling_update_round(crp.pk)["state"] == "rolled"
    report_each(fleet_hub, rest)
    assert len(queued) == 1
    # the hub reports a binding unavailable again: a new report, and no round is queued any more
    name = first["metadata"]["name"]
    conditions = [
        {**c, "status": "False", "reason": "NotAvailableYet"} if c["type"] == "Available" else c
        for c in first["status"]["conditions"]
    ]
    fleet_sim.store.patch(BINDING, name, {"status": {"conditions": conditions}}, subresource="status")
    report_each(fleet_hub, [fleet_sim.store.get(BINDING, name)])
    assert queued == [(crp.pk,), (crp.pk,)]


def test_a_marker_whose_message_was_lost_is_taken_again(
    fleet_hub: Hub, fleet_sim: DemoHub, crp: Placement, queued: list
) -> None:
    objects = list(hub_bindings(fleet_sim, crp).values())
    Placement.objects.filter(pk=crp.pk).update(round_queued_at=timezone.now() - timedelta(seconds=30))
    report_each(fleet_hub, objects)
    assert queued == []
    Placement.objects.filter(pk=crp.pk).update(round_queued_at=timezone.now() - QUEUED_TTL)
    report_each(fleet_hub, objects)
    assert queued == [(crp.pk,)]
