"""Staged update run validation: drift after initialisation aborts the run with UpdateRunFailed."""

from __future__ import annotations

from typing import Any

import pytest

from placement.scheduler.rollout.execution import PolicySnapshot
from tests.scheduler.rollout.staged_run_builders import (
    SNAPSHOT,
    START,
    Hub,
    binding,
    condition,
    member,
    stage,
    stamp,
    summary,
)

ABORT = "cannot continue the updateRun"
MEMBERS = [member("canary-1", ring="canary"), member("prod-1", ring="prod"), member("prod-2", ring="prod")]


def running_hub(state: str = "Run") -> Hub:
    hub = Hub(
        MEMBERS, [stage("canary", "canary"), stage("prod", "prod")], state=state, observed_cluster_count=3
    )
    hub.reconcile()
    hub.advance(seconds=15)
    return hub


def _new_policy_index(hub: Hub) -> None:
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "1", True, 3)


def _new_cluster_count(hub: Hub) -> None:
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "0", True, 4)


def _new_apply_strategy(hub: Hub) -> None:
    hub.placement["spec"]["strategy"]["applyStrategy"] = {"whenToApply": "IfNotDrifted"}


def _placement_deleted(hub: Hub) -> None:
    hub.placement = None


def _cluster_joins_a_stage(hub: Hub) -> None:
    hub.members.append(member("prod-3", ring="prod"))
    hub.add_binding(binding("prod-3"))
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "0", True, 4)
    hub.run["status"]["policyObservedClusterCount"] = 4  # only the stage membership differs


def _cluster_changes_stage(hub: Hub) -> None:
    hub.members[2]["metadata"]["labels"]["ring"] = "canary"


def _cluster_unscheduled(hub: Hub) -> None:
    hub.binding_of("prod-2")["spec"]["state"] = "Unscheduled"
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "0", True, 2)
    hub.run["status"]["policyObservedClusterCount"] = 2


def _new_cluster_to_delete(hub: Hub) -> None:
    hub.add_binding(binding("gone-1", state="Unscheduled"))


DRIFTS = [
    (
        _new_policy_index,
        f"{ABORT}: the policy snapshot index used in the updateRun is outdated, latest: 1, recorded: 0",
    ),
    (
        _new_cluster_count,
        f"{ABORT}: the cluster count initialized in the updateRun is outdated, latest: 4, recorded: 3",
    ),
    (
        _new_apply_strategy,
        f"{ABORT}: failed to process the request due to a client error: the applyStrategy in the updateRun "
        'is outdated, latest: {"comparisonOption":"PartialComparison","type":"ClientSideApply","whenToApply":'
        '"IfNotDrifted","whenToTakeOver":"Always"}, recorded: {"comparisonOption":"PartialComparison","type":'
        '"ClientSideApply","whenToApply":"Always","whenToTakeOver":"Always"}',
    ),
    (
        _placement_deleted,
        f"{ABORT}: failed to initialize the updateRun: failed to process the request due to a client "
        "error: parent placement not found",
    ),
    (
        _cluster_joins_a_stage,
        f"{ABORT}: the number of clusters in index `1` stage has changed, new: 3, existing: 2",
    ),
    (
        _cluster_changes_stage,
        f"{ABORT}: the number of clusters in index `0` stage has changed, new: 2, existing: 1",
    ),
    (
        _cluster_unscheduled,
        f"{ABORT}: the number of clusters in index `1` stage has changed, new: 1, existing: 2",
    ),
    (
        _new_cluster_to_delete,
        f"{ABORT}: unexpected behavior which cannot be handled by the controller: the cluster `gone-1` to be "
        "deleted is not in the delete stage",
    ),
]


@pytest.mark.parametrize(("drift", "message"), DRIFTS, ids=[d.__name__.strip("_") for d, _ in DRIFTS])
@pytest.mark.parametrize("state", ["Run", "Initialize"])
def test_drift_aborts_the_run(drift: Any, message: str, state: str) -> None:
    hub = running_hub(state)
    drift(hub)

    step = hub.reconcile()

    failed_at = stamp(START.replace(second=15))
    assert [c for c in step.status["conditions"] if c["type"] != "Initialized"] == [
        {
            "type": "Progressing",
            "status": "False",
            "observedGeneration": 1,
            "reason": "UpdateRunFailed",
            "message": "The stages are aborted due to a non-recoverable error",
            "lastTransitionTime": failed_at,
        },
        {
            "type": "Succeeded",
            "status": "False",
            "observedGeneration": 1,
            "reason": "UpdateRunFailed",
            "message": message,
            "lastTransitionTime": failed_at,
        },
    ]
    assert (step.binding_updates, step.requeue_after) == ((), None)


def test_a_binding_changed_by_someone_else_fails_its_cluster_and_the_run() -> None:
    hub = running_hub()
    hub.binding_of("canary-1")["spec"]["resourceSnapshotName"] = "web-4-snapshot"  # a concurrent run

    step = hub.reconcile()

    cluster_message = (
        "failed to process the request due to a client error: the binding of the updating cluster "
        "`canary-1` in the stage `canary` is not up-to-date with the desired status, please check the status "
        "of binding `web-canary-1` and see if there is a concurrent updateRun referencing the same placement "
        "and updating the same cluster"
    )
    assert condition(hub.cluster_status("canary", "canary-1"), "Succeeded") == {
        "type": "Succeeded",
        "status": "False",
        "observedGeneration": 1,
        "reason": "ClusterUpdatingFailed",
        "message": cluster_message,
        "lastTransitionTime": stamp(hub.now),
    }
    run_message = f"{ABORT}: {cluster_message}"
    assert condition(hub.stage_status("canary"), "Succeeded")["message"] == run_message
    assert condition(step.status, "Succeeded")["message"] == run_message
    assert step.requeue_after is None

    hub.advance(minutes=1)
    after = hub.reconcile()
    assert (after.status, after.requeue_after, after.events) == (step.status, None, ())


def test_a_finished_run_does_nothing_more() -> None:
    hub = running_hub()
    _placement_deleted(hub)
    failed = hub.reconcile()
    hub.placement = {"metadata": {"name": "web"}, "spec": {"strategy": {"type": "External"}}}
    hub.set_state("Run")

    step = hub.reconcile()

    assert summary(step.status, "Succeeded") == ("False", "UpdateRunFailed")
    assert step.status["conditions"] == failed.status["conditions"]
    assert (step.binding_updates, step.requeue_after) == ((), None)
