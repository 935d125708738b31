"""A failed step of a dashboard-owned run is retried by the runner with a doubling backoff, its error and
attempt count are on the run (page, API, `runs show`), and the run always keeps its next step due."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from demohub import DemoHub
from placement.models import StagedUpdateRun
from placement.rollouts import runs as rollouts
from placement.rollouts import tasks
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


def delay(run: StagedUpdateRun) -> timedelta:
    run.refresh_from_db()
    return run.requeue_at - timezone.now()


def test_a_failed_step_is_retried_with_backoff_and_shows_its_error(
    client: Client, fleet_hub: DemoHub, hub_row, checkout, strategy, editor
) -> None:
    run = new_run(hub_row, editor, state="Run")
    fleet_hub.reconcile()  # the hub syncs the binding, applies it and reports it available 5 s later
    fleet_hub.advance(5)
    fleet_hub.reconcile()

    its_time_comes(run)
    fleet_hub.fail_next(1, status=403)  # the step's first hub request is refused
    assert tasks.reconcile_due_runs() == [run.pk]
    assert rollouts.RETRY_FIRST - timedelta(seconds=1) < delay(run) <= rollouts.RETRY_FIRST
    assert run.attempts == 1 and run.last_error.startswith("hub demo: ")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started",), CANARY[1]: ()}  # nothing was kept

    client.force_login(editor)
    page = client.get(reverse("rollouts:run-detail", args=[run.pk])).content.decode()
    assert 'id="run-error"' in page and "failed 1 time in a row" in page
    body = client.get(reverse("rollouts-api:run-detail", args=[run.pk])).json()
    assert (body["attempts"], body["last_error"]) == (1, run.last_error)
    out = io.StringIO()
    call_command("runs", "show", run.name, stdout=out)
    assert f"Last error:   {run.last_error} (failed 1 time(s) in a row)" in out.getvalue()

    its_time_comes(run)
    fleet_hub.fail_next(1, status=403)
    tasks.reconcile_due_runs()
    assert 2 * rollouts.RETRY_FIRST - timedelta(seconds=1) < delay(run) <= 2 * rollouts.RETRY_FIRST
    assert run.attempts == 2

    its_time_comes(run)  # the hub answers again: the step goes through and the error is gone
    tasks.reconcile_due_runs()
    run.refresh_from_db()
    assert (run.attempts, run.last_error) == (0, "")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started", "Succeeded"), CANARY[1]: ("Started",)}
    page = client.get(reverse("rollouts:run-detail", args=[run.pk])).content.decode()
    assert 'id="run-error"' not in page


def test_the_backoff_doubles_up_to_its_cap() -> None:
    delays = [rollouts.retry_delay(attempts) for attempts in range(1, 10)]
    assert delays[:3] == [rollouts.RETRY_FIRST, 2 * rollouts.RETRY_FIRST, 4 * rollouts.RETRY_FIRST]
    assert delays[-1] == rollouts.RETRY_MAX and delays == sorted(delays)
