"""The dashboard's sync against the real hub: paged lists (`limit`/`continue`) of every kind, as the
least-privilege ServiceAccount, leave exactly the hub's objects in the database; a sync with nothing
changed on the hub writes nothing; a change and a deletion on the hub reach the rows."""

from __future__ import annotations

import math

import kubernetes
import pytest

from inventory.hubclient import served_kinds
from inventory.models import Hub, ManagedCluster, SyncRun
from inventory.sync import sync_hub
from tests.realhub import objects
from tests.realhub.hub import RealHub

pytestmark = [pytest.mark.realhub, pytest.mark.django_db]

CLUSTERS = 30
# small enough that every kind with more objects than this takes several pages
PAGE_LIMIT = 7


def test_paged_sync_mirrors_exactly_the_hubs_objects_and_a_second_sync_writes_nothing(
    empty_hub: RealHub, hub_client: kubernetes.client.ApiClient, registered_hub: Hub
) -> None:
    seeded = {
        kind: len(created) for kind, created in objects.seed_fleet(hub_client, CLUSTERS, seed=7).items()
    }
    assert seeded["ManagedCluster"] == seeded["MemberCluster"] == CLUSTERS

    first = sync_hub(registered_hub, trigger=SyncRun.Trigger.COMMAND, page_limit=PAGE_LIMIT)

    on_hub = objects.hub_objects(hub_client)
    assert first.state == SyncRun.State.SUCCEEDED, first.error
    assert objects.dashboard_objects(registered_hub) == on_hub
    assert {kind: len(names) for kind, names in on_hub.items() if names} == seeded
    # every page of every kind was asked for: the apiserver answers `limit` objects and a continue
    # token while more remain
    assert first.pages == sum(max(1, math.ceil(len(names) / PAGE_LIMIT)) for names in on_hub.values())
    assert first.pages > len(served_kinds(registered_hub))
    assert first.added == sum(seeded.values()) and first.updated == first.removed == 0
    registered_hub.refresh_from_db()
    # where the watches resume: etcd revisions, one per kind
    assert set(registered_hub.resource_versions) == {kind.name for kind in served_kinds(registered_hub)}
    assert all(
        int(version) <= empty_hub.etcd_revision() for version in registered_hub.resource_versions.values()
    )
    synced_at = dict(ManagedCluster.objects.filter(hub=registered_hub).values_list("pk", "synced_at"))

    second = sync_hub(registered_hub, trigger=SyncRun.Trigger.COMMAND, page_limit=PAGE_LIMIT)

    assert second.state == SyncRun.State.SUCCEEDED
    assert (second.added, second.updated, second.removed, second.pages) == (0, 0, 0, first.pages)
    # unchanged rows are compared, not rewritten
    assert dict(ManagedCluster.objects.filter(hub=registered_hub).values_list("pk", "synced_at")) == synced_at

    cluster = sorted(name for _, name in on_hub["ManagedCluster"])[0]
    objects.patch(hub_client, "ManagedCluster", cluster, {"metadata": {"labels": {"tier": "gold"}}})
    score = sorted(on_hub["AddOnPlacementScore"])[0]
    objects.delete(hub_client, "AddOnPlacementScore", score[1], score[0])

    third = sync_hub(registered_hub, trigger=SyncRun.Trigger.COMMAND, page_limit=PAGE_LIMIT)

    assert (third.added, third.updated, third.removed) == (0, 1, 1)
    assert objects.dashboard_objects(registered_hub) == objects.hub_objects(hub_client)
    row = ManagedCluster.objects.get(hub=registered_hub, kind="ManagedCluster", name=cluster)
    assert row.labels["tier"] == "gold"
