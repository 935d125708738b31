"""A member's heartbeat is told from its stored row's digest and heartbeat fields alone
(`relevance.DIGEST_FIELD`): stored as noise without reading the row's other columns, while any other
change, or a row stored without a digest, is compared field by field as before."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from demohub import Clock, DemoHub
from inventory import relevance
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub, ManagedCluster
from inventory.objects import UNCOMPARED, member_cluster_row
from inventory.sync import apply_events
from placement.scheduler.documents import Document
from tests.factories import synced_demo_hub_row

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]
MEMBER = KINDS_BY_NAME["MemberCluster"]


@pytest.fixture
def demo_hub() -> Iterator[DemoHub]:
    with DemoHub(clusters=3, fleet=True, seed=3, clock=Clock.frozen(timezone.now())) as hub:
        yield hub


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def beaten(demo_hub: DemoHub) -> list[dict[str, Any]]:
    """Every member as the hub holds it after one heartbeat of each."""
    demo_hub.clock.advance(30)
    assert demo_hub.churn.beat() == len(demo_hub.store.names("MemberCluster"))
    return [demo_hub.store.get("MemberCluster", name) for name in demo_hub.store.names("MemberCluster")]


def row(hub: Hub, name: str) -> ManagedCluster:
    return ManagedCluster.objects.get(hub=hub, kind=ManagedCluster.Kind.MEMBER_CLUSTER, name=name)


def member_reads(queries: CaptureQueriesContext) -> list[str]:
    return [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith('SELECT "inventory_managedcluster"')
    ]


def test_the_sync_stores_the_digest_of_the_rows_fields(demo_hub: DemoHub, hub: Hub) -> None:
    for name in demo_hub.store.names("MemberCluster"):
        built = member_cluster_row(Document("hub", 1, demo_hub.store.get("MemberCluster", name)))
        assert row(hub, name).fields_digest == relevance.fields_digest(built.values, UNCOMPARED)
        assert len(row(hub, name).fields_digest) == 32


def test_heartbeats_are_stored_from_one_narrow_read(demo_hub: DemoHub, hub: Hub) -> None:
    members = beaten(demo_hub)
    digests = {m.name: m.fields_digest for m in ManagedCluster.objects.filter(hub=hub, kind="MemberCluster")}

    with CaptureQueriesContext(connection) as queries:
        apply_events(hub, MEMBER, [("MODIFIED", member) for member in members])

    (read,) = member_reads(queries)
    assert '"labels"' not in read and '"properties"' not in read and '"fields_digest"' in read
    for member in members:
        stored = row(hub, member["metadata"]["name"])
        assert stored.agent_status == member["status"]["agentStatus"]
        assert stored.resource_version == member["metadata"]["resourceVersion"]
        assert stored.fields_digest == digests[stored.name]


def test_a_heartbeat_with_another_change_is_compared_field_by_field(demo_hub: DemoHub, hub: Hub) -> None:
    member = beaten(demo_hub)[0]
    member["metadata"]["labels"]["tier"] = "gold"
    name = member["metadata"]["name"]
    digest = row(hub, name).fields_digest

    with CaptureQueriesContext(connection) as queries:
        changed = apply_events(hub, MEMBER, [("MODIFIED", member)])

    narrow, full = member_reads(queries)[:2]
    assert changed and '"labels"' not in narrow and '"labels"' in full
    stored = row(hub, name)
    assert stored.labels["tier"] == "gold" and stored.fields_digest != digest
    assert stored.agent_status == member["status"]["agentStatus"]


def test_a_row_without_a_digest_is_compared_and_gets_one(demo_hub: DemoHub, hub: Hub) -> None:
    """Rows stored before the digest existed hold "": their next heartbeat is judged field by field."""
    ManagedCluster.objects.filter(hub=hub).update(fields_digest="")
    members = beaten(demo_hub)

    apply_events(hub, MEMBER, [("MODIFIED", member) for member in members])

    for member in members:
        stored = row(hub, member["metadata"]["name"])
        assert stored.agent_status == member["status"]["agentStatus"]
        assert len(stored.fields_digest) == 32


def test_a_moved_digest_beside_a_heartbeat_is_not_taken_for_one(demo_hub: DemoHub, hub: Hub) -> None:
    """A row whose other fields were written meanwhile (here: its labels changed under the same digest)
    is told by its digest only; a digest that moved sends the heartbeat down the full comparison, which
    writes the hub's fields back."""
    member = beaten(demo_hub)[0]
    name = member["metadata"]["name"]
    ManagedCluster.objects.filter(pk=row(hub, name).pk).update(
        labels={"forged": "yes"}, fields_digest="x" * 32
    )

    apply_events(hub, MEMBER, [("MODIFIED", member)])

    stored = row(hub, name)
    assert stored.labels == member["metadata"]["labels"]
    assert stored.fields_digest == row(hub, name).fields_digest != "x" * 32
