"""The demo hub executes ClusterStagedUpdateRuns with the staged run engine, like a KubeFleet hub.

Objects go in through the official client; the frozen clock is advanced by hand and `reconcile()` lets
the simulated controllers act, so every condition upstream sets on a run can be checked at a known time.
"""

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from demohub import DemoHub, fleetsim
from demohub.fleetsim import APPLY_FAILS_LABEL, LATEST_RESOURCE_INDEX_ANNOTATION, policy_snapshot
from placement.scheduler.rollout.approval import approved_condition
from placement.scheduler.rollout.execution import (
    PolicySnapshot,
    UpdateRunInputs,
    UpdateRunStep,
    reconcile_update_run,
)
from tests.demohub.fleet import (
    NOW,
    FleetClient,
    binding,
    condition,
    frozen_hub,
    member,
    placement,
    stamp,
    summary,
)

RUN, APPROVAL, BINDING = "ClusterStagedUpdateRun", "ClusterApprovalRequest", "ClusterResourceBinding"
SEEDED_RUN = "batch-jobs-rollout-1"


@pytest.fixture
def hub() -> Iterator[DemoHub]:
    with frozen_hub(clusters=24, seed=7, apply_seconds=2, available_seconds=3) as hub:
        yield hub


@pytest.fixture
def client(hub: DemoHub) -> FleetClient:
    return FleetClient(hub)


def _strategy(name: str, stages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": name},
        "spec": {"stages": stages},
    }


def _run(
    name: str, placement_name: str, strategy: str, state: str = "Run", index: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": RUN,
        "metadata": {"name": name},
        "spec": {
            "placementName": placement_name,
            "resourceSnapshotIndex": index,
            "stagedRolloutStrategyName": strategy,
            "state": state,
        },
    }


def _shop(client: FleetClient, *, state: str = "Run") -> None:
    """Canary (approval after) then main (2 at a time, 10 minutes' wait), one cluster to delete."""
    for name, tier in (
        ("m-canary", "canary"),
        ("m-main-1", "main"),
        ("m-main-2", "main"),
        ("m-gone", "main"),
    ):
        client.create(member(name, tier=tier))
    selected = ["m-canary", "m-main-1", "m-main-2"]
    client.create(placement("shop", selected, **{LATEST_RESOURCE_INDEX_ANNOTATION: "3"}))
    for cluster in selected:
        client.create(binding("shop", cluster, schedulingPolicySnapshotName="shop-1"))
    client.create(binding("shop", "m-gone", "Unscheduled", resourceSnapshotName="shop-2-snapshot"))
    client.create(
        _strategy(
            "canary-then-main",
            [
                {
                    "name": "canary",
                    "labelSelector": {"matchLabels": {"tier": "canary"}},
                    "afterStageTasks": [{"type": "Approval"}],
                },
                {
                    "name": "main",
                    "labelSelector": {"matchLabels": {"tier": "main"}},
                    "maxConcurrency": 2,
                    "afterStageTasks": [{"type": "TimedWait", "waitTime": "10m"}],
                },
            ],
        )
    )
    client.create(_run("shop-release", "shop", "canary-then-main", state=state))


def _stage(run: dict[str, Any], name: str) -> dict[str, Any]:
    stages = [*run["status"]["stagesStatus"], run["status"]["deletionStageStatus"]]
    return next(s for s in stages if s["stageName"] == name)


def _clusters(run: dict[str, Any], stage: str) -> dict[str, dict[str, tuple[str, str] | None]]:
    return {
        c["clusterName"]: {kind: summary(c, kind) for kind in ("Started", "Succeeded")}
        for c in _stage(run, stage)["clusters"]
    }


def _binding(client: FleetClient, cluster: str) -> dict[str, Any]:
    return client.get(BINDING, f"shop-{cluster}")


STARTED = ("True", "ClusterUpdatingStarted")
UPDATED = ("True", "ClusterUpdatingSucceeded")


def test_a_run_goes_through_its_stages_an_approval_a_timed_wait_and_the_delete_stage(
    hub: DemoHub, client: FleetClient
) -> None:
    _shop(client)

    hub.reconcile()  # t=0: initialised, the canary cluster is bound to the latest resource snapshot
    run = client.get(RUN, "shop-release")
    assert summary(run, "Initialized") == ("True", "UpdateRunInitializedSuccessfully")
    assert summary(run, "Progressing") == ("True", "UpdateRunProgressing")
    status = run["status"]
    assert (status["policySnapshotIndexUsed"], status["policyObservedClusterCount"]) == ("1", 3)
    assert status["resourceSnapshotIndexUsed"] == "3"
    assert [(s["stageName"], [c["clusterName"] for c in s["clusters"]]) for s in status["stagesStatus"]] == [
        ("canary", ["m-canary"]),
        ("main", ["m-main-1", "m-main-2"]),
    ]
    assert _clusters(run, "kubernetes-fleet.io/deleteStage") == {
        "m-gone": {"Started": None, "Succeeded": None}
    }
    assert _clusters(run, "canary") == {"m-canary": {"Started": STARTED, "Succeeded": None}}
    assert summary(_stage(run, "canary"), "Progressing") == ("True", "StageUpdatingStarted")
    canary = _binding(client, "m-canary")
    assert (canary["spec"]["state"], canary["spec"]["resourceSnapshotName"]) == ("Bound", "shop-3-snapshot")
    assert condition(canary, "RolloutStarted")["observedGeneration"] == canary["metadata"]["generation"] == 2
    assert summary(canary, "Applied") == ("False", "ApplyPending")
    assert _binding(client, "m-main-1")["spec"]["state"] == "Scheduled"

    hub.advance(5)
    hub.reconcile()  # t=5: canary available; the stage waits for its approval
    run = client.get(RUN, "shop-release")
    assert _clusters(run, "canary") == {"m-canary": {"Started": STARTED, "Succeeded": UPDATED}}
    assert summary(_stage(run, "canary"), "Progressing") == ("False", "StageUpdatingWaiting")
    task = _stage(run, "canary")["afterStageTaskStatus"][0]
    assert summary(task, "ApprovalRequestCreated") == ("True", "StageTaskApprovalRequestCreated")
    assert summary(run, "Progressing") == ("False", "UpdateRunWaiting")
    request = client.get(APPROVAL, "shop-release-after-canary")
    assert request["spec"] == {"parentStageRollout": "shop-release", "targetStage": "canary"}
    assert request["metadata"]["labels"]["kubernetes-fleet.io/taskType"] == "afterStage"

    client.patch_status(
        APPROVAL, "shop-release-after-canary", {"status": {"conditions": [approved_condition(1, NOW, "bob")]}}
    )
    hub.reconcile()  # accepted; the main stage starts both of its clusters at once (maxConcurrency 2)
    run = client.get(RUN, "shop-release")
    task = _stage(run, "canary")["afterStageTaskStatus"][0]
    assert summary(task, "ApprovalRequestApproved") == ("True", "StageTaskApprovalRequestApproved")
    assert summary(client.get(APPROVAL, "shop-release-after-canary"), "ApprovalAccepted") == (
        "True",
        "ApprovalRequestApprovalAccepted",
    )
    assert summary(_stage(run, "canary"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert _clusters(run, "main") == {
        "m-main-1": {"Started": STARTED, "Succeeded": None},
        "m-main-2": {"Started": STARTED, "Succeeded": None},
    }
    assert summary(run, "Progressing") == ("True", "UpdateRunProgressing")

    hub.advance(5)
    hub.reconcile()  # t=10: main is updated; its 10 minutes' wait starts now
    run = client.get(RUN, "shop-release")
    main = _stage(run, "main")
    assert summary(main, "Progressing") == ("False", "StageUpdatingWaiting")
    assert condition(main, "Progressing")["lastTransitionTime"] == stamp(10)
    assert summary(main["afterStageTaskStatus"][0], "WaitTimeElapsed") is None

    hub.advance(599)
    hub.reconcile()
    assert summary(_stage(client.get(RUN, "shop-release"), "main"), "Succeeded") is None

    hub.advance(1)
    hub.reconcile()  # t=610: the wait is over; the delete stage removes m-gone's binding; done
    run = client.get(RUN, "shop-release")
    main = _stage(run, "main")
    assert summary(main["afterStageTaskStatus"][0], "WaitTimeElapsed") == (
        "True",
        "AfterStageTaskWaitTimeElapsed",
    )
    assert summary(main, "Succeeded") == ("True", "StageUpdatingSucceeded")
    deletion = _stage(run, "kubernetes-fleet.io/deleteStage")
    assert _clusters(run, "kubernetes-fleet.io/deleteStage") == {
        "m-gone": {"Started": STARTED, "Succeeded": UPDATED}
    }
    assert summary(deletion, "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert summary(run, "Succeeded") == ("True", "UpdateRunSucceeded")
    assert summary(run, "Progressing") == ("False", "UpdateRunSucceeded")
    assert condition(run, "Succeeded")["lastTransitionTime"] == stamp(610)
    with pytest.raises(ApiException) as gone:
        _binding(client, "m-gone")
    assert gone.value.status == 404
    for cluster in ("m-canary", "m-main-1", "m-main-2"):
        assert summary(_binding(client, cluster), "Available") == ("True", "AllWorkAreAvailable")
    assert hub.reconcile() == []


def test_a_run_in_initialize_state_waits_until_it_is_set_to_run(hub: DemoHub, client: FleetClient) -> None:
    _shop(client, state="Initialize")
    hub.reconcile()
    run = client.get(RUN, "shop-release")
    assert summary(run, "Initialized") == ("True", "UpdateRunInitializedSuccessfully")
    assert summary(run, "Progressing") is None
    assert _binding(client, "m-canary")["spec"]["state"] == "Scheduled"

    client.patch(RUN, "shop-release", {"spec": {"state": "Run"}})
    hub.reconcile()

    run = client.get(RUN, "shop-release")
    assert run["metadata"]["generation"] == 2
    assert condition(run, "Initialized")["observedGeneration"] == 2
    assert _clusters(run, "canary") == {"m-canary": {"Started": STARTED, "Succeeded": None}}
    assert _binding(client, "m-canary")["spec"]["state"] == "Bound"


def test_a_cluster_that_fails_to_apply_makes_the_run_stuck(hub: DemoHub, client: FleetClient) -> None:
    _shop(client)
    client.patch("MemberCluster", "m-canary", {"metadata": {"labels": {APPLY_FAILS_LABEL: "true"}}})
    hub.reconcile()

    hub.advance(300)
    hub.reconcile()
    assert summary(client.get(RUN, "shop-release"), "Progressing") == ("True", "UpdateRunProgressing")
    hub.advance(1)
    hub.reconcile()

    run = client.get(RUN, "shop-release")
    assert summary(run, "Progressing") == ("False", "UpdateRunStuck")
    assert "m-canary" in condition(run, "Progressing")["message"]
    assert _clusters(run, "canary") == {"m-canary": {"Started": STARTED, "Succeeded": None}}
    assert summary(_binding(client, "m-canary"), "Applied") == ("False", "NotAllWorkHaveBeenApplied")


def test_the_seeded_run_goes_on_to_prod_after_its_approval_and_succeeds(
    hub: DemoHub, client: FleetClient
) -> None:
    client.patch_status(
        APPROVAL,
        f"{SEEDED_RUN}-after-staging",
        {"status": {"conditions": [approved_condition(1, NOW, "bob")]}},
    )
    hub.reconcile()
    for _ in range(3):  # prod updates one cluster at a time
        hub.advance(5)
        hub.reconcile()
    run = client.get(RUN, SEEDED_RUN)
    assert all(c == {"Started": STARTED, "Succeeded": UPDATED} for c in _clusters(run, "prod").values())
    assert summary(_stage(run, "prod"), "Progressing") == ("False", "StageUpdatingWaiting")
    assert summary(run, "Succeeded") is None

    hub.advance(3600)
    hub.reconcile()

    run = client.get(RUN, SEEDED_RUN)
    assert summary(_stage(run, "prod"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert summary(run, "Succeeded") == ("True", "UpdateRunSucceeded")
    bindings = client.list(BINDING, label_selector="kubernetes-fleet.io/parent-CRP=batch-jobs")["items"]
    assert {(b["spec"]["state"], b["spec"]["resourceSnapshotName"]) for b in bindings} == {
        ("Bound", "batch-jobs-1-snapshot")
    }


def test_a_pass_reconciles_a_run_when_its_inputs_change_or_its_requeue_is_due(
    hub: DemoHub, client: FleetClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    controllers = hub.controllers
    assert controllers is not None
    calls: list[str] = []

    def counted(inputs: UpdateRunInputs, now: datetime) -> UpdateRunStep:
        calls.append(inputs.run["metadata"]["name"])
        return reconcile_update_run(inputs, now)

    monkeypatch.setattr(fleetsim, "reconcile_update_run", counted)
    controllers.tick()  # first sight: reconciled; waiting on the approval, it asks to come back in 60 s
    controllers.tick()
    hub.advance(59)
    controllers.tick()
    assert calls == [SEEDED_RUN]

    hub.advance(1)
    controllers.tick()
    assert calls == [SEEDED_RUN] * 2

    client.patch_status(
        APPROVAL,
        f"{SEEDED_RUN}-after-staging",
        {"status": {"conditions": [approved_condition(1, NOW, "bob")]}},
    )
    assert "run batch-jobs-rollout-1: Stage staging succeeded" in controllers.tick()


def test_a_run_is_reconciled_again_on_its_generation_not_on_its_status_writes(
    hub: DemoHub, client: FleetClient
) -> None:
    """As upstream's controller, which watches runs with a generation-changed predicate: a write of the
    run's status (each reconcile of a waiting run may make one) does not set off the next reconcile; a
    change of its spec does."""
    controllers = hub.controllers
    assert controllers is not None
    run = client.get(RUN, SEEDED_RUN)
    before = controllers._view(run).fingerprint

    demo = {"type": "Demo", "status": "True", "reason": "Demo", "lastTransitionTime": stamp(0)}
    status = {**run["status"], "conditions": [*run["status"]["conditions"], demo]}
    client.patch_status(RUN, SEEDED_RUN, {"status": status})
    rewritten = client.get(RUN, SEEDED_RUN)
    assert rewritten["metadata"]["resourceVersion"] != run["metadata"]["resourceVersion"]
    assert controllers._view(rewritten).fingerprint == before

    client.patch(RUN, SEEDED_RUN, {"spec": {"state": "Stop"}})
    assert controllers._view(client.get(RUN, SEEDED_RUN)).fingerprint != before


def test_the_policy_snapshot_is_read_off_the_bindings() -> None:
    pick_n = {
        "metadata": {"name": "web"},
        "spec": {"policy": {"placementType": "PickN", "numberOfClusters": 4}},
    }
    named = [{"spec": {"schedulingPolicySnapshotName": f"web-{index}"}} for index in ("2", "10", "x")]

    assert policy_snapshot(pick_n, named) == PolicySnapshot("web-10", "10", True, 4)
    assert policy_snapshot({"metadata": {"name": "all"}, "spec": {}}, []) == PolicySnapshot(
        "all-0", "0", True, None
    )
    assert policy_snapshot(None, named) is None
