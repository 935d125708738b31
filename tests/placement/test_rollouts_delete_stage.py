"""The delete stage: a cluster the placement no longer selects (its binding Unscheduled) is removed
after every stage, binding row and hub object alike, and then the run succeeds."""

import pytest

from placement import service
from placement.models import ClusterResourceBinding
from placement.rollouts import runs as rollouts
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    Stepper,
    checkout_fixture,
    condition,
    crp_spec,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    stepped_by_hand_fixture,
)

pytestmark = pytest.mark.django_db

ALL_AT_ONCE = {"stages": [{"name": "all", "labelSelector": {}, "maxConcurrency": "100%"}]}


def hub_bindings(hub) -> dict[str, str]:
    """Target cluster -> state of the dashboard's bindings on the hub."""
    objects = [hub.store.get("ClusterResourceBinding", n) for n in hub.store.names("ClusterResourceBinding")]
    return {
        o["spec"]["targetCluster"]: o["spec"]["state"]
        for o in objects
        if o["metadata"]["labels"].get("kubernetes-fleet.io/parent-CRP") == "checkout"
    }


def test_a_cluster_no_longer_selected_is_deleted_after_the_stages(
    fleet_hub, hub_row, checkout, editor, stepped_by_hand
) -> None:
    gone = PROD[2]
    service.apply_spec(checkout, crp_spec([*CANARY, *PROD[:2]]), actor=editor)
    binding = ClusterResourceBinding.objects.get(placement=checkout, spec__targetCluster=gone)
    assert binding.spec["state"] == "Unscheduled"
    rollouts.create_strategy(hub=hub_row, name="all-at-once", spec=ALL_AT_ONCE, actor=editor)
    spec = {"placementName": "checkout", "stagedRolloutStrategyName": "all-at-once", "state": "Run"}
    stepper = Stepper(fleet_hub, rollouts.create_run(hub=hub_row, name="shrink", spec=spec, actor=editor))
    stepper.step()
    run = stepper.run
    assert [c["clusterName"] for c in run.status["deletionStageStatus"]["clusters"]] == [gone]
    assert len(run.status["stagesStatus"][0]["clusters"]) == 4  # 100% of 4 at once
    stepper.advance(0)
    stepper.advance(5)
    assert stepper.step().events[-1] == "Stage all succeeded"
    step = stepper.step()
    assert step.events == (f"Deleting the binding of cluster {gone}",)
    assert step.bindings_to_delete == (binding.name,)
    assert stepper.step().events == ("The update run succeeded",)
    run = stepper.run
    assert condition(run.status, "Succeeded") == ("True", "UpdateRunSucceeded")
    deletion = run.status["deletionStageStatus"]
    assert condition(deletion, "Succeeded") == ("True", "StageUpdatingSucceeded")
    assert condition(deletion["clusters"][0], "Succeeded") == ("True", "ClusterUpdatingSucceeded")
    assert not ClusterResourceBinding.objects.filter(placement=checkout, spec__targetCluster=gone).exists()
    assert gone not in hub_bindings(fleet_hub)
    assert set(hub_bindings(fleet_hub).values()) == {"Bound"}
