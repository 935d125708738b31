"""The periodic runner, in-process (no broker, as under `make run`): a staged run with an approval stage
reaches its approval gate with nobody viewing any page, and viewing its page changes nothing."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from fleetui import periodic
from fleetui.celery import app
from placement.models import ApprovalRequest, StagedUpdateRun
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    CANARY,
    checkout_fixture,
    cluster_states,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    its_time_comes,
    new_run,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


def run_periodic_once() -> str:
    out = io.StringIO()
    call_command("run_periodic", "--once", stdout=out)
    return out.getvalue()


def test_a_run_reaches_its_approval_gate_with_nobody_viewing_a_page(
    fleet_hub: DemoHub, hub_row, checkout, strategy, editor
) -> None:
    run = new_run(hub_row, editor, state="Run")  # the first step runs at once, in-process
    for _ in range(12):
        if ApprovalRequest.objects.filter(run=run).exists():
            break
        fleet_hub.advance(5)  # the hub applies the run's bindings and reports them available
        fleet_hub.reconcile()
        its_time_comes(run)
        assert "reconcile-due-runs" in run_periodic_once()
    request = ApprovalRequest.objects.get(run=run)
    assert (request.stage_name, request.state) == ("canary", ApprovalRequest.State.PENDING)
    run.refresh_from_db()
    done = ("Started", "Succeeded")
    assert cluster_states(run, "canary") == {CANARY[0]: done, CANARY[1]: done}
    assert run.requeue_at is not None and run.attempts == 0  # it waits for the approval, polling


def test_viewing_a_due_run_changes_nothing(
    client: Client, fleet_hub: DemoHub, hub_row, checkout, strategy, editor
) -> None:
    run = new_run(hub_row, editor, state="Run")
    fleet_hub.advance(5)
    fleet_hub.reconcile()
    its_time_comes(run)
    before = StagedUpdateRun.objects.filter(pk=run.pk).values().get()
    client.force_login(editor)
    for url in (
        reverse("rollouts:run-detail", args=[run.pk]),
        reverse("rollouts:run-list"),
        reverse("placement:placement-detail", args=[checkout.pk]),
        reverse("rollouts:rollout-section", args=[checkout.pk]),
        reverse("rollouts-api:run-detail", args=[run.pk]),
    ):
        assert client.get(url).status_code == 200, url
    assert StagedUpdateRun.objects.filter(pk=run.pk).values().get() == before
    run_periodic_once()  # the runner does step it
    assert StagedUpdateRun.objects.filter(pk=run.pk).values().get() != before


def test_every_beat_entry_runs_in_process(settings) -> None:
    found = periodic.entries(app)
    assert [entry.name for entry in found] == list(settings.CELERY_BEAT_SCHEDULE)
    runs = next(entry for entry in found if entry.name == "reconcile-due-runs")
    assert runs.schedule.run_every.total_seconds() <= 2  # due steps are taken within about 2 s


def test_with_a_broker_the_runner_leaves_it_to_celery_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    with pytest.raises(CommandError, match="celery beat"):
        run_periodic_once()
