"""A dashboard-owned staged update run executed against the demo hub (simulated apply: Applied 2 s and
Available 3 s after a binding changes) with the hub's frozen clock as `now`, through every stage, an
approval, a TimedWait and success, with the conditions upstream sets on run, stage, cluster and task."""

from datetime import timedelta

import pytest

from demohub import DemoHub
from placement.models import ApprovalRequest, Owner, PlacementEvent
from placement.rollouts import runs as rollouts
from placement.scheduler.rollout.approval import approved_condition
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    Stepper,
    checkout_fixture,
    cluster_states,
    condition,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stage,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db

UPDATING, WAITING = timedelta(seconds=15), timedelta(seconds=60)


def hub_binding(hub: DemoHub, cluster: str) -> dict:
    """The binding object the hub holds for `cluster` (written by the dashboard)."""
    found = [
        b
        for name in hub.store.names("ClusterResourceBinding")
        if (b := hub.store.get("ClusterResourceBinding", name))["spec"].get("targetCluster") == cluster
        and b["metadata"]["labels"].get("kubernetes-fleet.io/parent-CRP") == "checkout"
    ]
    assert len(found) == 1
    return found[0]


def update_cluster(stepper: Stepper) -> None:
    """The hub syncs the new binding at once, applies it (2 s) and reports it Available (3 s more)."""
    stepper.advance(0)
    stepper.advance(2)
    stepper.advance(3)


def approve(run, actor: str = "editor") -> ApprovalRequest:
    request = ApprovalRequest.objects.get(run=run)
    request.status = {"conditions": [approved_condition(request.generation, run.requeue_at, actor)]}
    request.state = ApprovalRequest.State.APPROVED
    request.save()
    return request


def test_a_run_goes_through_both_stages_an_approval_and_a_timed_wait_to_success(
    fleet_hub, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    run = new_run(hub_row, editor)
    stepper = Stepper(fleet_hub, run)

    # Initialize: stages computed, nothing started
    assert stepper.step().requeue_after is None
    assert condition(run.status, "Initialized") == ("True", "UpdateRunInitializedSuccessfully")
    assert condition(run.status, "Progressing") is None
    assert [s["stageName"] for s in run.status["stagesStatus"]] == ["canary", "prod"]
    assert list(cluster_states(run, "prod")) == PROD
    assert run.status["resourceSnapshotIndexUsed"] == "0"

    run = rollouts.set_run_state(run, "Run", editor)
    stepper.run = run
    assert run.generation == 2
    # maxConcurrency 1: one canary cluster at a time, in name order
    step = stepper.step()
    assert step.requeue_after == UPDATING
    assert condition(run.status, "Progressing") == ("True", "UpdateRunProgressing")
    assert condition(stage(run, "canary"), "Progressing") == ("True", "StageUpdatingStarted")
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started",), CANARY[1]: ()}
    binding = hub_binding(fleet_hub, CANARY[0])
    assert binding["spec"]["state"] == "Bound"
    assert binding["spec"]["resourceSnapshotName"] == "checkout-0-snapshot"
    started = next(c for c in binding["status"]["conditions"] if c["type"] == "RolloutStarted")
    assert (started["status"], started["observedGeneration"]) == ("True", binding["metadata"]["generation"])

    update_cluster(stepper)
    stepper.step()
    assert cluster_states(run, "canary") == {CANARY[0]: ("Started", "Succeeded"), CANARY[1]: ("Started",)}
    update_cluster(stepper)
    step = stepper.step()

    # every canary cluster is updated: the after-stage approval is requested, the run waits
    assert step.requeue_after == WAITING
    assert condition(stage(run, "canary"), "Progressing") == ("False", "StageUpdatingWaiting")
    assert condition(run.status, "Progressing") == ("False", "UpdateRunWaiting")
    task = stage(run, "canary")["afterStageTaskStatus"][0]
    assert condition(task, "ApprovalRequestCreated") == ("True", "StageTaskApprovalRequestCreated")
    request = ApprovalRequest.objects.get(run=run)
    assert (request.name, request.owner, request.state) == (
        "checkout-1-after-canary",
        Owner.DASHBOARD,
        "pending",
    )
    assert request.labels["kubernetes-fleet.io/taskType"] == "afterStage"
    stepper.advance(60)
    assert stepper.step().requeue_after == WAITING  # still waiting: nobody approved

    approve(run)
    stepper.step()
    request.refresh_from_db()
    assert request.state == ApprovalRequest.State.ACCEPTED
    assert condition(task := stage(run, "canary")["afterStageTaskStatus"][0], "ApprovalRequestApproved") == (
        "True",
        "StageTaskApprovalRequestApproved",
    )
    assert condition(stage(run, "canary"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    # maxConcurrency 2: two prod clusters at once
    stepper.step()
    assert cluster_states(run, "prod") == {PROD[0]: ("Started",), PROD[1]: ("Started",), PROD[2]: ()}
    update_cluster(stepper)
    stepper.step()
    assert cluster_states(run, "prod")[PROD[2]] == ("Started",)
    update_cluster(stepper)
    step = stepper.step()

    # the TimedWait counts from the stage's last cluster finishing
    finished_at = fleet_hub.clock()
    assert condition(stage(run, "prod"), "Progressing") == ("False", "StageUpdatingWaiting")
    assert step.requeue_after == WAITING
    stepper.advance(10 * 60 - 1)
    step = stepper.step()
    assert step.requeue_after == timedelta(seconds=1)
    assert condition(stage(run, "prod")["afterStageTaskStatus"][0], "WaitTimeElapsed") is None
    stepper.advance(1)
    assert stepper.step().requeue_after == timedelta(0)  # the stage is done: the delete stage starts now
    assert fleet_hub.clock() - finished_at == timedelta(minutes=10)
    assert condition(stage(run, "prod")["afterStageTaskStatus"][0], "WaitTimeElapsed") == (
        "True",
        "AfterStageTaskWaitTimeElapsed",
    )
    assert condition(stage(run, "prod"), "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert condition(run.status, "Succeeded") is None
    assert stepper.step().requeue_after is None  # nothing to delete: the run succeeded
    assert condition(run.status, "Succeeded") == ("True", "UpdateRunSucceeded")
    assert condition(run.status, "Progressing") == ("False", "UpdateRunSucceeded")
    assert run.requeue_at is None
    assert stepper.step().requeue_after is None  # a finished run does nothing more
    bound = {b.spec["targetCluster"]: b.spec.get("resourceSnapshotName") for b in checkout.bindings.all()}
    assert bound == dict.fromkeys([*CANARY, *PROD], "checkout-0-snapshot")
    messages = list(PlacementEvent.objects.filter(related=run.name).values_list("message", flat=True))
    assert "The update run succeeded" in messages
