"""Staged update run Stop: in-flight clusters finish, nothing new starts, Run resumes."""

from __future__ import annotations

from datetime import timedelta

from tests.scheduler.rollout.staged_run_builders import Hub, condition, member, stage, summary

MEMBERS = [member("prod-1", ring="prod"), member("prod-2", ring="prod")]


def running_hub() -> Hub:
    hub = Hub(MEMBERS, [stage("prod", "prod")])
    hub.reconcile()  # prod-1 in flight
    hub.advance(seconds=15)
    hub.set_state("Stop")
    return hub


def test_stop_waits_for_clusters_in_flight() -> None:
    hub = running_hub()

    step = hub.reconcile()

    assert condition(step.status, "Progressing") == {
        "type": "Progressing",
        "status": "Unknown",
        "observedGeneration": 2,
        "reason": "UpdateRunStopping",
        "message": "The update run is the process of stopping, waiting for all the updating clusters to "
        "finish updating before completing the stop process",
        "lastTransitionTime": "2025-03-01T09:00:15Z",
    }
    assert summary(hub.stage_status("prod"), "Progressing") == ("Unknown", "StageUpdatingStopping")
    assert step.binding_updates == ()
    assert step.requeue_after == timedelta(seconds=15)


def test_stop_completes_once_in_flight_clusters_are_done_and_run_resumes() -> None:
    hub = running_hub()
    hub.reconcile()
    hub.report("prod-1")
    hub.advance(seconds=15)

    stopped = hub.reconcile()

    assert summary(hub.cluster_status("prod", "prod-1"), "Succeeded") == ("True", "ClusterUpdatingSucceeded")
    assert condition(stopped.status, "Progressing")["message"] == "The update run has been stopped"
    assert summary(stopped.status, "Progressing") == ("False", "UpdateRunStopped")
    assert condition(hub.stage_status("prod"), "Progressing")["message"] == (
        "All the updating clusters have finished updating, the stage is now stopped, waiting to be resumed"
    )
    assert summary(hub.stage_status("prod"), "Progressing") == ("False", "StageUpdatingStopped")
    assert (stopped.binding_updates, stopped.requeue_after) == ((), None)

    hub.set_state("Run")
    resumed = hub.reconcile()

    assert [u.name for u in resumed.binding_updates] == ["web-prod-2"]
    assert summary(resumed.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert summary(hub.stage_status("prod"), "Progressing") == ("True", "StageUpdatingStarted")


def test_stopping_before_a_stage_started_stops_at_once() -> None:
    hub = Hub(MEMBERS, [stage("prod", "prod")], state="Initialize")
    hub.reconcile()
    hub.set_state("Stop")

    step = hub.reconcile()

    assert summary(step.status, "Progressing") == ("False", "UpdateRunStopped")
    assert summary(hub.stage_status("prod"), "Progressing") == ("False", "StageUpdatingStopped")
    assert (step.binding_updates, step.requeue_after) == ((), None)


def test_unsupported_state_fails_the_run() -> None:
    hub = Hub(MEMBERS, [stage("prod", "prod")], state="Pause")

    step = hub.reconcile()

    assert summary(step.status, "Succeeded") == ("False", "UpdateRunFailed")
    assert condition(step.status, "Succeeded")["message"] == (
        "unexpected behavior which cannot be handled by the controller: found unsupported updateRun state: "
        "Pause"
    )
