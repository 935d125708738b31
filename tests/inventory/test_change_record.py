"""The change record of a sync that adds rows keeps them by identity, not as instances: an initial sync
adds every object of the hub, and holding each row would hold every object listed until it ends. The
identities are there without a query; the rows are read back from the database when a receiver asks."""

from typing import Any

import pytest

from demohub import DemoHub
from inventory import changes
from inventory.models import ManagedCluster
from inventory.sync import sync_hub
from tests.factories import DemoHubRowFactory, HubFactory, ManagedClusterFactory

pytestmark = pytest.mark.django_db


def test_added_rows_are_named_without_a_query_and_read_back_when_asked(
    demo_hub: DemoHub, heard: list[changes.HubChanges], django_assert_num_queries
) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    sync_hub(hub, trigger="command")

    (hub_changes,) = heard
    with django_assert_num_queries(0):
        identities = {change.identity for change in hub_changes.clusters}
        assert all(change.created and not change.deleted for change in hub_changes.clusters)
    stored = ManagedCluster.objects.filter(hub=hub, kind=ManagedCluster.Kind.MANAGED_CLUSTER)
    assert identities == {("ManagedCluster", "", name) for name in stored.values_list("name", flat=True)}
    assert {change.identity[0] for change in hub_changes.member_clusters} == {"MemberCluster"}
    assert {change.identity[1] for change in hub_changes.add_on_scores} == {c.name for c in stored}


def test_added_rows_are_read_back_a_chunk_at_a_time(monkeypatch, django_assert_num_queries) -> None:
    hub = HubFactory()
    clusters = ManagedClusterFactory.create_batch(5, hub=hub)
    monkeypatch.setattr(changes._Reader, "CHUNK", 2)
    log = changes.ChangeLog()
    log.record_added(ManagedCluster, [_values(cluster) for cluster in clusters], [c.pk for c in clusters])
    assert log.rows == []  # held by pk and identity only

    hub_changes = changes.build(hub, log)

    # one query per chunk of two when walked once, as the receivers walk a change
    with django_assert_num_queries(3):
        read = [(change.rows, change.new.labels) for change in hub_changes.clusters]
    assert [(old, new.pk) for (old, new), _ in read] == [(None, cluster.pk) for cluster in clusters]
    labels = [labels for _, labels in read]
    assert labels == [cluster.labels for cluster in clusters]


def test_an_added_row_deleted_before_it_is_read_reads_as_gone() -> None:
    hub = HubFactory()
    kept, gone = ManagedClusterFactory.create_batch(2, hub=hub)
    log = changes.ChangeLog()
    log.record_added(ManagedCluster, [_values(kept), _values(gone)], [kept.pk, gone.pk])
    hub_changes = changes.build(hub, log)
    gone.delete()

    first, second = hub_changes.clusters
    assert first.rows == (None, kept) and second.rows == (None, None) and second.new is None
    assert second.identity == ("ManagedCluster", "", gone.name)


def _values(cluster: ManagedCluster) -> dict[str, Any]:
    return {"hub": cluster.hub, "kind": cluster.kind, "name": cluster.name, "labels": cluster.labels}
