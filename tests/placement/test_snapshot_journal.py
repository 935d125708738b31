"""A process holding a hub's snapshot catches up through the change journal: it reloads only the rows the
syncs after its version changed, patches its snapshot (sharing what did not change, leaving the old one
as it was) and then agrees with a snapshot built from scratch; it builds again when the journal cannot
say what changed."""

from datetime import UTC, datetime
from typing import Any

import pytest

from demohub import DemoHub
from inventory.models import AddOnPlacementScore, Hub, SyncRun
from inventory.sync import sync_hub
from placement import journal, service
from placement.models import PLACEMENT_LABEL, ClusterResourceBinding, HubChangeEntry, Placement
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db
SET_LABEL = "cluster.open-cluster-management.io/clusterset"


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def _sync(hub: Hub) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)


def _held_elsewhere(hub: Hub, snapshot: service.HubSnapshot) -> None:
    """Make this process hold `snapshot` as another process would have: the syncs' own reschedules ran
    here and caught this process's snapshot up already."""
    with service._snapshots_lock:
        service._snapshots[hub.pk] = snapshot


def _view(snapshot: service.HubSnapshot) -> dict[str, Any]:
    """What the schedulers read of a snapshot (columns included) as plain values."""
    inventory, members = snapshot.ocm, snapshot.fleet
    return {
        "clusters": inventory.clusters,
        "sets": inventory.cluster_sets,
        "bindings": sorted(inventory.bindings, key=lambda b: (b.namespace, b.name)),
        "scores": inventory.add_on_scores,
        "decisions": sorted(inventory.decisions, key=lambda d: (d.namespace, d.name)),
        "counts": inventory.decision_index().counts.tolist(),
        "deleting": inventory.deleting.tolist(),
        "set masks": {name: inventory.set_mask(name).tolist() for name in inventory.cluster_sets},
        "cpu": inventory.resource("cpu").allocatable.tolist(),
        "taints": [(int(o), inventory.names[o]) for o in inventory.taints.rows.owner],
        "members": members.clusters,
        "member taints": members.taints.owner.tolist(),
        "eligibility": members.eligibility.static_ineligible.tolist(),
        "crbs": {name: sorted(own, key=lambda b: b.name) for name, own in snapshot.bindings.items() if own},
        "expiries": snapshot.score_expiries,
    }


def _selections(hub: Hub, snapshot: service.HubSnapshot) -> dict[str, list[str]]:
    """What every placement of the hub selects on `snapshot`."""
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    return {
        f"{p.kind}/{p.namespace}/{p.name}": sorted(service.evaluate(p, now=now, snapshot=snapshot).selected)
        for p in Placement.objects.filter(hub=hub).order_by("pk")
    }


def test_a_second_process_catches_up_through_the_journal(demo_hub: DemoHub, hub: Hub) -> None:
    held = service.hub_snapshot(hub)
    held_view = _view(held)
    clusters, members = demo_hub.store.names("ManagedCluster"), demo_hub.store.names("MemberCluster")
    demo_hub.store.patch("ManagedCluster", clusters[0], {"metadata": {"labels": {SET_LABEL: "staging"}}})
    taints = [{"key": "maintenance", "effect": "NoSelect", "timeAdded": "2026-11-20T11:00:00Z"}]
    demo_hub.store.patch("ManagedCluster", clusters[1], {"spec": {"taints": taints}})
    demo_hub.store.patch("MemberCluster", members[0], {"metadata": {"labels": {"tier": "gold"}}})
    score = AddOnPlacementScore.objects.filter(hub=hub).order_by("pk").first()
    assert score is not None
    demo_hub.store.patch(
        "AddOnPlacementScore",
        score.name,
        {"status": {"scores": [{"name": "cpuAvailable", "value": 3}], "validUntil": "2026-11-20T13:00:00Z"}},
        namespace=score.namespace,
        subresource="status",
    )
    crb = ClusterResourceBinding.objects.filter(hub=hub).order_by("name").first()
    assert crb is not None
    demo_hub.store.patch("ClusterResourceBinding", crb.name, {"spec": {"state": "Bound"}})
    demo_hub.store.create(
        {
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "PlacementDecision",
            "metadata": {
                "name": "hub-decision-1",
                "namespace": "apps-prod",
                "labels": {PLACEMENT_LABEL: "web-frontend"},
            },
            "status": {"decisions": [{"clusterName": clusters[2], "reason": ""}]},
        },
        namespace="apps-prod",
    )
    _sync(hub)
    _held_elsewhere(hub, held)

    caught_up = service.hub_snapshot(hub)

    entries = HubChangeEntry.objects.filter(hub=hub, version__gt=held.version)
    assert {(e.kind, e.name) for e in entries} >= {
        ("cluster", clusters[0]),
        ("cluster", clusters[1]),
        ("cluster", members[0]),
        ("score", score.name),
        ("crb", crb.name),
        ("decision", "hub-decision-1"),
    }
    # patched: unchanged clusters are the very objects of the held snapshot, which still reads as before
    assert caught_up is not held and caught_up.ocm.clusters[2] is held.ocm.clusters[2]
    assert caught_up.fleet.clusters[1] is held.fleet.clusters[1]
    assert _view(held) == held_view
    service.forget_snapshots()
    fresh = service.hub_snapshot(hub)
    assert fresh.version == caught_up.version
    assert _view(caught_up) == _view(fresh)
    assert _selections(hub, caught_up) == _selections(hub, fresh)


def test_adds_and_removes_catch_up_too(demo_hub: DemoHub, hub: Hub) -> None:
    held = service.hub_snapshot(hub)
    gone = demo_hub.store.names("ManagedCluster")[3]
    added = demo_hub.store.get("ManagedCluster", demo_hub.store.names("ManagedCluster")[4])
    added["metadata"] = {"name": "zz-added", "labels": {**added["metadata"]["labels"], SET_LABEL: "staging"}}
    demo_hub.store.delete("ManagedCluster", gone)
    demo_hub.store.create(added)
    _sync(hub)
    _held_elsewhere(hub, held)

    caught_up = service.hub_snapshot(hub)

    assert "zz-added" in caught_up.ocm.position and gone not in caught_up.ocm.position
    assert gone in held.ocm.position
    service.forget_snapshots()
    fresh = service.hub_snapshot(hub)
    assert _view(caught_up) == _view(fresh)
    assert _selections(hub, caught_up) == _selections(hub, fresh)


def test_the_snapshot_is_built_again_when_the_journal_cannot_say(
    demo_hub: DemoHub, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = service.hub_snapshot(hub)
    service.invalidate_snapshot(hub.pk)  # no inputs named: anything may have changed
    rebuilt = service.hub_snapshot(hub)
    assert rebuilt.ocm.clusters[0] is not held.ocm.clusters[0]

    monkeypatch.setattr(journal, "KEEP_VERSIONS", 1)
    name = demo_hub.store.names("ManagedCluster")[0]
    for tier in ("gold", "silver"):
        demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": tier}}})
        _sync(hub)
    # the first of the two versions was pruned: the journal no longer holds what it changed
    assert not HubChangeEntry.objects.filter(hub=hub, version=rebuilt.version + 1).exists()
    _held_elsewhere(hub, rebuilt)
    again = service.hub_snapshot(hub)
    assert again.ocm.clusters[1] is not rebuilt.ocm.clusters[1]
    assert again.ocm.cluster(name).labels["tier"] == "silver"


def test_a_change_of_no_scheduler_input_is_journaled_as_nothing(hub: Hub) -> None:
    held = service.hub_snapshot(hub)
    service.invalidate_snapshot(hub.pk, [])
    (entry,) = HubChangeEntry.objects.filter(hub=hub, version=held.version + 1)
    assert entry.kind == HubChangeEntry.Kind.NOTHING
    caught_up = service.hub_snapshot(hub)
    assert caught_up.version == held.version + 1
    assert caught_up.ocm.clusters[0] is held.ocm.clusters[0]
    assert caught_up.fresh_until == held.fresh_until
