"""Building a hub's snapshot reads each kind in one query whatever the fleet's size: the cluster rows
are loaded with only the columns their conversion reads, and no deferred column is fetched row by row."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from demohub import DemoHub
from inventory.models import ManagedCluster
from placement import service
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db


def test_a_snapshot_build_reads_every_cluster_in_one_query_per_family(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    service.forget_snapshots()
    with CaptureQueriesContext(connection) as queries:
        snapshot = service.hub_snapshot(hub)
    cluster_queries = [
        q["sql"] for q in queries.captured_queries if 'FROM "inventory_managedcluster" ' in q["sql"]
    ]
    assert len(cluster_queries) == 2  # the OCM clusters, the Fleet members
    assert len(snapshot.ocm.clusters) == ManagedCluster.objects.filter(hub=hub, kind="ManagedCluster").count()
    assert len(snapshot.fleet) == ManagedCluster.objects.filter(hub=hub, kind="MemberCluster").count()
    assert snapshot.ocm.clusters and len(snapshot.fleet)
