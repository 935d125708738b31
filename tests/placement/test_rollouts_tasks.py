"""How dashboard-owned runs are stepped: a request queues one step (a burst queues one), in-process it
runs at once, the step's requeue time becomes a countdown task, the periodic runner steps every due
run nobody holds, and a claimed run is not stepped by a second runner."""

from datetime import timedelta

import pytest
from django.utils import timezone

from demohub import DemoHub
from placement.models import Owner, PlacementEvent, StagedUpdateRun
from placement.rollouts import runs as rollouts
from placement.rollouts import tasks
from tests.factories import StagedUpdateRunFactory
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    checkout_fixture,
    cluster_states,
    condition,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Tasks sent to the broker (a worker would run them), recorded instead of run."""
    sent: list[tuple] = []
    monkeypatch.setitem(tasks.reconcile_run.app.conf, "task_always_eager", False)
    monkeypatch.setattr(tasks.reconcile_run, "delay", lambda *args: sent.append(("now", *args)))
    monkeypatch.setattr(
        tasks.reconcile_run,
        "apply_async",
        lambda args, **options: sent.append(("later", *args, options.get("countdown"))),
    )
    return sent


def dashboard_run(**fields) -> StagedUpdateRun:
    return StagedUpdateRunFactory(owner=Owner.DASHBOARD, **fields)


def test_a_burst_of_requests_queues_one_step_until_it_starts(queued) -> None:
    run = dashboard_run(requeue_at=timezone.now() + timedelta(seconds=60))  # waiting: a timed step later
    assert rollouts.request_reconcile(run) is True
    assert rollouts.request_reconcile(run) is False
    assert queued == [("now", run.pk)]
    run.refresh_from_db()
    assert run.requeue_at <= timezone.now()  # the due marker
    hub_owned = StagedUpdateRunFactory(owner=Owner.HUB)
    assert rollouts.request_reconcile(hub_owned) is False  # the hub's controller runs it


def test_the_periodic_runner_queues_every_due_run_nobody_holds(queued) -> None:
    now = timezone.now()
    lost = dashboard_run(requeue_at=now - rollouts.QUEUED_TTL - timedelta(seconds=1))
    due = dashboard_run(requeue_at=now - timedelta(seconds=1))  # due just now: stepped now, not minutes later
    dashboard_run(requeue_at=now + timedelta(seconds=30))
    dashboard_run(requeue_at=now - timedelta(seconds=1), claimed_until=now + timedelta(minutes=1))  # held
    StagedUpdateRunFactory(owner=Owner.HUB, requeue_at=now - timedelta(hours=1))
    assert tasks.reconcile_due_runs() == [lost.pk, due.pk]
    assert queued == [("later", lost.pk, None), ("later", due.pk, None)]


def test_a_run_another_runner_holds_is_not_stepped(fleet_hub, hub_row, checkout, strategy, editor) -> None:
    run = new_run(hub_row, editor, state="Run")
    run.refresh_from_db()
    status = run.status
    later = timezone.now() + timedelta(minutes=1)
    StagedUpdateRun.objects.filter(pk=run.pk).update(requeue_at=timezone.now(), claimed_until=later)
    assert tasks.reconcile_run(run.pk) == {"state": "busy"}
    run.refresh_from_db()
    assert run.status == status and run.claimed_until == later


def test_a_step_queues_the_next_at_its_requeue_time(
    fleet_hub: DemoHub, hub_row, checkout, strategy, editor, queued
) -> None:
    run = new_run(hub_row, editor, state="Run")
    assert queued == [("now", run.pk)]
    answer = tasks.reconcile_run(run.pk)
    assert answer["state"] == "reconciled" and answer["requeue_after"] == 15.0
    assert answer["events"] == [
        "Initialized 2 stage(s) for 5 cluster(s), 0 to delete",
        f"Started updating cluster {CANARY[0]} in stage canary",
    ]
    (_, run_id, countdown) = queued[1]
    assert run_id == run.pk and 14 < countdown <= 15
    assert tasks.reconcile_run(StagedUpdateRun.objects.order_by("-pk").first().pk + 1) == {"state": "gone"}


def test_in_process_a_new_run_is_stepped_at_once(
    fleet_hub: DemoHub, hub_row, checkout, strategy, editor
) -> None:
    run = new_run(hub_row, editor, state="Run")
    run.refresh_from_db()
    assert condition(run.status, "Initialized") == ("True", "UpdateRunInitializedSuccessfully")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started",), CANARY[1]: ()}
    assert run.requeue_at > timezone.now()

    # nobody waits in-process: once due, the periodic runner's task steps it
    assert tasks.reconcile_due_runs() == []
    StagedUpdateRun.objects.filter(pk=run.pk).update(requeue_at=timezone.now() - timedelta(seconds=1))
    fleet_hub.reconcile()  # the hub syncs the binding, applies it and reports it available 5 s later
    fleet_hub.advance(5)
    fleet_hub.reconcile()
    assert tasks.reconcile_due_runs() == [run.pk]
    run.refresh_from_db()
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started", "Succeeded"), CANARY[1]: ("Started",)}
    assert run.claimed_until is None and run.claim_owner == ""  # the claim is released


def test_a_hub_failure_rolls_the_step_back_and_is_retried(
    fleet_hub: DemoHub, hub_row, checkout, strategy, editor, queued
) -> None:
    run = new_run(hub_row, editor, state="Run")
    fleet_hub.fail_next(20, status=500)
    answer = tasks.reconcile_run(run.pk)
    assert answer["state"] == "failed" and answer["attempts"] == 1
    run.refresh_from_db()
    assert run.status == {}  # nothing of the step was kept
    assert run.attempts == 1 and run.last_error.startswith("hub demo: ")
    assert timedelta(seconds=4) < run.requeue_at - timezone.now() <= rollouts.RETRY_FIRST
    event = PlacementEvent.objects.get(related=run.name)
    assert event.type == PlacementEvent.Type.WARNING
    assert event.message.startswith("the step failed (attempt 1) and is retried at ")
    assert queued[-1][:2] == ("later", run.pk)
