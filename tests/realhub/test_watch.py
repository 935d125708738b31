"""The dashboard's watch (`inventory.watch.HubWatcher`) following the real hub: it resumes from the
resourceVersion the sync stored (events made since are replayed), live writes reach the rows, the
apiserver's bookmarks advance the version a lost watch resumes from, and after etcd is compacted (410
Gone) it re-lists and the rows are right again.

The watch runs in the test's thread (SQLite's shared in-memory test database does not take writes from
two threads), until a change listener sees the rows it waits for; the hub is written as its admin.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import kubernetes
import pytest

from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub, ManagedCluster, SyncRun
from inventory.signals import hub_changed
from inventory.sync import sync_hub
from inventory.watch import HubWatcher
from tests.realhub import objects
from tests.realhub.conftest import managed_cluster
from tests.realhub.hub import RealHub

pytestmark = [pytest.mark.realhub, pytest.mark.django_db]

CLUSTERS = KINDS_BY_NAME["ManagedCluster"]
# the server ends each watch after this; its bookmark comes about 2 s before
WATCH_SECONDS = 5
GIVE_UP_SECONDS = 40


@pytest.fixture
def synced(empty_hub: RealHub, hub_client: kubernetes.client.ApiClient, registered_hub: Hub) -> Iterator[Hub]:
    """Clusters c-0 to c-3 on the hub, synced (the resourceVersions stored), nothing watching yet."""
    for index in range(4):
        objects.create(hub_client, managed_cluster(f"c-{index}"))
    sync_hub(registered_hub, trigger=SyncRun.Trigger.COMMAND)
    registered_hub.refresh_from_db()
    yield registered_hub


def cluster_rows(hub: Hub) -> dict[str, dict[str, str]]:
    return dict(ManagedCluster.objects.filter(hub=hub, kind="ManagedCluster").values_list("name", "labels"))


def hub_clusters(client: kubernetes.client.ApiClient) -> dict[str, dict[str, str]]:
    listed = kubernetes.client.CustomObjectsApi(client).list_cluster_custom_object(
        CLUSTERS.group, CLUSTERS.version, CLUSTERS.plural
    )
    return {item["metadata"]["name"]: item["metadata"].get("labels") or {} for item in listed["items"]}


def watch_clusters(hub: Hub, done: Callable[[], bool], *, stop_after: float = GIVE_UP_SECONDS) -> HubWatcher:
    """Watch ManagedClusters in this thread until the rows satisfy `done` (checked after every write of
    the watch) or `stop_after` seconds passed; answers the watcher."""
    stop = threading.Event()
    timer = threading.Timer(stop_after, stop.set)

    def listener(**_: object) -> None:
        if done():
            stop.set()

    hub_changed.connect(listener)
    timer.start()
    try:
        watcher = HubWatcher(hub, stop, timeout_seconds=WATCH_SECONDS)
        watcher.run_kind(CLUSTERS)
    finally:
        timer.cancel()
        hub_changed.disconnect(listener)
    return watcher


def test_the_watch_resumes_from_the_synced_version_and_follows_live_writes(
    synced: Hub, hub_client: kubernetes.client.ApiClient
) -> None:
    # made after the sync's list, before any watch: the watch replays them from the stored version
    objects.create(hub_client, managed_cluster("c-added"))
    objects.patch(hub_client, "ManagedCluster", "c-0", {"metadata": {"labels": {"tier": "gold"}}})
    objects.delete(hub_client, "ManagedCluster", "c-1")
    # made while the watch runs
    live = threading.Timer(1.0, lambda: objects.create(hub_client, managed_cluster("c-live")))
    live.start()

    watcher = watch_clusters(synced, lambda: "c-live" in cluster_rows(synced))

    live.join()
    assert cluster_rows(synced) == hub_clusters(hub_client)
    assert cluster_rows(synced)["c-0"]["tier"] == "gold" and "c-1" not in cluster_rows(synced)
    # resumed, not re-listed
    assert not SyncRun.objects.filter(hub=synced, trigger=SyncRun.Trigger.WATCH_RELIST).exists()
    assert int(watcher.versions[CLUSTERS.name]) > int(synced.resource_versions[CLUSTERS.name])


def test_a_bookmark_advances_the_version_the_watch_resumes_from(
    synced: Hub, hub_client: kubernetes.client.ApiClient, real_hub: RealHub
) -> None:
    listed = int(synced.resource_versions[CLUSTERS.name])
    # a write of another kind: no ManagedCluster event, yet the hub's resourceVersion moves past the list
    moved = int(objects.create(hub_client, objects.cluster_set("elsewhere"))["metadata"]["resourceVersion"])
    assert moved > listed
    # ManagedClusters' watch cache learns of etcd's later revisions when a consistent list waits for it
    # (apiserver storage/cacher: waitUntilFreshAndBlock asks etcd for progress), as any client's list
    # does; its bookmarks carry its revision
    assert "elsewhere" not in hub_clusters(hub_client)

    # stopped after the bookmark the apiserver sends about 2 s before the watch's timeout
    watcher = watch_clusters(synced, lambda: False, stop_after=WATCH_SECONDS - 1)

    assert int(watcher.versions[CLUSTERS.name]) >= moved, (listed, moved, real_hub.etcd_revision())
    assert cluster_rows(synced) == hub_clusters(hub_client)


def test_after_compaction_the_watch_relists_and_the_rows_are_right_again(
    synced: Hub, hub_client: kubernetes.client.ApiClient, empty_hub: RealHub
) -> None:
    objects.create(hub_client, managed_cluster("c-added"))
    objects.patch(hub_client, "ManagedCluster", "c-2", {"metadata": {"labels": {"tier": "gold"}}})
    objects.delete(hub_client, "ManagedCluster", "c-3")
    # the stored versions are now older than anything the restarted apiserver can serve: 410 Gone
    compacted = empty_hub.compact()
    assert compacted > int(synced.resource_versions[CLUSTERS.name])

    watch_clusters(synced, lambda: "c-added" in cluster_rows(synced))

    relist = SyncRun.objects.get(hub=synced, trigger=SyncRun.Trigger.WATCH_RELIST)
    assert relist.state == SyncRun.State.SUCCEEDED
    assert relist.kinds[CLUSTERS.name]["removed"] == 1
    assert cluster_rows(synced) == hub_clusters(hub_client)
    assert cluster_rows(synced)["c-2"]["tier"] == "gold"
    synced.refresh_from_db()
    assert int(synced.resource_versions[CLUSTERS.name]) >= compacted
