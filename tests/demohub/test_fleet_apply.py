"""The demo hub reports work apply on Bound bindings as kubefleet's work generator and applier do.

Driven over HTTP with the official client; the hub's clock is frozen and stepped with `advance`.
"""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.watch import Watch

from demohub import DemoHub
from demohub.fleetsim import APPLY_FAILS_LABEL
from tests.demohub.fleet import (
    TIMEOUT,
    FleetClient,
    binding,
    condition,
    frozen_hub,
    member,
    placement,
    stamp,
    summary,
)

BINDING = "ClusterResourceBinding"
SNAPSHOT = {"resourceSnapshotName": "web-1-snapshot"}
WORK_CONDITIONS = ["Overridden", "WorkSynchronized", "Applied", "Available"]


@pytest.fixture
def hub() -> Iterator[DemoHub]:
    with frozen_hub(apply_seconds=4, available_seconds=6) as hub:
        yield hub


@pytest.fixture
def client(hub: DemoHub) -> FleetClient:
    client = FleetClient(hub)
    client.create(member("east"))
    client.create(placement("web", ["east"]))
    return client


def _bound(client: FleetClient, **spec: Any) -> str:
    return client.create(binding("web", "east", "Bound", **SNAPSHOT, **spec))["metadata"]["name"]


def _conditions(client: FleetClient, name: str) -> dict[str, tuple[str, str, int, str]]:
    found = client.get(BINDING, name)["status"]["conditions"]
    return {
        c["type"]: (c["status"], c["reason"], c["observedGeneration"], c["lastTransitionTime"]) for c in found
    }


def test_synchronized_at_once_then_applied_then_available(hub: DemoHub, client: FleetClient) -> None:
    name = _bound(client)

    hub.reconcile()
    assert _conditions(client, name) == {
        "Overridden": ("True", "NoOverrideSpecified", 1, stamp(0)),
        "WorkSynchronized": ("True", "AllWorkSynced", 1, stamp(0)),
        "Applied": ("False", "ApplyPending", 1, stamp(0)),
    }

    hub.advance(3)
    assert hub.reconcile() == []
    hub.advance(1)
    hub.reconcile()
    applied = _conditions(client, name)
    assert applied["Applied"] == ("True", "AllWorkHaveBeenApplied", 1, stamp(4))
    assert applied["Available"] == ("False", "ResourceNotAvailableYet", 1, stamp(4))

    hub.advance(6)
    hub.reconcile()
    assert _conditions(client, name)["Available"] == ("True", "AllWorkAreAvailable", 1, stamp(10))
    assert list(_conditions(client, name)) == WORK_CONDITIONS


def test_a_settled_binding_is_left_alone(hub: DemoHub, client: FleetClient) -> None:
    name = _bound(client)
    hub.reconcile()
    hub.advance(60)
    hub.reconcile()
    version = client.get(BINDING, name)["metadata"]["resourceVersion"]

    hub.advance(3600)

    assert hub.reconcile() == []
    assert client.get(BINDING, name)["metadata"]["resourceVersion"] == version


def test_a_new_generation_is_synced_and_applied_again(hub: DemoHub, client: FleetClient) -> None:
    name = _bound(client)
    hub.reconcile()
    hub.advance(60)
    hub.reconcile()
    rollout = {
        "type": "RolloutStarted",
        "status": "True",
        "reason": "RolloutStarted",
        "observedGeneration": 2,
        "lastTransitionTime": stamp(60),
    }
    client.patch(BINDING, name, {"spec": {"resourceSnapshotName": "web-2-snapshot"}})
    client.patch_status(
        BINDING,
        name,
        {"status": {"conditions": [rollout, *client.get(BINDING, name)["status"]["conditions"]]}},
    )

    hub.advance(1)
    hub.reconcile()

    conditions = _conditions(client, name)
    assert conditions["RolloutStarted"] == ("True", "RolloutStarted", 2, stamp(60))  # the rollout's, kept
    assert conditions["WorkSynchronized"] == ("True", "AllWorkSynced", 2, stamp(61))
    assert conditions["Applied"] == ("False", "ApplyPending", 2, stamp(61))
    assert "Available" not in conditions


def test_override_snapshots_are_reported_as_overridden(hub: DemoHub, client: FleetClient) -> None:
    name = _bound(client, clusterResourceOverrideSnapshots=["web-override-0"])

    hub.reconcile()

    assert _conditions(client, name)["Overridden"][:2] == ("True", "OverriddenSucceeded")


@pytest.mark.parametrize("state", ["Scheduled", "Unscheduled"])
def test_bindings_that_are_not_bound_get_no_work_conditions(
    hub: DemoHub, client: FleetClient, state: str
) -> None:
    name = client.create(binding("web", "east", state, **SNAPSHOT))["metadata"]["name"]

    hub.advance(60)
    hub.reconcile()

    assert "status" not in client.get(BINDING, name)


def test_bound_without_a_resource_snapshot_is_not_applied(hub: DemoHub, client: FleetClient) -> None:
    name = client.create(binding("web", "east", "Bound"))["metadata"]["name"]

    hub.reconcile()

    assert "status" not in client.get(BINDING, name)


def test_a_cluster_labelled_to_fail_reports_the_upstream_apply_failure(
    hub: DemoHub, client: FleetClient
) -> None:
    client.patch("MemberCluster", "east", {"metadata": {"labels": {APPLY_FAILS_LABEL: "true"}}})
    name = _bound(client)
    hub.reconcile()

    hub.advance(60)
    hub.reconcile()

    failed = client.get(BINDING, name)["status"]
    assert summary(failed, "Applied") == ("False", "NotAllWorkHaveBeenApplied")
    assert condition(failed, "Applied")["message"] == "Work object web-work is not applied"
    assert condition(failed, "Applied")["lastTransitionTime"] == stamp(4)
    assert condition(failed, "Available") is None
    (resource,) = failed["failedPlacements"]
    assert (resource["kind"], resource["name"], resource["version"]) == ("Namespace", "web", "v1")
    assert summary(resource, "Applied") is None  # the placement's own condition, not a list
    assert (resource["condition"]["status"], resource["condition"]["reason"]) == (
        "False",
        "ManifestApplyFailed",
    )


def test_a_failed_binding_recovers_with_its_next_generation(hub: DemoHub, client: FleetClient) -> None:
    client.patch("MemberCluster", "east", {"metadata": {"labels": {APPLY_FAILS_LABEL: "true"}}})
    name = _bound(client)
    hub.reconcile()
    hub.advance(60)
    hub.reconcile()
    client.patch("MemberCluster", "east", {"metadata": {"labels": {APPLY_FAILS_LABEL: None}}})
    client.patch(BINDING, name, {"spec": {"resourceSnapshotName": "web-2-snapshot"}})

    hub.reconcile()
    hub.advance(60)
    hub.reconcile()

    recovered = client.get(BINDING, name)["status"]
    assert summary(recovered, "Available") == ("True", "AllWorkAreAvailable")
    assert "failedPlacements" not in recovered


def _failing_clusters(seed: int) -> set[str]:
    clusters = [f"c{index}" for index in range(12)]
    with frozen_hub(seed=seed, apply_seconds=0, available_seconds=0, apply_failure_rate=0.5) as hub:
        client = FleetClient(hub)
        client.create(placement("web", clusters))
        for cluster in clusters:
            client.create(member(cluster))
            client.create(binding("web", cluster, "Bound", **SNAPSHOT))
        hub.reconcile()
        items = client.list(BINDING, label_selector="kubernetes-fleet.io/parent-CRP=web")["items"]
    return {
        b["spec"]["targetCluster"]
        for b in items
        if summary(b, "Applied") != ("True", "AllWorkHaveBeenApplied")
    }


def test_the_failure_rate_is_a_draw_from_the_seed() -> None:
    failing = _failing_clusters(seed=3)

    assert 0 < len(failing) < 12
    assert _failing_clusters(seed=3) == failing
    assert _failing_clusters(seed=4) != failing


def test_watchers_see_each_step_as_a_status_modification(hub: DemoHub, client: FleetClient) -> None:
    name = _bound(client)
    since = client.get(BINDING, name)["metadata"]["resourceVersion"]
    hub.reconcile()
    hub.advance(4)
    hub.reconcile()
    hub.advance(6)
    hub.reconcile()

    events = list(
        Watch().stream(
            client.api.list_cluster_custom_object,
            "placement.kubernetes-fleet.io",
            "v1beta1",
            "clusterresourcebindings",
            resource_version=since,
            timeout_seconds=1,
            _request_timeout=TIMEOUT,
        )
    )

    assert [e["type"] for e in events] == ["MODIFIED"] * 3
    assert [summary(e["object"], "Applied") for e in events] == [
        ("False", "ApplyPending"),
        ("True", "AllWorkHaveBeenApplied"),
        ("True", "AllWorkHaveBeenApplied"),
    ]
    assert {e["object"]["metadata"]["generation"] for e in events} == {1}


def test_the_background_controllers_apply_in_real_time() -> None:
    with DemoHub(fleet=True, controllers=True, apply_seconds=0.1, available_seconds=0.1) as hub:
        client = FleetClient(hub)
        client.create(member("east"))
        client.create(placement("web", ["east"]))
        name = _bound(client)
        deadline = time.monotonic() + 5
        while summary(client.get(BINDING, name), "Available") != ("True", "AllWorkAreAvailable"):
            assert time.monotonic() < deadline, client.get(BINDING, name)
            time.sleep(0.1)
