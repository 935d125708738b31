"""Approving a dashboard-owned run's request: the condition is written to the row, the executor is asked
to accept it, and a second approval is a no-op. Admins of set canary, which holds the stage's clusters,
approve it."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

from inventory.models import AuditEntry
from placement.models import ApprovalRequest, Owner, StagedUpdateRun
from placement.rollouts import approvals
from placement.rollouts import runs as rollouts
from tests.factories import HubFactory
from tests.placement.runs_support import VIEW, cluster_set, role_holder, stage_status

pytestmark = pytest.mark.django_db

NAME = "web-rollout-before-canary"
CANARY = ["canary-1", "canary-2"]


@pytest.fixture
def request_row(db: None) -> ApprovalRequest:
    hub = HubFactory(name="prod-hub", serves_fleet=True)
    cluster_set(hub, "canary", CANARY)
    run = StagedUpdateRun.objects.create(
        hub=hub,
        owner=Owner.DASHBOARD,
        name="web-rollout",
        spec={"placementName": "web", "stagedRolloutStrategyName": "canary-first", "state": "Run"},
        status=stage_status("canary", CANARY, NAME, "beforeStageTaskStatus"),
    )
    return ApprovalRequest.objects.create(
        hub=hub,
        owner=Owner.DASHBOARD,
        run=run,
        name=NAME,
        generation=3,
        labels={"kubernetes-fleet.io/taskType": "beforeStage"},
        spec={"parentStageRollout": "web-rollout", "targetStage": "canary"},
    )


@pytest.fixture
def reconciles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runs the executor was asked to step (the executor itself is tested with the runs)."""
    asked: list[str] = []
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: asked.append(run.name) or True)
    return asked


@pytest.fixture
def approver(request_row: ApprovalRequest) -> User:
    return role_holder(request_row.hub, "canary", username="approver")


def approved(row: ApprovalRequest) -> dict[str, Any]:
    row.refresh_from_db()
    [condition] = row.status["conditions"]
    return condition


def test_the_condition_is_kubectls_at_the_rows_generation_and_the_run_is_stepped(
    request_row: ApprovalRequest,
    approver: User,
    reconciles: list[str],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        result = approvals.approve(request_row, approver)

    assert (result.outcome, result.state) == (AuditEntry.Outcome.OK, ApprovalRequest.State.APPROVED)
    condition = approved(request_row)
    assert {k: v for k, v in condition.items() if k != "lastTransitionTime"} == {
        "type": "Approved",
        "status": "True",
        "observedGeneration": 3,
        "reason": "ClusterApprovalRequestApproved",
        "message": "ClusterApprovalRequest has been approved",
    }
    assert request_row.state == ApprovalRequest.State.APPROVED
    assert reconciles == ["web-rollout"]
    entry = AuditEntry.objects.get(action=approvals.ACTION)
    assert (entry.outcome, entry.before, entry.after["conditions"]) == ("ok", {}, [condition])


def test_approving_an_approved_or_accepted_request_is_a_no_op(
    request_row: ApprovalRequest,
    approver: User,
    reconciles: list[str],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        approvals.approve(request_row, approver)
        again = approvals.approve(request_row, approver)

    assert again.outcome == AuditEntry.Outcome.NO_OP
    assert reconciles == ["web-rollout"]
    outcomes = AuditEntry.objects.order_by("pk").values_list("outcome", flat=True)
    assert list(outcomes) == ["ok", "no-op"]


def test_a_stale_approval_on_the_row_counts_as_pending(request_row: ApprovalRequest, approver: User) -> None:
    old = {
        "type": "Approved",
        "status": "True",
        "observedGeneration": 2,
        "reason": "r",
        "message": "m",
        "lastTransitionTime": "2026-11-20T10:00:00Z",
    }
    request_row.status = {"conditions": [old]}
    request_row.save()
    assert approvals.row_state(request_row) == ApprovalRequest.State.PENDING

    assert approvals.approve(request_row, approver).outcome == AuditEntry.Outcome.OK
    assert approved(request_row)["observedGeneration"] == 3
    assert approved(request_row)["lastTransitionTime"] == "2026-11-20T10:00:00Z"  # status did not flip


def test_a_view_only_user_changes_nothing(request_row: ApprovalRequest, reconciles: list[str]) -> None:
    with pytest.raises(PermissionDenied):
        approvals.approve(request_row, role_holder(request_row.hub, "canary", VIEW, username="viewer"))
    request_row.refresh_from_db()
    assert (request_row.status, request_row.state, reconciles) == ({}, "pending", [])
