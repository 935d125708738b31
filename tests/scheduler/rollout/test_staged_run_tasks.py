"""Staged update run stage tasks: before/after-stage approvals, TimedWait and the approval handshake."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.scheduler.rollout.staged_run_builders import START, Hub, condition, member, stage, stamp, summary

MEMBERS = [member("canary-1", ring="canary"), member("prod-1", ring="prod")]


def gated_hub() -> Hub:
    return Hub(
        MEMBERS, [stage("canary", "canary", beforeStageTasks=[{"type": "Approval"}]), stage("prod", "prod")]
    )


def after_hub(*tasks: dict[str, Any]) -> Hub:
    """A run whose canary stage has the given after-stage tasks and whose canary cluster is done."""
    hub = Hub(MEMBERS, [stage("canary", "canary", afterStageTasks=list(tasks)), stage("prod", "prod")])
    hub.reconcile()
    hub.report("canary-1")
    return hub


def test_a_before_stage_approval_creates_its_request_and_waits() -> None:
    hub = gated_hub()

    step = hub.reconcile()

    assert step.approvals_to_create == (
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterApprovalRequest",
            "metadata": {
                "name": "rel-1-before-canary",
                "labels": {
                    "kubernetes-fleet.io/targetUpdatingStage": "canary",
                    "kubernetes-fleet.io/targetUpdateRun": "rel-1",
                    "kubernetes-fleet.io/taskType": "beforeStage",
                    "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
                },
            },
            "spec": {"parentStageRollout": "rel-1", "targetStage": "canary"},
        },
    )
    assert step.binding_updates == ()
    assert step.requeue_after == timedelta(seconds=60)
    task = hub.stage_status("canary")["beforeStageTaskStatus"][0]
    assert summary(task, "ApprovalRequestCreated") == ("True", "StageTaskApprovalRequestCreated")
    assert condition(hub.stage_status("canary"), "Progressing") == {
        "type": "Progressing",
        "status": "False",
        "observedGeneration": 1,
        "reason": "StageUpdatingWaiting",
        "message": "Not all before-stage tasks are completed, waiting for approval",
        "lastTransitionTime": stamp(START),
    }
    assert condition(step.status, "Progressing") == {
        "type": "Progressing",
        "status": "False",
        "observedGeneration": 1,
        "reason": "UpdateRunWaiting",
        "message": "The updateRun is waiting for before-stage tasks in stage canary to complete",
        "lastTransitionTime": stamp(START),
    }


def test_waiting_keeps_its_transition_time_and_ignores_a_stale_approval() -> None:
    hub = gated_hub()
    hub.reconcile()
    hub.advance(minutes=1)
    hub.approve("rel-1-before-canary", generation=0)  # observed an older generation: ignored

    step = hub.reconcile()

    assert (step.approvals_to_create, step.approvals_to_accept, step.binding_updates) == ((), (), ())
    assert condition(step.status, "Progressing")["lastTransitionTime"] == stamp(START)
    assert step.requeue_after == timedelta(seconds=60)


def test_an_approval_is_accepted_and_the_stage_starts_in_the_same_reconcile() -> None:
    hub = gated_hub()
    hub.reconcile()
    hub.advance(minutes=2)
    hub.approve("rel-1-before-canary")

    step = hub.reconcile()

    (acceptance,) = step.approvals_to_accept
    assert acceptance.name == "rel-1-before-canary"
    assert [c["type"] for c in acceptance.status["conditions"]] == ["Approved", "ApprovalAccepted"]
    assert acceptance.status["conditions"][1] == {
        "type": "ApprovalAccepted",
        "status": "True",
        "observedGeneration": 1,
        "lastTransitionTime": stamp(START + timedelta(minutes=2)),
        "reason": "ApprovalRequestApprovalAccepted",
        "message": "The approval request has been approved and cannot be reverted",
    }
    task = hub.stage_status("canary")["beforeStageTaskStatus"][0]
    assert summary(task, "ApprovalRequestApproved") == ("True", "StageTaskApprovalRequestApproved")
    assert [u.name for u in step.binding_updates] == ["web-canary-1"]
    assert summary(step.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert summary(hub.stage_status("canary"), "Progressing") == ("True", "StageUpdatingStarted")

    hub.advance(seconds=15)
    again = hub.reconcile()
    assert again.approvals_to_accept == ()  # accepted once, remembered by the task


def test_an_accepted_approval_cannot_be_revoked() -> None:
    hub = gated_hub()
    hub.reconcile()
    hub.approve("rel-1-before-canary")
    hub.reconcile()
    request = hub.approvals["rel-1-before-canary"]
    request["status"]["conditions"][0]["status"] = "False"
    del hub.run["status"]["stagesStatus"][0]["beforeStageTaskStatus"][0]["conditions"][1]  # forget "approved"

    step = hub.reconcile()

    task = hub.stage_status("canary")["beforeStageTaskStatus"][0]
    assert summary(task, "ApprovalRequestApproved") == ("True", "StageTaskApprovalRequestApproved")
    assert step.approvals_to_accept == ()


def test_a_request_targeting_another_run_aborts_the_run() -> None:
    hub = gated_hub()
    hub.approvals["rel-1-before-canary"] = {
        "metadata": {"name": "rel-1-before-canary", "generation": 1},
        "spec": {"parentStageRollout": "rel-0", "targetStage": "canary"},
    }

    step = hub.reconcile()

    message = (
        "cannot continue the updateRun: unexpected behavior which cannot be handled by the controller: the "
        "approval request task `/rel-1-before-canary` is targeting update run `/rel-0` and stage `canary`, "
        "want target update run `/rel-1 and stage `canary`"
    )
    assert condition(step.status, "Succeeded") == {
        "type": "Succeeded",
        "status": "False",
        "observedGeneration": 1,
        "reason": "UpdateRunFailed",
        "message": message,
        "lastTransitionTime": stamp(START),
    }
    assert summary(step.status, "Progressing") == ("False", "UpdateRunFailed")
    canary = hub.stage_status("canary")
    assert condition(canary, "Succeeded")["message"] == message
    assert summary(canary, "Progressing") == ("False", "StageUpdatingFailed")
    assert canary["endTime"] == stamp(START)
    assert step.requeue_after is None


def test_timed_wait_counts_from_the_last_cluster_finishing_to_the_exact_second() -> None:
    hub = after_hub({"type": "TimedWait", "waitTime": "5m"})
    hub.advance(seconds=30)
    finished_at = hub.now

    first = hub.reconcile()
    assert first.requeue_after == timedelta(seconds=60)
    assert summary(first.status, "Progressing") == ("False", "UpdateRunWaiting")
    assert condition(first.status, "Progressing")["message"] == (
        "The updateRun is waiting for after-stage tasks in stage canary to complete"
    )
    assert condition(hub.stage_status("canary"), "Progressing")["lastTransitionTime"] == stamp(finished_at)

    hub.now = finished_at + timedelta(minutes=4, seconds=20)
    assert hub.reconcile().requeue_after == timedelta(seconds=40)
    hub.now = finished_at + timedelta(minutes=5) - timedelta(seconds=1)
    assert hub.reconcile().requeue_after == timedelta(seconds=1)
    assert summary(hub.stage_status("canary")["afterStageTaskStatus"][0], "WaitTimeElapsed") is None

    hub.now = finished_at + timedelta(minutes=5)
    done = hub.reconcile()

    canary = hub.stage_status("canary")
    assert condition(canary["afterStageTaskStatus"][0], "WaitTimeElapsed") == {
        "type": "WaitTimeElapsed",
        "status": "True",
        "observedGeneration": 1,
        "reason": "AfterStageTaskWaitTimeElapsed",
        "message": "Wait time elapsed",
        "lastTransitionTime": stamp(hub.now),
    }
    assert summary(canary, "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert canary["endTime"] == stamp(hub.now)
    assert done.requeue_after == timedelta(0)
    assert summary(done.status, "Progressing") == ("True", "UpdateRunProgressing")


def test_after_stage_approval_and_timed_wait_both_gate_the_next_stage() -> None:
    hub = after_hub({"type": "Approval"}, {"type": "TimedWait", "waitTime": "90s"})
    hub.advance(seconds=15)
    finished_at = hub.now

    first = hub.reconcile()
    assert [r["metadata"]["name"] for r in first.approvals_to_create] == ["rel-1-after-canary"]
    assert first.approvals_to_create[0]["metadata"]["labels"]["kubernetes-fleet.io/taskType"] == "afterStage"
    assert first.requeue_after == timedelta(seconds=60)

    hub.approve("rel-1-after-canary")
    hub.advance(seconds=60)
    approved = hub.reconcile()
    assert [a.name for a in approved.approvals_to_accept] == ["rel-1-after-canary"]
    assert approved.requeue_after == timedelta(seconds=30)  # only the TimedWait is left
    assert summary(hub.stage_status("canary"), "Succeeded") is None

    hub.now = finished_at + timedelta(seconds=90)
    hub.reconcile()
    assert summary(hub.stage_status("canary"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    hub.reconcile()
    assert [u.name for u in hub.steps[-1].binding_updates] == ["web-prod-1"]
