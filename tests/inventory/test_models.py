"""Inventory model additions: hub state, SyncRun order, the taint-key column, unique memberships."""

from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.utils import timezone

from inventory.models import ClusterSetMembership, ManagedCluster, ManagedClusterSet, SyncRun
from inventory.objects import filter_columns
from tests.factories import HubFactory, ManagedClusterFactory

pytestmark = pytest.mark.django_db


def test_hub_state() -> None:
    hub = HubFactory()
    assert hub.state == "never"
    hub.last_synced_at = timezone.now()
    assert hub.state == "ok"
    hub.last_sync_error = "hub demo: list managedclusters: HTTP 500"
    assert hub.state == "failing"


def test_sync_runs_newest_first() -> None:
    hub = HubFactory()
    now = timezone.now()
    old = SyncRun.objects.create(
        hub=hub, trigger=SyncRun.Trigger.PERIODIC, started_at=now - timedelta(minutes=1)
    )
    new = SyncRun.objects.create(hub=hub, trigger=SyncRun.Trigger.MANUAL, started_at=now)
    assert list(hub.sync_runs.all()) == [new, old]
    assert new.duration_seconds is None


def test_taint_keys_match_one_whole_key() -> None:
    taints = [{"key": "cluster.open-cluster-management.io/unreachable", "effect": "NoSelect"}, {"key": "gpu"}]
    columns = filter_columns(taints, {"cpu": "500m", "memory": "1Gi"}, "spec.taints", "status.allocatable")
    assert columns == {
        "taint_keys": ",cluster.open-cluster-management.io/unreachable,gpu,",
        "cpu_allocatable": 0.5,
        "memory_allocatable": 1073741824.0,
    }
    ManagedClusterFactory(name="tainted", taint_keys=columns["taint_keys"])
    ManagedClusterFactory(name="gpu-operator", taint_keys=",gpu-operator,")
    assert list(
        ManagedCluster.objects.filter(taint_keys__icontains=",gpu,").values_list("name", flat=True)
    ) == ["tainted"]


def test_membership_is_unique_per_cluster_and_set() -> None:
    cluster = ManagedClusterFactory()
    cluster_set = ManagedClusterSet.objects.create(hub=cluster.hub, name="prod")
    ClusterSetMembership.objects.create(cluster=cluster, cluster_set=cluster_set)
    assert [m.cluster_set.name for m in cluster.memberships.all()] == ["prod"]
    with pytest.raises(IntegrityError):
        ClusterSetMembership.objects.create(cluster=cluster, cluster_set=cluster_set)
