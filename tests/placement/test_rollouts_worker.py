"""A real Celery worker (Redis broker, PostgreSQL) steps a dashboard-owned run at its requeue time:
the run's first step queues the next 15 s later, and the worker takes it then, with the demo hub's
controllers applying bindings in real time meanwhile. With every queued step lost, the beat task alone
takes the run to its approval gate, nobody viewing any page."""

import time
from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth.models import User

from demohub import DemoHub
from fleetui.celery import app
from placement import service
from placement.models import ApprovalRequest, Placement, StagedUpdateRun
from placement.rollouts import runs as rollouts
from placement.rollouts import tasks
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.runs_support import CANARY, STRATEGY_SPEC, cluster_states, crp_spec

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live_hub() -> Iterator[DemoHub]:
    """Real time; the controllers tick every 0.2 s and a binding is available 2 s after it changes."""
    with DemoHub(
        clusters=24,
        fleet=True,
        seed=7,
        controllers=True,
        controller_seconds=0.2,
        apply_seconds=1,
        available_seconds=1,
        bookmark_seconds=0.2,
    ) as hub:
        yield hub


def wait_for(condition, seconds: float, what: str, every: float = 0.2) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"{what} did not happen within {seconds} s"
        time.sleep(every)
    return time.monotonic() - started


def test_the_worker_takes_the_next_step_at_the_requeue_time(
    broker_url: str, database_url: str, live_hub: DemoHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    hub = synced_demo_hub_row(live_hub)
    editor: User = placement_role(hub, username="editor")  # admin of a populated set of the hub
    app.control.purge()  # messages of other runs are not this test's
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        kind = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
        service.create_placement(
            kind=kind, hub=hub, namespace="", name="checkout", spec=crp_spec(), actor=editor
        )
        rollouts.create_strategy(hub=hub, name="canary-then-prod", spec=STRATEGY_SPEC, actor=editor)
        spec = {"placementName": "checkout", "stagedRolloutStrategyName": "canary-then-prod", "state": "Run"}
        run = rollouts.create_run(hub=hub, name="checkout-1", spec=spec, actor=editor)

        def states() -> dict:
            fresh = StagedUpdateRun.objects.get(pk=run.pk)
            return cluster_states(fresh, "canary") if fresh.status.get("stagesStatus") else {}

        wait_for(lambda: states().get(CANARY[0]) == ("Started",), 20, "the first step")
        first = StagedUpdateRun.objects.get(pk=run.pk).requeue_at
        assert first is not None
        # the cluster is available after 2 s; nothing happens until the step due 15 s after the first
        waited = wait_for(lambda: states().get(CANARY[1]) == ("Started",), 40, "the step at the requeue time")
        assert waited > 8
    assert states()[CANARY[0]] == ("Started", "Succeeded")


def test_beat_alone_takes_a_run_to_its_approval_gate(
    broker_url: str, database_url: str, live_hub: DemoHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    # every step a step queues is lost (as when the worker holding it dies): only beat's task steps the run
    monkeypatch.setattr(tasks, "schedule_run_reconcile", lambda run_id, due, now: None)
    hub = synced_demo_hub_row(live_hub)
    editor: User = placement_role(hub, username="editor")
    app.control.purge()
    # both canary clusters at once: one 15 s poll takes the stage to its approval
    stages = [{**STRATEGY_SPEC["stages"][0], "maxConcurrency": 2}, *STRATEGY_SPEC["stages"][1:]]
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        kind = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
        service.create_placement(
            kind=kind, hub=hub, namespace="", name="checkout", spec=crp_spec(), actor=editor
        )
        rollouts.create_strategy(hub=hub, name="canary-then-prod", spec={"stages": stages}, actor=editor)
        spec = {"placementName": "checkout", "stagedRolloutStrategyName": "canary-then-prod", "state": "Run"}
        run = rollouts.create_run(hub=hub, name="checkout-1", spec=spec, actor=editor)

        def at_the_gate() -> bool:
            tasks.reconcile_due_runs.delay()  # as beat sends it every 2 s
            return ApprovalRequest.objects.filter(run=run).exists()

        wait_for(at_the_gate, 60, "the approval gate", every=2.0)
    request = ApprovalRequest.objects.get(run=run)
    assert (request.stage_name, request.state) == ("canary", ApprovalRequest.State.PENDING)
    done = ("Started", "Succeeded")
    assert cluster_states(StagedUpdateRun.objects.get(pk=run.pk), "canary") == {
        CANARY[0]: done,
        CANARY[1]: done,
    }
