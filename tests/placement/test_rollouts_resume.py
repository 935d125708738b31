"""A stuck dashboard-owned run (running, but with no step due) is resumed from its page or with
`runs resume NAME`: its step runs now, and the action is authorised and audited like the run's others."""

import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import AuditEntry
from placement.models import StagedUpdateRun
from placement.rollouts import runs as rollouts
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    CANARY,
    STAGING,
    VIEW,
    checkout_fixture,
    cluster_states,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    role_holder,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def stuck(fleet_hub: DemoHub, hub_row, checkout, strategy, editor) -> StagedUpdateRun:
    """A running run whose next step nobody holds (as a run stepped before failures kept it due was
    left when its step after an approval failed), and whose canary cluster has been applied since."""
    run = new_run(hub_row, editor, state="Run")
    fleet_hub.reconcile()  # the hub syncs the binding, applies it and reports it available 5 s later
    fleet_hub.advance(5)
    fleet_hub.reconcile()
    StagedUpdateRun.objects.filter(pk=run.pk).update(requeue_at=None)
    run.refresh_from_db()
    assert rollouts.needs_resume(run)
    return run


def moved(run: StagedUpdateRun) -> bool:
    run.refresh_from_db()
    return cluster_states(run, "canary")[CANARY[0]] == ("Started", "Succeeded")


def test_the_resume_button_steps_a_stuck_run(client: Client, stuck: StagedUpdateRun, editor) -> None:
    client.force_login(editor)
    page = client.get(reverse("rollouts:run-detail", args=[stuck.pk])).content.decode()
    assert 'id="run-resume"' in page
    response = client.post(reverse("rollouts:run-resume", args=[stuck.pk]))
    assert response.status_code == 302
    assert moved(stuck) and stuck.requeue_at is not None
    entry = AuditEntry.objects.get(action=rollouts.RESUME_ACTION)
    assert (entry.actor, entry.outcome, entry.target) == (editor, AuditEntry.Outcome.OK, stuck.name)
    page = client.get(reverse("rollouts:run-detail", args=[stuck.pk])).content.decode()
    assert 'id="run-resume"' not in page  # moving again


def test_viewers_see_no_button_and_are_refused(client: Client, stuck: StagedUpdateRun, hub_row) -> None:
    viewer = role_holder(hub_row, STAGING, VIEW, username="viewer")
    client.force_login(viewer)
    page = client.get(reverse("rollouts:run-detail", args=[stuck.pk])).content.decode()
    assert 'id="run-resume"' not in page
    assert client.post(reverse("rollouts:run-resume", args=[stuck.pk])).status_code == 403
    assert not moved(stuck)
    refused = AuditEntry.objects.get(action=rollouts.RESUME_ACTION)
    assert (refused.actor, refused.outcome) == (viewer, AuditEntry.Outcome.DENIED)


def test_runs_resume_steps_a_stuck_run(stuck: StagedUpdateRun) -> None:
    out = io.StringIO()
    call_command("runs", "resume", stuck.name, stdout=out)
    assert moved(stuck)
    assert AuditEntry.objects.get(action=rollouts.RESUME_ACTION).actor_name == "manage.py runs"
    assert "Next step:" in out.getvalue()
