"""Past the moment a heartbeat the hub's snapshot holds goes stale, only a Fleet evaluation reads the
members' heartbeats again: an OCM Placement's (a what-if on a page, a reschedule after a hub change)
reads none, so it keeps the cached snapshot instead of reading every member's agent status; a full
reschedule's chunk reads them when it holds a Fleet placement."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from demohub import Clock, DemoHub
from inventory.models import Hub
from placement import service
from placement.models import Placement
from tests.factories import PlacementFactory, synced_demo_hub_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def stale_hub(hub: Hub) -> tuple[Hub, service.HubSnapshot]:
    service.forget_snapshots()
    snapshot = service.hub_snapshot(hub)
    assert snapshot.fresh_until is not None
    return hub, snapshot


def crp_on(hub: Hub) -> Placement:
    return PlacementFactory(
        hub=hub,
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        spec={
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"placementType": "PickAll"},
        },
    )


@pytest.fixture
def hub() -> Iterator[Hub]:
    with DemoHub(clusters=6, fleet=True, seed=7, clock=Clock.frozen(timezone.now())) as demo_hub:
        yield synced_demo_hub_row(demo_hub)


def agent_reads(queries: CaptureQueriesContext) -> int:
    return sum('"agent_status"' in query["sql"] for query in queries.captured_queries)


def test_only_a_fleet_evaluation_reads_the_heartbeats_again(
    stale_hub: tuple[Hub, service.HubSnapshot],
) -> None:
    hub, snapshot = stale_hub
    later = snapshot.fresh_until + timedelta(minutes=1)  # type: ignore[operator]
    ocm = PlacementFactory(hub=hub, spec={"numberOfClusters": 2})
    crp = crp_on(hub)

    with CaptureQueriesContext(connection) as queries:
        service.evaluate(ocm, now=later)
    assert agent_reads(queries) == 0
    assert service.hub_snapshot(hub, later, heartbeats=False) is snapshot

    with CaptureQueriesContext(connection) as queries:
        service.evaluate(crp, now=later)
    assert agent_reads(queries) == 1
    assert service.hub_snapshot(hub, later, heartbeats=False) is not snapshot


def test_an_ocm_reschedule_reads_no_heartbeats(stale_hub: tuple[Hub, service.HubSnapshot]) -> None:
    hub, snapshot = stale_hub
    later = snapshot.fresh_until + timedelta(minutes=1)  # type: ignore[operator]
    ocm = PlacementFactory(hub=hub, spec={"numberOfClusters": 2})

    with CaptureQueriesContext(connection) as queries:
        service.reschedule(ocm, trigger="test", now=later)
    assert agent_reads(queries) == 0
    ocm.refresh_from_db()
    assert ocm.last_scheduled_at == later


def test_a_chunk_reads_the_heartbeats_again_only_with_a_fleet_placement(
    stale_hub: tuple[Hub, service.HubSnapshot],
) -> None:
    hub, snapshot = stale_hub
    later = snapshot.fresh_until + timedelta(minutes=1)  # type: ignore[operator]
    ocm: list[Placement] = [PlacementFactory(hub=hub, spec={"numberOfClusters": 2}) for _ in range(2)]

    def chunk(placements: list[Placement]) -> int:
        with CaptureQueriesContext(connection) as queries:
            service.reschedule_together(
                hub, placements, trigger="test", seen=service.read_stored(placements), now=later
            )
        return agent_reads(queries)

    assert chunk(ocm) == 0
    assert chunk([*ocm, crp_on(hub)]) == 1
