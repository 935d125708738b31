"""A dashboard-owned run executed against the demo hub waits at its after-stage approval; the inbox
shows it, Approve asks the executor for a step, and that step accepts the approval and moves on."""

import pytest

from placement.models import ApprovalRequest
from placement.rollouts import approvals
from placement.rollouts import runs as rollouts
from placement.scheduler.timeutil import parse_time
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    CANARY,
    STAGING,
    Stepper,
    checkout_fixture,
    condition,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    role_holder,
    stage,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db


def test_the_executor_accepts_an_approval_given_in_the_inbox(
    fleet_hub,
    hub_row,
    checkout,
    strategy,
    editor,
    stepped_by_hand,
    monkeypatch,
    django_capture_on_commit_callbacks,
) -> None:
    run = new_run(hub_row, editor, state="Run")
    stepper = Stepper(fleet_hub, run)
    for _ in CANARY:  # one canary cluster at a time: start it, let the hub apply it, see it succeed
        stepper.step()
        for seconds in (0, 2, 3):
            stepper.advance(seconds)
    stepper.step()
    approver = role_holder(hub_row, STAGING, username="approver")  # the canary clusters are staging's
    [request] = approvals.pending_approvals(approver).filter(run=run)  # the hub's own run waits too
    [entry] = approvals.inbox_entries([request], approver)
    assert (request.name, request.owner, entry.task, entry.clusters, entry.can_approve) == (
        "checkout-1-after-canary",
        "dashboard",
        "after",
        tuple(CANARY),
        True,
    )
    task = stage(run, "canary")["afterStageTaskStatus"][0]
    assert entry.waiting_since == parse_time(task["conditions"][0]["lastTransitionTime"])
    assert approvals.pending_count(approver) == 2

    asked = []
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: asked.append(run.pk) or True)
    with django_capture_on_commit_callbacks(execute=True):
        result = approvals.approve(request, approver)
    assert (result.outcome, result.state, asked) == ("ok", "approved", [run.pk])
    assert approvals.pending_count(approver) == 1

    stepper.advance(1)
    assert stepper.step().events[0] == "Accepted the approval of checkout-1-after-canary"
    request.refresh_from_db()
    assert request.state == ApprovalRequest.State.ACCEPTED
    task = stage(run, "canary")["afterStageTaskStatus"][0]
    assert condition(task, "ApprovalRequestApproved") == ("True", "StageTaskApprovalRequestApproved")
    assert approvals.approve(request, approver).outcome == "no-op"
