"""While the demo hub applies a binding, the rollout reads it as in progress, never as failed; a member
labelled with its own apply time keeps its bindings applying that long."""

from collections.abc import Iterator

import pytest

from demohub import DemoHub
from demohub.fleetsim import APPLY_SECONDS_LABEL
from placement.scheduler.fleet.manifests import parse_cluster_resource_binding
from placement.scheduler.rollout.rolling import has_binding_failed, is_binding_ready
from tests.demohub.fleet import NOW, FleetClient, binding, frozen_hub, member, placement, summary

BINDING = "ClusterResourceBinding"
SNAPSHOT = {"resourceSnapshotName": "web-1-snapshot"}


@pytest.fixture
def hub() -> Iterator[DemoHub]:
    with frozen_hub(apply_seconds=4, available_seconds=6) as hub:
        yield hub


def verdict(client: FleetClient, name: str) -> tuple[bool, bool]:
    """(failed, ready) as the rolling update's planner reads the binding now."""
    parsed = parse_cluster_resource_binding(client.get(BINDING, name))
    return has_binding_failed(parsed), is_binding_ready(parsed, NOW)[0]


def test_applying_and_becoming_available_are_in_progress_not_failed(hub: DemoHub) -> None:
    client = FleetClient(hub)
    client.create(member("east"))
    client.create(placement("web", ["east"]))
    name = client.create(binding("web", "east", "Bound", **SNAPSHOT))["metadata"]["name"]

    hub.reconcile()
    assert verdict(client, name) == (False, False)  # applying
    hub.advance(4)
    hub.reconcile()
    assert verdict(client, name) == (False, False)  # applied, not available yet
    hub.advance(6)
    hub.reconcile()
    assert verdict(client, name) == (False, True)


def test_a_member_labelled_with_an_apply_time_applies_that_long(hub: DemoHub) -> None:
    client = FleetClient(hub)
    client.create(member("slow", **{APPLY_SECONDS_LABEL: "3600"}))
    client.create(member("fast", **{APPLY_SECONDS_LABEL: "not a number"}))
    client.create(placement("web", ["slow", "fast"]))
    slow = client.create(binding("web", "slow", "Bound", **SNAPSHOT))["metadata"]["name"]
    fast = client.create(binding("web", "fast", "Bound", **SNAPSHOT))["metadata"]["name"]

    hub.reconcile()
    hub.advance(3599)
    hub.reconcile()
    assert summary(client.get(BINDING, slow), "Applied") == ("False", "ApplyPending")
    assert summary(client.get(BINDING, fast), "Available") == ("True", "AllWorkAreAvailable")
    hub.advance(1)
    hub.reconcile()
    assert summary(client.get(BINDING, slow), "Applied") == ("True", "AllWorkHaveBeenApplied")
