"""The sync mirrors KubeFleet rollout objects (strategies, runs, approval requests) with their links."""

import pytest
from kubernetes.client import CustomObjectsApi

from demohub import DemoHub
from inventory.models import Hub, SyncRun
from inventory.sync import sync_hub
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun, StagedUpdateStrategy
from tests.factories import DemoHubRowFactory

pytestmark = pytest.mark.django_db

GROUP, VERSION = "placement.kubernetes-fleet.io", "v1beta1"
REQUEST = "batch-jobs-rollout-1-after-staging"


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return DemoHubRowFactory(name="demo", server_url=demo_hub.url)


def test_rollout_objects_are_mirrored_and_linked(demo_hub: DemoHub, hub: Hub) -> None:
    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    assert run.kinds["ClusterApprovalRequest"]["listed"] == demo_hub.seeded["ClusterApprovalRequest"]
    strategy = StagedUpdateStrategy.objects.get(hub=hub, name="staging-then-prod")
    assert [s["name"] for s in strategy.spec["stages"]] == ["staging", "prod"]
    update_run = StagedUpdateRun.objects.get(hub=hub, name="batch-jobs-rollout-1")
    assert update_run.owner == Owner.HUB and update_run.read_only
    assert update_run.placement == Placement.objects.get(hub=hub, name="batch-jobs")
    assert update_run.strategy_name == "staging-then-prod"
    request = ApprovalRequest.objects.get(hub=hub, name=REQUEST)
    assert request.run == update_run
    assert (request.stage_name, request.task_type) == ("staging", "afterStage")
    assert request.state == ApprovalRequest.State.PENDING


def test_an_approval_on_the_hub_changes_the_mirrored_state(
    demo_hub: DemoHub, hub: Hub, custom_objects: CustomObjectsApi
) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)
    current = custom_objects.get_cluster_custom_object(GROUP, VERSION, "clusterapprovalrequests", REQUEST)
    generation = current["metadata"]["generation"]
    approved = {
        "type": "Approved",
        "status": "True",
        "reason": "ClusterApprovalRequestApproved",
        "message": "approved in a test",
        "lastTransitionTime": "2026-11-22T00:00:00Z",
        "observedGeneration": generation,
    }
    custom_objects.patch_cluster_custom_object_status(
        GROUP, VERSION, "clusterapprovalrequests", REQUEST, {"status": {"conditions": [approved]}}
    )

    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    request = ApprovalRequest.objects.get(hub=hub, name=REQUEST)
    assert request.generation == generation
    assert request.state in {ApprovalRequest.State.APPROVED, ApprovalRequest.State.ACCEPTED}


def test_a_hub_object_named_like_a_dashboard_owned_one_is_not_mirrored(demo_hub: DemoHub, hub: Hub) -> None:
    mine = StagedUpdateRun.objects.create(
        hub=hub, owner=Owner.DASHBOARD, name="batch-jobs-rollout-1", spec={"placementName": "elsewhere"}
    )

    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    assert run.state == SyncRun.State.SUCCEEDED
    assert list(StagedUpdateRun.objects.filter(hub=hub)) == [mine]
    mine.refresh_from_db()
    assert mine.owner == Owner.DASHBOARD and mine.spec == {"placementName": "elsewhere"}
    # its approval request is still mirrored, with no hub-owned run to belong to
    assert ApprovalRequest.objects.get(hub=hub, name=REQUEST).run is None
