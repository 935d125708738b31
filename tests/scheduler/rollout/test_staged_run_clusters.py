"""Staged update run cluster updates: binding writes, maxConcurrency, success, failures and stuck."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.scheduler.rollout.staged_run_builders import START, Hub, condition, member, stage, stamp, summary

FLEET = [member(f"m-{i}", ring="prod") for i in range(1, 5)]


def hub_with(max_concurrency: int | str | None = None, members: list[dict[str, Any]] | None = None) -> Hub:
    extra = {} if max_concurrency is None else {"maxConcurrency": max_concurrency}
    return Hub(members or FLEET, [stage("prod", "prod", **extra)])


def started(hub: Hub) -> list[str]:
    return [c["clusterName"] for c in hub.stage_status("prod")["clusters"] if condition(c, "Started")]


def test_starting_a_cluster_binds_it_to_the_run_snapshot() -> None:
    hub = hub_with()
    hub.binding_of("m-1")["status"] = {
        "conditions": [{"type": "Scheduled", "status": "True", "observedGeneration": 1, "reason": "Picked"}]
    }

    step = hub.reconcile()

    (update,) = step.binding_updates
    assert update.name == "web-m-1"
    assert update.spec == {
        "state": "Bound",
        "targetCluster": "m-1",
        "schedulingPolicySnapshotName": "web-0",
        "resourceSnapshotName": "web-3-snapshot",
        "applyStrategy": step.status["appliedStrategy"],
    }
    # the spec changed, so the API server bumps the generation the RolloutStarted condition observes
    assert update.generation == 2
    assert update.conditions == (
        {"type": "Scheduled", "status": "True", "observedGeneration": 1, "reason": "Picked"},
        {
            "type": "RolloutStarted",
            "status": "True",
            "observedGeneration": 2,
            "lastTransitionTime": stamp(START),
            "reason": "RolloutStarted",
            "message": "Detected the new changes on the resources and started the rollout process, "
            "resourceSnapshotIndex: 3, updateRun: rel-1",
        },
    )
    assert condition(hub.cluster_status("prod", "m-1"), "Started") == {
        "type": "Started",
        "status": "True",
        "observedGeneration": 1,
        "reason": "ClusterUpdatingStarted",
        "message": "Cluster update started",
        "lastTransitionTime": stamp(START),
    }
    prod = hub.stage_status("prod")
    assert summary(prod, "Progressing") == ("True", "StageUpdatingStarted")
    assert prod["startTime"] == stamp(START)
    assert step.requeue_after == timedelta(seconds=15)
    assert started(hub) == ["m-1"]


@pytest.mark.parametrize(
    ("max_concurrency", "in_flight"),
    [(None, 1), (2, 2), (10, 4), ("50%", 2), ("30%", 1), ("10%", 1), ("100%", 4)],
)
def test_max_concurrency_limits_clusters_in_flight(max_concurrency: int | str | None, in_flight: int) -> None:
    hub = hub_with(max_concurrency)
    hub.reconcile()
    assert started(hub) == [f"m-{i}" for i in range(1, in_flight + 1)]


def test_a_finished_cluster_frees_its_slot_in_the_same_reconcile() -> None:
    hub = hub_with(2)
    hub.reconcile()
    hub.advance(seconds=15)
    hub.report("m-2")

    step = hub.reconcile()

    assert summary(hub.cluster_status("prod", "m-2"), "Succeeded") == ("True", "ClusterUpdatingSucceeded")
    assert [u.name for u in step.binding_updates] == ["web-m-3"]
    assert started(hub) == ["m-1", "m-2", "m-3"]
    assert step.events == (
        "Cluster m-2 in stage prod is updated",
        "Started updating cluster m-3 in stage prod",
    )


def test_availability_only_counts_for_the_bindings_current_generation() -> None:
    hub = hub_with()
    hub.report("m-1")  # reported before the run bound it: generation 1
    hub.reconcile()
    hub.advance(seconds=15)
    assert hub.reconcile().requeue_after == timedelta(seconds=15)
    assert summary(hub.cluster_status("prod", "m-1"), "Succeeded") is None

    hub.report("m-1", "DiffReported")
    hub.reconcile()
    assert summary(hub.cluster_status("prod", "m-1"), "Succeeded") == ("True", "ClusterUpdatingSucceeded")


def test_a_failing_binding_is_retried_not_failed() -> None:
    hub = hub_with()
    hub.reconcile()
    hub.advance(seconds=15)
    hub.report("m-1", "Applied", "False", reason="ManifestApplyFailed")

    step = hub.reconcile()

    assert step.requeue_after == timedelta(seconds=15)
    assert step.events == ("the cluster updating encountered an error at stage `prod`, updateRun := `rel-1`",)
    assert summary(hub.cluster_status("prod", "m-1"), "Succeeded") is None
    assert summary(step.status, "Succeeded") is None
    assert summary(step.status, "Progressing") == ("True", "UpdateRunProgressing")


def test_an_already_bound_binding_only_gets_its_rollout_started_again() -> None:
    hub = hub_with()
    hub.reconcile()
    target = hub.binding_of("m-1")
    target["metadata"]["generation"] = 3  # the scheduler touched the spec; RolloutStarted is now stale
    del hub.run["status"]["stagesStatus"][0]["clusters"][0]["conditions"]
    del hub.run["status"]["stagesStatus"][0]["conditions"]

    step = hub.reconcile()

    (update,) = step.binding_updates
    assert update.spec == target["spec"]
    assert update.generation == 3
    assert update.conditions[-1]["observedGeneration"] == 3


def test_a_cluster_in_flight_for_more_than_five_minutes_makes_the_run_stuck() -> None:
    hub = hub_with(4)
    hub.reconcile()
    hub.advance(minutes=5)
    assert summary(hub.reconcile().status, "Progressing") == ("True", "UpdateRunProgressing")

    hub.advance(seconds=1)
    stuck = hub.reconcile()

    assert condition(stuck.status, "Progressing") == {
        "type": "Progressing",
        "status": "False",
        "observedGeneration": 1,
        "reason": "UpdateRunStuck",
        "message": "The updateRun is stuck waiting for m-1, m-2, m-3... cluster(s) in stage prod to finish "
        "updating, please check placement status for potential errors",
        "lastTransitionTime": stamp(START + timedelta(minutes=5, seconds=1)),
    }
    assert stuck.requeue_after == timedelta(seconds=15)

    for name in ("m-1", "m-2", "m-3"):
        hub.report(name)
    hub.advance(seconds=15)
    still = hub.reconcile()
    assert condition(still.status, "Progressing")["message"].startswith(
        "The updateRun is stuck waiting for m-4 "
    )

    hub.report("m-4")
    hub.advance(seconds=15)
    hub.reconcile()
    assert summary(hub.stage_status("prod"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert summary(hub.status, "Progressing") == ("True", "UpdateRunProgressing")
