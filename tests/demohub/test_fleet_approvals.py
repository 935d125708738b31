"""The demo hub accepts approvals as a KubeFleet hub does: once, and only at the request's generation."""

from collections.abc import Iterator

import pytest
from kubernetes.watch import Watch

from demohub import DemoHub
from placement.scheduler.rollout.approval import approved_condition
from tests.demohub.fleet import NOW, TIMEOUT, FleetClient, condition, frozen_hub, stamp, summary

APPROVAL = "ClusterApprovalRequest"
RUN = "batch-jobs-rollout-1"
REQUEST = f"{RUN}-after-staging"  # seeded: the run waits on it


@pytest.fixture
def hub() -> Iterator[DemoHub]:
    with frozen_hub(clusters=24, seed=7) as hub:
        yield hub


@pytest.fixture
def client(hub: DemoHub) -> FleetClient:
    return FleetClient(hub)


def _approve(client: FleetClient, name: str, generation: int) -> dict:
    return client.patch_status(
        APPROVAL, name, {"status": {"conditions": [approved_condition(generation, NOW, "alice")]}}
    )


def _staging_task(client: FleetClient) -> dict:
    staging = client.get("ClusterStagedUpdateRun", RUN)["status"]["stagesStatus"][0]
    return staging["afterStageTaskStatus"][0]


def _request_events(client: FleetClient, since: str) -> list[dict]:
    stream = Watch().stream(
        client.api.list_cluster_custom_object,
        "placement.kubernetes-fleet.io",
        "v1beta1",
        "clusterapprovalrequests",
        resource_version=since,
        timeout_seconds=1,
        _request_timeout=TIMEOUT,
    )
    return list(stream)


def test_the_seeded_run_waits_on_its_pending_request(hub: DemoHub, client: FleetClient) -> None:
    assert hub.reconcile() == []  # seeded exactly as the controller left it
    assert "status" not in client.get(APPROVAL, REQUEST)
    assert summary(_staging_task(client), "ApprovalRequestCreated") == (
        "True",
        "StageTaskApprovalRequestCreated",
    )
    assert summary(_staging_task(client), "ApprovalRequestApproved") is None


def test_an_approval_is_accepted_exactly_once(hub: DemoHub, client: FleetClient) -> None:
    since = client.get(APPROVAL, REQUEST)["metadata"]["resourceVersion"]
    approved = _approve(client, REQUEST, generation=1)
    assert condition(approved, "ApprovalAccepted") is None

    hub.reconcile()
    hub.advance(120)
    hub.reconcile()

    accepted = client.get(APPROVAL, REQUEST)
    assert summary(accepted, "ApprovalAccepted") == ("True", "ApprovalRequestApprovalAccepted")
    assert condition(accepted, "ApprovalAccepted")["observedGeneration"] == 1
    assert condition(accepted, "ApprovalAccepted")["lastTransitionTime"] == stamp(0)
    assert summary(_staging_task(client), "ApprovalRequestApproved") == (
        "True",
        "StageTaskApprovalRequestApproved",
    )
    events = _request_events(client, since)
    assert [(e["type"], [c["type"] for c in e["object"]["status"]["conditions"]]) for e in events] == [
        ("MODIFIED", ["Approved"]),
        ("MODIFIED", ["Approved", "ApprovalAccepted"]),
    ]


def test_an_approval_for_an_older_generation_is_ignored(hub: DemoHub, client: FleetClient) -> None:
    edited = client.patch(APPROVAL, REQUEST, {"spec": {"note": "edited after it was created"}})
    assert edited["metadata"]["generation"] == 2
    stale = _approve(client, REQUEST, generation=1)

    hub.advance(120)
    hub.reconcile()

    assert (
        client.get(APPROVAL, REQUEST)["metadata"]["resourceVersion"] == stale["metadata"]["resourceVersion"]
    )
    assert summary(_staging_task(client), "ApprovalRequestApproved") is None
    run = client.get("ClusterStagedUpdateRun", RUN)
    assert summary(run, "Progressing") == ("False", "UpdateRunWaiting")

    _approve(client, REQUEST, generation=2)
    hub.reconcile()

    assert summary(client.get(APPROVAL, REQUEST), "ApprovalAccepted") == (
        "True",
        "ApprovalRequestApprovalAccepted",
    )
    assert condition(client.get(APPROVAL, REQUEST), "ApprovalAccepted")["observedGeneration"] == 2


def _orphan(client: FleetClient) -> str:
    """A request for a run this hub does not have (e.g. one another controller executes)."""
    return client.create(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": APPROVAL,
            "metadata": {
                "name": "elsewhere-after-canary",
                "labels": {"kubernetes-fleet.io/targetUpdateRun": "elsewhere"},
            },
            "spec": {"parentStageRollout": "elsewhere", "targetStage": "canary"},
        }
    )["metadata"]["name"]


def test_a_request_of_a_run_the_hub_does_not_have_is_accepted_directly(
    hub: DemoHub, client: FleetClient
) -> None:
    name = _orphan(client)
    hub.reconcile()
    assert "status" not in client.get(APPROVAL, name)

    _approve(client, name, generation=1)
    hub.reconcile()
    accepted = client.get(APPROVAL, name)
    hub.advance(60)

    assert hub.reconcile() == []
    assert summary(accepted, "ApprovalAccepted") == ("True", "ApprovalRequestApprovalAccepted")
    assert (
        client.get(APPROVAL, name)["metadata"]["resourceVersion"] == accepted["metadata"]["resourceVersion"]
    )


def test_a_stale_approval_of_such_a_request_is_ignored_too(hub: DemoHub, client: FleetClient) -> None:
    name = _orphan(client)

    _approve(client, name, generation=0)
    hub.reconcile()

    assert condition(client.get(APPROVAL, name), "ApprovalAccepted") is None


def test_deleting_a_run_deletes_its_approval_requests(hub: DemoHub, client: FleetClient) -> None:
    orphan = _orphan(client)
    hub.reconcile()

    client.delete("ClusterStagedUpdateRun", RUN)
    done = hub.reconcile()

    assert done == [f"approval request {REQUEST} deleted with its run {RUN}"]
    assert [r["metadata"]["name"] for r in client.list(APPROVAL)["items"]] == [orphan]
