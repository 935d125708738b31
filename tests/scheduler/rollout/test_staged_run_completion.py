"""Staged update run completion: empty stages are skipped, the delete stage runs last, the run succeeds."""

from __future__ import annotations

from datetime import timedelta

from tests.scheduler.rollout.staged_run_builders import (
    START,
    Hub,
    binding,
    condition,
    member,
    stage,
    stamp,
    summary,
)

MEMBERS = [member("canary-1", ring="canary"), member("prod-1", ring="prod")]


def test_an_empty_stage_is_skipped_and_the_run_moves_on_at_once() -> None:
    hub = Hub(MEMBERS, [stage("edge", "edge"), stage("canary", "canary"), stage("prod", "prod")])

    skipped = hub.reconcile()

    edge = hub.stage_status("edge")
    message = "Stage skipped because it has no clusters"
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in edge["conditions"]] == [
        ("Progressing", "False", "StageUpdatingSkippedNoClusters", message),
        ("Succeeded", "True", "StageUpdatingSkippedNoClusters", message),
    ]
    assert (edge["startTime"], edge["endTime"]) == (stamp(START), stamp(START))
    assert (skipped.requeue_after, skipped.binding_updates) == (timedelta(0), ())
    assert skipped.events == (
        "Initialized 3 stage(s) for 2 cluster(s), 0 to delete",
        "Stage edge skipped: it has no clusters",
    )

    assert [u.name for u in hub.reconcile().binding_updates] == ["web-canary-1"]


def test_the_delete_stage_removes_unscheduled_bindings_after_all_stages() -> None:
    hub = Hub(MEMBERS, [stage("canary", "canary"), stage("prod", "prod")], unscheduled=("old-1",))
    hub.reconcile()
    hub.report("canary-1")
    hub.reconcile()  # canary done
    hub.reconcile()  # prod-1 started
    hub.report("prod-1")
    last_stage = hub.reconcile()
    assert summary(hub.stage_status("prod"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert (last_stage.requeue_after, last_stage.bindings_to_delete) == (timedelta(0), ())
    hub.advance(seconds=1)

    deleting = hub.reconcile()

    assert deleting.bindings_to_delete == ("web-old-1",)
    assert deleting.requeue_after == timedelta(seconds=15)
    deletion = hub.stage_status("kubernetes-fleet.io/deleteStage")
    assert summary(deletion, "Progressing") == ("True", "StageUpdatingStarted")
    assert deletion["startTime"] == stamp(hub.now)
    assert summary(hub.cluster_status("kubernetes-fleet.io/deleteStage", "old-1"), "Started") == (
        "True",
        "ClusterUpdatingStarted",
    )
    hub.advance(seconds=15)

    done = hub.reconcile()

    assert summary(hub.cluster_status("kubernetes-fleet.io/deleteStage", "old-1"), "Succeeded") == (
        "True",
        "ClusterUpdatingSucceeded",
    )
    assert summary(hub.stage_status("kubernetes-fleet.io/deleteStage"), "Succeeded") == (
        "True",
        "StageUpdatingSucceeded",
    )
    finished_at = stamp(hub.now)
    assert [c for c in done.status["conditions"] if c["type"] != "Initialized"] == [
        {
            "type": "Progressing",
            "status": "False",
            "observedGeneration": 1,
            "reason": "UpdateRunSucceeded",
            "message": "All stages are completed",
            "lastTransitionTime": finished_at,
        },
        {
            "type": "Succeeded",
            "status": "True",
            "observedGeneration": 1,
            "reason": "UpdateRunSucceeded",
            "message": "All stages are completed successfully",
            "lastTransitionTime": finished_at,
        },
    ]
    assert (done.requeue_after, done.events) == (None, ("The update run succeeded",))


def test_the_delete_stage_waits_for_a_binding_that_is_still_being_deleted() -> None:
    hub = Hub([member("canary-1", ring="canary")], [stage("canary", "canary")], unscheduled=("old-1",))
    hub.reconcile()
    hub.report("canary-1")
    hub.reconcile()
    step = hub.reconcile()
    assert step.bindings_to_delete == ("web-old-1",)
    lingering = binding("old-1", state="Unscheduled")
    lingering["metadata"]["deletionTimestamp"] = stamp(hub.now)  # finalizers still running
    hub.add_binding(lingering)

    waiting = hub.reconcile()

    assert (waiting.bindings_to_delete, waiting.requeue_after) == ((), timedelta(seconds=15))
    assert summary(waiting.status, "Succeeded") is None


def test_a_deleted_cluster_whose_binding_was_not_deleted_aborts_the_run() -> None:
    hub = Hub([member("canary-1", ring="canary")], [stage("canary", "canary")], unscheduled=("old-1",))
    hub.reconcile()
    hub.report("canary-1")
    hub.reconcile()
    hub.reconcile()
    hub.add_binding(binding("old-1", state="Unscheduled"))  # the delete never happened

    failed = hub.reconcile()

    message = (
        "cannot continue the updateRun: unexpected behavior which cannot be handled by the controller: the "
        "cluster `old-1` in the deleting stage is marked as deleting but its corresponding binding is not "
        "deleting"
    )
    assert condition(failed.status, "Succeeded")["message"] == message
    assert summary(hub.stage_status("kubernetes-fleet.io/deleteStage"), "Succeeded") == (
        "False",
        "StageUpdatingFailed",
    )


def test_a_run_without_clusters_to_delete_succeeds_right_after_its_last_stage() -> None:
    hub = Hub([member("canary-1", ring="canary")], [stage("canary", "canary")])
    hub.reconcile()
    hub.report("canary-1")
    hub.reconcile()

    done = hub.reconcile()

    assert summary(done.status, "Succeeded") == ("True", "UpdateRunSucceeded")
    deletion = hub.stage_status("kubernetes-fleet.io/deleteStage")
    assert (deletion["clusters"], summary(deletion, "Succeeded")) == ([], ("True", "StageUpdatingSucceeded"))
    assert hub.reconcile().status == done.status
