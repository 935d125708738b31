"""`inventory.sync.sync_hub` against the demo hub over real HTTP with the real `kubernetes` client."""

from typing import Any

import pytest
from django.forms.models import model_to_dict

from demohub import DemoHub
from inventory import scheduler_inputs
from inventory.models import (
    AddOnPlacementScore,
    ClusterSetMembership,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    SyncRun,
)
from inventory.sync import sync_hub
from placement.models import ClusterResourceBinding, Placement, PlacementDecision
from placement.scheduler.ocm.clustersets import cluster_set_members
from placement.scheduler.quantity import approx_float
from tests.factories import DemoHubRowFactory

pytestmark = pytest.mark.django_db

MODELS = (
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    AddOnPlacementScore,
    ClusterSetMembership,
    Placement,
    PlacementDecision,
    ClusterResourceBinding,
)


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return DemoHubRowFactory(name="demo", server_url=demo_hub.url)


def snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every row of every mirrored model, every field."""
    return {
        model.__name__: [model_to_dict(row) | {"pk": row.pk} for row in model.objects.order_by("pk")]
        for model in MODELS
    }


def test_full_sync_mirrors_every_kind(demo_hub: DemoHub, hub: Hub) -> None:
    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    assert run.state == SyncRun.State.SUCCEEDED and run.finished_at is not None
    seeded = demo_hub.seeded
    clusters = ManagedCluster.objects.filter(hub=hub)
    assert clusters.filter(kind="ManagedCluster").count() == seeded["ManagedCluster"]
    assert clusters.filter(kind="MemberCluster").count() == seeded["MemberCluster"]
    assert ManagedClusterSet.objects.count() == seeded["ManagedClusterSet"]
    assert ManagedClusterSetBinding.objects.count() == seeded["ManagedClusterSetBinding"]
    assert AddOnPlacementScore.objects.count() == seeded["AddOnPlacementScore"]
    assert Placement.objects.filter(kind="Placement").count() == seeded["Placement"]
    assert (
        Placement.objects.filter(kind="ClusterResourcePlacement").count()
        == seeded["ClusterResourcePlacement"]
    )
    assert ClusterResourceBinding.objects.count() == seeded["ClusterResourceBinding"]
    assert run.added == sum(run.kinds[kind]["added"] for kind in run.kinds)
    assert run.kinds["ManagedCluster"]["listed"] == seeded["ManagedCluster"]
    hub.refresh_from_db()
    assert hub.state == "ok" and hub.last_good_sync_at == hub.last_synced_at
    assert set(hub.resource_versions) == set(run.kinds)


def test_cluster_fields_map_exactly(demo_hub: DemoHub, hub: Hub) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    for obj in demo_hub.store.list("ManagedCluster").items:
        row = ManagedCluster.objects.get(hub=hub, kind="ManagedCluster", name=obj["metadata"]["name"])
        assert row.uid == obj["metadata"]["uid"]
        assert row.resource_version == obj["metadata"]["resourceVersion"]
        assert row.labels == obj["metadata"]["labels"]
        assert row.claims == obj["status"]["clusterClaims"]
        assert row.taints == obj["spec"].get("taints", [])
        keys = [taint["key"] for taint in row.taints]
        assert row.taint_keys == (f",{','.join(keys)}," if keys else "")
        assert row.cpu_allocatable == approx_float(obj["status"]["allocatable"]["cpu"])
        assert row.memory_allocatable == approx_float(obj["status"]["allocatable"]["memory"])
        available = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
        expected = {"True": "Available", "False": "Unavailable"}.get(
            available.get("ManagedClusterConditionAvailable", ""), "Unknown"
        )
        assert row.availability == expected
    for obj in demo_hub.store.list("MemberCluster").items:
        row = ManagedCluster.objects.get(hub=hub, kind="MemberCluster", name=obj["metadata"]["name"])
        allocatable = obj["status"]["resourceUsage"]["allocatable"]
        assert row.cpu_allocatable == approx_float(allocatable["cpu"])
        assert row.memory_allocatable == approx_float(allocatable["memory"])
        assert row.properties == obj["status"].get("properties", {})


def test_memberships_equal_the_scheduler_cluster_set_members(hub: Hub) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    clusters = [
        scheduler_inputs.managed_cluster(row) for row in ManagedCluster.objects.filter(kind="ManagedCluster")
    ]
    assert ClusterSetMembership.objects.exists()
    for cluster_set in ManagedClusterSet.objects.all():
        members = sorted(cluster_set.memberships.values_list("cluster__name", flat=True))
        assert members == cluster_set_members(scheduler_inputs.cluster_set(cluster_set), clusters), (
            cluster_set.name
        )
    assert not ClusterSetMembership.objects.filter(cluster__kind="MemberCluster").exists()


def test_small_pages_give_the_same_rows_and_count_pages(demo_hub: DemoHub, hub: Hub) -> None:
    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND, page_limit=5)

    assert ManagedCluster.objects.filter(kind="ManagedCluster").count() == demo_hub.seeded["ManagedCluster"]
    # 24 clusters in pages of 5 are 5 pages for that kind alone
    assert run.pages >= 5 * 3
    assert run.kinds["AddOnPlacementScore"]["listed"] == demo_hub.seeded["AddOnPlacementScore"]


def test_sync_twice_leaves_identical_rows(hub: Hub) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)
    before = snapshot()

    second = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND, page_limit=7)

    assert snapshot() == before
    assert (second.added, second.updated, second.removed) == (0, 0, 0)


def test_changes_and_removals_after_a_complete_list(demo_hub: DemoHub, hub: Hub) -> None:
    sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)
    name = demo_hub.store.names("ManagedCluster")[0]
    other = demo_hub.store.names("ManagedCluster")[1]
    demo_hub.store.delete("ManagedCluster", name)
    demo_hub.store.patch("ManagedCluster", other, {"metadata": {"labels": {"tier": "gold"}}})

    run = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    assert not ManagedCluster.objects.filter(kind="ManagedCluster", name=name).exists()
    assert ManagedCluster.objects.get(kind="ManagedCluster", name=other).labels["tier"] == "gold"
    assert run.kinds["ManagedCluster"]["removed"] == 1 and run.kinds["ManagedCluster"]["updated"] == 1
    # the deleted cluster's score stays until the hub deletes it: nothing is inferred
    assert AddOnPlacementScore.objects.filter(namespace=name).exists()
