"""A kind the hub refuses to list (403, 404) fails the sync with that kind's reason; the other kinds sync,
and the refused kind's watch waits for a sync that lists it rather than re-listing the hub.

The demo hub answers the list of one kind with the refusal; the real hub's RBAC refusal is in
tests/realhub/test_rbac.py.
"""

import threading
from collections.abc import Callable

import pytest
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.hubclient import KINDS_BY_NAME, HubError, TransientHubError
from inventory.models import Hub, ManagedCluster, ManagedClusterSet, SyncRun
from inventory.sync import SyncFailed, sync_hub
from inventory.watch import HubWatcher
from tests.factories import UserFactory, synced_demo_hub_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def refuse_second_kind(demo_hub: DemoHub, status: int) -> Callable[[], None]:
    """A heartbeat that makes the request after the first page (the list of the second kind, every kind
    fitting in one page) answer `status`."""
    pages = iter(range(1, 10_000))

    def heartbeat() -> None:
        if next(pages) == 1:
            demo_hub.fail_next(1, status)

    return heartbeat


@pytest.mark.parametrize("status", [403, 404])
def test_the_refused_kind_is_named_and_the_other_kinds_sync(demo_hub: DemoHub, hub: Hub, status: int) -> None:
    gone_set = demo_hub.store.names("ManagedClusterSet")[-1]
    gone_cluster = demo_hub.store.names("ManagedCluster")[-1]
    demo_hub.store.delete("ManagedClusterSet", gone_set)
    demo_hub.store.delete("ManagedCluster", gone_cluster)
    versions = dict(Hub.objects.get(pk=hub.pk).resource_versions)

    with pytest.raises(SyncFailed) as failure:
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, heartbeat=refuse_second_kind(demo_hub, status))

    cause = failure.value.cause
    assert isinstance(cause, HubError) and not isinstance(cause, TransientHubError)
    run = failure.value.sync_run
    assert run.state == SyncRun.State.FAILED
    assert [kind for kind, _ in run.kind_errors] == ["ManagedCluster"]
    assert f"list managedclusters: HTTP {status}" in run.kind_errors[0][1]
    assert run.error.startswith("ManagedCluster not listed: ")
    assert run.error.endswith(f"({len(run.kinds) - 1} other kinds synced)")
    assert all(counts["done"] for kind, counts in run.kinds.items() if kind != "ManagedCluster")
    # the set list completed, so the deleted set is gone; the refused clusters are kept, stale
    assert not ManagedClusterSet.objects.filter(hub=hub, name=gone_set).exists()
    assert ManagedCluster.objects.filter(hub=hub, name=gone_cluster, stale=True).exists()
    clusters = ManagedCluster.objects.filter(hub=hub)
    assert not clusters.filter(kind="ManagedCluster", stale=False).exists()
    assert not clusters.filter(kind="MemberCluster", stale=True).exists()
    hub.refresh_from_db()
    assert hub.state == "failing" and hub.last_sync_error == run.error
    # watches resume the listed kinds from this sync; the refused kind has nothing to resume from
    assert "ManagedCluster" not in hub.resource_versions
    assert int(hub.resource_versions["ManagedClusterSet"]) > int(versions["ManagedClusterSet"])


def test_the_hub_page_shows_each_refused_kind(demo_hub: DemoHub, hub: Hub, client: Client) -> None:
    with pytest.raises(SyncFailed):
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, heartbeat=refuse_second_kind(demo_hub, 403))
    client.force_login(UserFactory(username="ops", is_superuser=True))

    html = client.get(reverse("inventory:hub-detail", args=[hub.pk])).content.decode()

    assert 'id="kind-error-ManagedCluster"' in html
    assert "<strong>ManagedCluster</strong> not listed: hub demo: list managedclusters: HTTP 403" in html

    recovered = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    assert recovered.state == SyncRun.State.SUCCEEDED and recovered.kind_errors == []
    assert not ManagedCluster.objects.filter(hub=hub, stale=True).exists()


def test_the_refused_kinds_watch_waits_for_a_sync_that_lists_it(demo_hub: DemoHub, hub: Hub) -> None:
    with pytest.raises(SyncFailed):
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, heartbeat=refuse_second_kind(demo_hub, 403))
    stop = threading.Event()
    threading.Timer(2, stop.set).start()

    HubWatcher(hub, stop, timeout_seconds=5).run_kind(KINDS_BY_NAME["ManagedCluster"])

    assert not SyncRun.objects.filter(hub=hub, trigger=SyncRun.Trigger.WATCH_RELIST).exists()
