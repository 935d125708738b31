"""A Celery worker builds the snapshot of every hub with placements before it takes tasks, so the first
run after it starts reads no cluster row; a hub without placements is left to its first run."""

import pytest
from celery.signals import worker_init
from django.db import connection
from django.test.utils import CaptureQueriesContext

from demohub import DemoHub
from inventory.models import Hub
from placement import service, tasks
from placement.models import Placement
from placement.scheduler.ocm import cel_syntax
from placement.scheduler.ocm.types import SCORED_RESOURCES
from tests.factories import placement_role, synced_demo_hub_row

pytestmark = pytest.mark.django_db


def cluster_reads(hub: Hub) -> int:
    """How many queries of the cluster rows the hub's snapshot takes now."""
    with CaptureQueriesContext(connection) as queries:
        service.hub_snapshot(hub)
    return sum('FROM "inventory_managedcluster" ' in q["sql"] for q in queries.captured_queries)


def test_the_snapshots_of_the_hubs_with_placements_are_built_when_a_worker_starts(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    idle = Hub.objects.create(name="idle", server_url="https://idle.example")
    editor = placement_role(hub, ("default",), username="editor")
    service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=hub,
        namespace="default",
        name="every",
        spec={"clusterSets": ["global"]},
        actor=editor,
    )
    service.forget_snapshots()

    tasks.warm_snapshots()

    # connected strongly (the receiver itself, no weak reference) when the app is ready
    assert any(receiver is tasks.warm_snapshots for _, receiver in worker_init.receivers)
    assert cluster_reads(hub) == 0
    assert cluster_reads(idle) == 2  # built on first use: the OCM clusters, the Fleet members


def test_a_worker_also_builds_the_columns_every_placement_reads_and_the_cel_parser(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    service.forget_snapshots()
    cel_syntax.parser.cache_clear()

    tasks.warm_snapshots()

    snapshot = service.hub_snapshot(hub)
    assert {"labels", "claims", "taints", "deleting"} <= vars(snapshot.ocm).keys()
    assert set(SCORED_RESOURCES.values()) <= snapshot.ocm._resources.keys()
    assert snapshot.fleet._eligibility is not None
    assert cel_syntax.parser.cache_info().currsize == 1
