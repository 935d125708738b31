"""Staged update run initialisation through `reconcile_update_run`: status fields, failures, Initialize."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from placement.scheduler.rollout.execution import PolicySnapshot
from tests.scheduler.rollout.staged_run_builders import (
    SNAPSHOT,
    START,
    Hub,
    binding,
    member,
    stage,
    stamp,
    summary,
)

ABORT = "cannot continue the updateRun: failed to initialize the updateRun"
USER = f"{ABORT}: failed to process the request due to a client error"
UNEXPECTED = f"{ABORT}: unexpected behavior which cannot be handled by the controller"


def members() -> list[dict[str, Any]]:
    return [
        member("prod-1", ring="prod", order="2"),
        member("canary-1", ring="canary", order="1"),
        member("prod-2", ring="prod", order="1"),
    ]


def rings(**prod: Any) -> list[dict[str, Any]]:
    return [
        stage(
            "canary",
            "canary",
            afterStageTasks=[{"type": "TimedWait", "waitTime": "10m"}, {"type": "Approval"}],
        ),
        stage("prod", "prod", sortingLabelKey="order", beforeStageTasks=[{"type": "Approval"}], **prod),
    ]


def test_initialisation_records_the_plan_and_stops_in_initialize_state() -> None:
    hub = Hub(members(), rings(), state="Initialize", unscheduled=("old-2", "old-1"))
    hub.strategy["spec"]["stages"][0]["afterStageTasks"][1]["waitTime"] = "1h"  # an old CRD let this in

    step = hub.reconcile()

    assert step.requeue_after is None
    assert (step.binding_updates, step.approvals_to_create, step.bindings_to_delete) == ((), (), ())
    status = step.status
    assert status["conditions"] == [
        {
            "type": "Initialized",
            "status": "True",
            "observedGeneration": 1,
            "reason": "UpdateRunInitializedSuccessfully",
            "message": "ClusterStagedUpdateRun initialized successfully",
            "lastTransitionTime": stamp(START),
        }
    ]
    assert status["appliedStrategy"] == {
        "type": "ClientSideApply",
        "comparisonOption": "PartialComparison",
        "whenToApply": "Always",
        "whenToTakeOver": "Always",
    }
    assert (status["policySnapshotIndexUsed"], status["policyObservedClusterCount"]) == ("0", 3)
    assert status["resourceSnapshotIndexUsed"] == "3"  # "" resolves to the latest snapshot
    snapshot_tasks = status["stagedUpdateStrategySnapshot"]["stages"][0]["afterStageTasks"]
    assert snapshot_tasks == [{"type": "TimedWait", "waitTime": "10m"}, {"type": "Approval"}]
    assert status["stagesStatus"] == [
        {
            "stageName": "canary",
            "clusters": [{"clusterName": "canary-1"}],
            "afterStageTaskStatus": [
                {"type": "TimedWait"},
                {"type": "Approval", "approvalRequestName": "rel-1-after-canary"},
            ],
        },
        {
            "stageName": "prod",
            # sorting label ascending, not name order
            "clusters": [{"clusterName": "prod-2"}, {"clusterName": "prod-1"}],
            "beforeStageTaskStatus": [{"type": "Approval", "approvalRequestName": "rel-1-before-prod"}],
        },
    ]
    assert status["deletionStageStatus"] == {
        "stageName": "kubernetes-fleet.io/deleteStage",
        "clusters": [{"clusterName": "old-1"}, {"clusterName": "old-2"}],
    }
    assert step.events == ("Initialized 2 stage(s) for 3 cluster(s), 2 to delete",)


def test_an_initialized_run_waits_in_initialize_state_until_set_to_run() -> None:
    hub = Hub(members(), rings(), state="Initialize")
    first = hub.reconcile()
    hub.advance(minutes=5)

    idle = hub.reconcile()
    assert idle.status == first.status
    assert (idle.requeue_after, idle.binding_updates, idle.events) == (None, (), ())

    hub.set_state("Run")
    started = hub.reconcile()
    initialized = started.status["conditions"][0]
    # every condition now observes generation 2; the Initialized transition time stays
    assert (initialized["observedGeneration"], initialized["lastTransitionTime"]) == (2, stamp(START))
    assert summary(started.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert [u.name for u in started.binding_updates] == ["web-canary-1"]


def test_an_explicit_resource_snapshot_index_is_used_as_given() -> None:
    hub = Hub(members(), rings())
    hub.run["spec"]["resourceSnapshotIndex"] = "5"
    step = hub.reconcile()
    assert step.status["resourceSnapshotIndexUsed"] == "5"
    assert step.binding_updates[0].spec["resourceSnapshotName"] == "web-5-snapshot"


def test_pick_all_counts_the_selected_bindings_and_pick_n_keeps_its_count() -> None:
    pick_all = Hub(members(), rings(), state="Initialize")
    assert pick_all.reconcile().status["policyObservedClusterCount"] == 3
    pick_n = Hub(members(), rings(), state="Initialize", observed_cluster_count=3)
    assert pick_n.reconcile().status["policyObservedClusterCount"] == 3


def _no_placement(hub: Hub) -> None:
    hub.placement = None


def _rolling_placement(hub: Hub) -> None:
    hub.placement["spec"]["strategy"] = {"type": "RollingUpdate"}


def _no_policy_snapshot(hub: Hub) -> None:
    hub.policy_snapshot = None


def _no_policy_index(hub: Hub) -> None:
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "", True, None)


def _not_scheduled(hub: Hub) -> None:
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "0", False, None)


def _no_bindings(hub: Hub) -> None:
    hub.bindings.clear()


def _count_mismatch(hub: Hub) -> None:
    hub.policy_snapshot = PolicySnapshot(SNAPSHOT, "0", True, 4)


def _no_strategy(hub: Hub) -> None:
    hub.strategy = None


def _overlapping_stages(hub: Hub) -> None:
    hub.strategy["spec"]["stages"] = [stage("all"), stage("prod", "prod")]


def _missing_sorting_label(hub: Hub) -> None:
    hub.strategy["spec"]["stages"][0]["sortingLabelKey"] = "zone"


def _bad_sorting_label(hub: Hub) -> None:
    hub.members[2]["metadata"]["labels"]["order"] = "first"


def _unplaced_clusters(hub: Hub) -> None:
    hub.strategy["spec"]["stages"] = [stage("canary", "canary")]


def _duplicate_after_stage_tasks(hub: Hub) -> None:
    hub.strategy["spec"]["stages"][0]["afterStageTasks"] = [{"type": "Approval"}, {"type": "Approval"}]


def _bad_resource_index(hub: Hub) -> None:
    hub.run["spec"]["resourceSnapshotIndex"] = "latest"


FAILURES = [
    (_no_placement, f"{USER}: parent placement not found"),
    (
        _rolling_placement,
        f"{USER}: parent placement does not have an external rollout strategy, current strategy: "
        "RollingUpdate",
    ),
    (_no_policy_snapshot, f"{ABORT}: no latest policy snapshot associated with the placement: `/web`"),
    (_no_policy_index, f"{UNEXPECTED}: policy snapshot `/web-0` does not have a policy index label"),
    (_not_scheduled, f"{ABORT}: policy snapshot `web-0` not fully scheduled yet"),
    (
        _no_bindings,
        f"{ABORT}: no scheduled or to-be-deleted bindings found for the latest policy snapshot /web-0",
    ),
    (
        _count_mismatch,
        f"{UNEXPECTED}: the number of selected bindings 3 is not equal to the observed cluster count 4",
    ),
    (_no_strategy, f"{USER}: referenced updateStrategy not found: `/rings`"),
    (_overlapping_stages, f"{USER}: cluster `prod-1` appears in more than one stages"),
    (
        _missing_sorting_label,
        f'{USER}: the sorting label `zone:` on cluster `canary-1` is not valid: strconv.Atoi: parsing "": '
        "invalid syntax",
    ),
    (
        _bad_sorting_label,
        f"{USER}: the sorting label `order:first` on cluster `prod-2` is not valid: strconv.Atoi: parsing "
        '"first": invalid syntax',
    ),
    (
        _unplaced_clusters,
        f"{USER}: some clusters are not placed in any stage, total 2, showing up to 10: prod-1, prod-2",
    ),
    (
        _duplicate_after_stage_tasks,
        f"{USER}: the after stage tasks are invalid, updateStrategy: `/rings`, stage: canary, err: "
        "afterStageTasks cannot have two tasks of the same type: Approval",
    ),
    (
        _bad_resource_index,
        f"{USER}: invalid resource snapshot index `latest` provided, expected an integer >= 0",
    ),
]


@pytest.mark.parametrize(("breaks", "message"), FAILURES, ids=[f.__name__.strip("_") for f, _ in FAILURES])
def test_initialisation_failures_mark_the_run_dead(breaks: Any, message: str) -> None:
    hub = Hub(members(), rings())
    breaks(hub)

    step = hub.reconcile()

    assert step.status["conditions"] == [
        {
            "type": "Initialized",
            "status": "False",
            "observedGeneration": 1,
            "reason": "UpdateRunInitializedFailed",
            "message": message,
            "lastTransitionTime": stamp(START),
        }
    ]
    assert (step.requeue_after, step.binding_updates, step.approvals_to_create) == (None, (), ())


def test_a_dead_run_is_never_retried() -> None:
    hub = Hub(members(), rings())
    hub.placement, placement = None, hub.placement
    dead = hub.reconcile()
    hub.placement = placement
    hub.advance(hours=1)
    hub.set_state("Run")  # even a new generation does not revive it

    again = hub.reconcile()

    assert summary(again.status, "Initialized") == ("False", "UpdateRunInitializedFailed")
    assert again.status["conditions"] == dead.status["conditions"]
    assert (again.requeue_after, again.binding_updates, again.events) == (None, (), ())


def test_a_failed_initialisation_keeps_what_it_recorded_before_failing() -> None:
    hub = Hub(members(), rings())
    _not_scheduled(hub)
    status = hub.reconcile().status
    assert (status["policySnapshotIndexUsed"], status["policyObservedClusterCount"]) == ("0", -1)
    assert "appliedStrategy" in status
    assert "stagesStatus" not in status


def test_a_binding_of_an_older_policy_in_transit_retries_without_a_status_change() -> None:
    hub = Hub(members(), rings())
    hub.add_binding(binding("moving-1", state="Bound", policy="web-old"))

    step = hub.reconcile()

    assert step.status == {}
    assert step.requeue_after == timedelta(seconds=15)
    assert step.events and "transient state" in step.events[0]
