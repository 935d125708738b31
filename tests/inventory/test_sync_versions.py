"""A resync compares by resourceVersion: it builds rows only of the objects the hub rewrote, and a rewrite
no scheduler notices (a heartbeat, a condition's time) is stored without moving memberships or signalling.
"""

import dataclasses
from collections.abc import Callable, Iterator

import pytest
from django.utils import timezone

from demohub import Clock, DemoHub
from inventory import changes, kinds, memberships
from inventory.models import ClusterSetMembership, Hub, ManagedCluster
from inventory.objects import Row
from inventory.sync import sync_hub
from placement.scheduler.documents import Document
from tests.factories import synced_demo_hub_row

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
# the inventory's own kinds (the demo hub's controllers may rewrite placements and what belongs to them)
INVENTORY_KINDS = ("ManagedCluster", "MemberCluster", "ManagedClusterSet", "ManagedClusterSetBinding")
AVAILABLE = "ManagedClusterConditionAvailable"


@pytest.fixture
def demo_hub() -> Iterator[DemoHub]:
    # the hub's clock stands still unless the test moves it, so every heartbeat is a new value
    with DemoHub(clusters=12, fleet=True, seed=7, clock=Clock.frozen(timezone.now())) as hub:
        yield hub


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(kind, name) of every object the sync builds a row of, in order."""
    names: list[tuple[str, str]] = []
    for key, handler in list(kinds.HANDLERS.items()):

        def to_row(
            document: Document, kind: str = key[1], build: Callable[[Document], Row] = handler.to_row
        ) -> Row:
            names.append((kind, document.name))
            return build(document)

        monkeypatch.setitem(kinds.HANDLERS, key, dataclasses.replace(handler, to_row=to_row))
    return names


@pytest.fixture
def recomputed(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The membership recomputations: "hub" for a rebuild, else the cluster names recomputed."""
    calls: list[object] = []
    rebuild, update_clusters = memberships.rebuild, memberships.update_clusters

    def rebuilt(hub: Hub) -> None:
        calls.append("hub")
        rebuild(hub)

    def updated(hub: Hub, rows: list[ManagedCluster]) -> None:
        calls.append(sorted(row.name for row in rows))
        update_clusters(hub, rows)

    monkeypatch.setattr(memberships, "rebuild", rebuilt)
    monkeypatch.setattr(memberships, "update_clusters", updated)
    return calls


def inventory_rows(built: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(kind, name) for kind, name in built if kind in INVENTORY_KINDS]


def test_a_resync_builds_rows_only_of_the_objects_the_hub_rewrote(
    demo_hub: DemoHub, hub: Hub, built: list[tuple[str, str]], recomputed: list[object]
) -> None:
    name = demo_hub.store.names("ManagedCluster")[0]
    demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"gpu": "true"}}})

    run = sync_hub(hub, trigger="command")

    assert inventory_rows(built) == [("ManagedCluster", name)]
    assert run.kinds["ManagedCluster"]["listed"] == demo_hub.seeded["ManagedCluster"]
    assert (run.kinds["ManagedCluster"]["updated"], run.removed) == (1, 0)
    cluster = ManagedCluster.objects.get(hub=hub, kind="ManagedCluster", name=name)
    assert cluster.labels["gpu"] == "true"
    # its memberships alone are recomputed, and they are the ones a rebuild of the hub finds
    assert recomputed == [[name]]
    assert cluster.memberships.filter(cluster_set__name="gpu-clusters").exists()
    stored = set(ClusterSetMembership.objects.values_list("cluster_id", "cluster_set_id"))
    memberships.rebuild(hub)
    assert set(ClusterSetMembership.objects.values_list("cluster_id", "cluster_set_id")) == stored


def test_a_resync_of_heartbeats_stores_them_and_moves_nothing(
    demo_hub: DemoHub,
    hub: Hub,
    built: list[tuple[str, str]],
    recomputed: list[object],
    heard: list[changes.HubChanges],
) -> None:
    demo_hub.clock.advance(30)
    beats = demo_hub.churn.beat()
    assert beats > 1
    probed = demo_hub.store.names("ManagedCluster")[0]
    conditions = demo_hub.store.get("ManagedCluster", probed)["status"]["conditions"]
    for condition in conditions:
        if condition["type"] == AVAILABLE:
            condition["lastHeartbeatTime"] = demo_hub.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
    demo_hub.store.patch(
        "ManagedCluster", probed, {"status": {"conditions": conditions}}, subresource="status"
    )

    run = sync_hub(hub, trigger="command")

    assert len(inventory_rows(built)) == beats + 1
    assert run.kinds["MemberCluster"]["updated"] == beats and run.kinds["ManagedCluster"]["updated"] == 1
    member = demo_hub.store.names("MemberCluster")[0]
    beat = demo_hub.store.get("MemberCluster", member)["status"]["agentStatus"][0]["lastReceivedHeartbeat"]
    stored = ManagedCluster.objects.get(hub=hub, kind="MemberCluster", name=member)
    assert stored.agent_status[0]["lastReceivedHeartbeat"] == beat
    assert recomputed == [] and heard == []
