"""`inventory.watch`: events from the demo hub reach the database within 2 s; 410 re-lists; reconnects.

The watch runs in the test's thread (SQLite's shared in-memory test database does not take writes
from two threads); the demo hub is changed from a timer thread, and a change listener ends the watch.
"""

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from demohub import DemoHub
from inventory import changes
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import ClusterSetMembership, Hub, ManagedCluster, SyncRun
from inventory.signals import hub_changed
from inventory.watch import HubWatcher
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db
CLUSTERS = KINDS_BY_NAME["ManagedCluster"]
SET_LABEL = "cluster.open-cluster-management.io/clusterset"


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    safety = threading.Timer(15, event.set)  # a watch that never sees its event fails, not hangs
    safety.start()
    yield event
    safety.cancel()


def watch_until(hub: Hub, stop: threading.Event, done: Callable[[changes.HubChanges], bool]) -> None:
    """Watch ManagedClusters in this thread until a change listener says `done`."""

    def listener(hub_changes: changes.HubChanges, **_: object) -> None:
        if done(hub_changes):
            stop.set()

    hub_changed.connect(listener)
    try:
        HubWatcher(hub, stop, timeout_seconds=5).run_kind(CLUSTERS)
    finally:
        hub_changed.disconnect(listener)


def later(seconds: float, action: Callable[[], object]) -> None:
    threading.Timer(seconds, action).start()


def labelled(name: str, key: str, value: str) -> Callable[[changes.HubChanges], bool]:
    return lambda c: any(
        ch.new and ch.new.name == name and ch.new.labels.get(key) == value for ch in c.clusters
    )


def test_a_label_change_reaches_the_database_within_2_seconds(demo_hub: DemoHub, hub: Hub, stop) -> None:
    name = demo_hub.store.names("ManagedCluster")[0]
    changed_at: list[float] = []

    def change() -> None:
        changed_at.append(time.monotonic())
        demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "gold"}}})

    later(0.5, change)
    watch_until(hub, stop, labelled(name, "tier", "gold"))

    applied = time.monotonic() - changed_at[0]
    assert ManagedCluster.objects.get(kind="ManagedCluster", name=name).labels["tier"] == "gold"
    assert applied <= 2.0, f"applied {applied:.2f}s after the change"


def test_added_and_deleted_clusters_and_their_memberships(demo_hub: DemoHub, hub: Hub, stop) -> None:
    template = demo_hub.store.get("ManagedCluster", demo_hub.store.names("ManagedCluster")[0])
    set_name = template["metadata"]["labels"][SET_LABEL]
    new = {
        "apiVersion": template["apiVersion"],
        "kind": "ManagedCluster",
        "metadata": {"name": "brand-new", "labels": {SET_LABEL: set_name}},
        "spec": {},
    }
    later(0.3, lambda: demo_hub.store.create(new))
    watch_until(hub, stop, lambda c: any(ch.new and ch.new.name == "brand-new" for ch in c.clusters))
    cluster = ManagedCluster.objects.get(kind="ManagedCluster", name="brand-new")
    assert set(cluster.memberships.values_list("cluster_set__name", flat=True)) >= {set_name}

    stop.clear()
    later(0.3, lambda: demo_hub.store.delete("ManagedCluster", "brand-new"))
    watch_until(
        hub, stop, lambda c: any(ch.old and ch.old.name == "brand-new" and not ch.new for ch in c.clusters)
    )
    assert not ManagedCluster.objects.filter(name="brand-new").exists()
    assert not ClusterSetMembership.objects.filter(cluster__name="brand-new").exists()


def test_410_gone_re_lists_and_resumes(demo_hub: DemoHub, hub: Hub, stop) -> None:
    name = demo_hub.store.names("ManagedCluster")[1]

    def outage() -> None:
        # the connection drops, the hub moves on and forgets old versions while the watcher backs off
        demo_hub.drop_watches()
        demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "silver"}}})
        demo_hub.compact()

    later(0.5, outage)
    watch_until(hub, stop, labelled(name, "tier", "silver"))

    relist = SyncRun.objects.get(trigger=SyncRun.Trigger.WATCH_RELIST)
    assert relist.state == SyncRun.State.SUCCEEDED
    assert ManagedCluster.objects.get(kind="ManagedCluster", name=name).labels["tier"] == "silver"

    # and the watch resumed from the re-list: a later change arrives as an event again
    stop.clear()
    later(
        0.3, lambda: demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "gold"}}})
    )
    watch_until(hub, stop, labelled(name, "tier", "gold"))
    assert SyncRun.objects.filter(trigger=SyncRun.Trigger.WATCH_RELIST).count() == 1


def test_a_dropped_watch_reconnects(demo_hub: DemoHub, hub: Hub, stop) -> None:
    name = demo_hub.store.names("ManagedCluster")[2]

    def drop_then_change() -> None:
        demo_hub.drop_watches()
        demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "bronze"}}})

    later(0.5, drop_then_change)
    watch_until(hub, stop, labelled(name, "tier", "bronze"))

    assert ManagedCluster.objects.get(kind="ManagedCluster", name=name).labels["tier"] == "bronze"
    assert not SyncRun.objects.filter(trigger=SyncRun.Trigger.WATCH_RELIST).exists()
