"""Sync faults against the demo hub: failures delete nothing and mark stale; recovery; 410 re-list."""

import pytest

from demohub import DemoHub
from inventory.hubclient import HubError, TransientHubError
from inventory.models import Hub, ManagedCluster, SyncRun
from inventory.sync import SyncFailed, sync_hub
from tests.factories import synced_demo_hub_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(demo_hub)


def test_a_500_mid_list_deletes_nothing_and_marks_stale(demo_hub: DemoHub, hub: Hub) -> None:
    good_sync = Hub.objects.get(pk=hub.pk).last_good_sync_at
    gone = demo_hub.store.names("ManagedCluster")[-1]
    demo_hub.store.delete("ManagedCluster", gone)
    clusters_before = ManagedCluster.objects.count()

    # the request after the third page fails (a sync's requests are its pages, in order)
    demo_hub.fail_next(1, 500, after=3)
    with pytest.raises(SyncFailed) as failure:
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5)

    assert isinstance(failure.value.cause, TransientHubError)
    run = failure.value.sync_run
    assert run.state == SyncRun.State.FAILED and "HTTP 500" in run.error and run.finished_at
    assert run.pages == 3
    assert ManagedCluster.objects.count() == clusters_before
    assert ManagedCluster.objects.filter(name=gone, kind="ManagedCluster").exists()
    assert not ManagedCluster.objects.filter(stale=False).exists()
    hub.refresh_from_db()
    assert hub.state == "failing" and "HTTP 500" in hub.last_sync_error
    assert hub.last_good_sync_at == good_sync

    recovered = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5)

    assert recovered.state == SyncRun.State.SUCCEEDED
    assert not ManagedCluster.objects.filter(stale=True).exists()
    assert not ManagedCluster.objects.filter(name=gone, kind="ManagedCluster").exists()
    hub.refresh_from_db()
    assert hub.state == "ok" and hub.last_good_sync_at > good_sync


def test_an_expired_continue_token_lists_that_kind_again(demo_hub: DemoHub, hub: Hub) -> None:
    assert demo_hub.seeded["ManagedClusterSet"] > 5
    # the second page's continue token is answered 410 Expired, as after the hub compacted its history
    demo_hub.fail_next(1, 410, after=1)

    run = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5)

    assert run.state == SyncRun.State.SUCCEEDED
    # the first page was stored twice: before the 410 and when the kind was listed again
    assert run.pages == sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5).pages + 1
    assert run.kinds["ManagedClusterSet"]["listed"] == demo_hub.seeded["ManagedClusterSet"]
    assert ManagedCluster.objects.filter(kind="ManagedCluster").count() == demo_hub.seeded["ManagedCluster"]


def test_a_refused_continue_token_fails_the_sync_and_the_next_lists_from_the_start(
    demo_hub: DemoHub, hub: Hub
) -> None:
    # kube-apiserver answers a continue token it cannot read 400, not 410: client-go's pager lists
    # afresh only after 410 Expired, and its reflector fails the list and starts over later; so does
    # the sync, instead of taking the 400 for an expiry and listing again at once
    demo_hub.fail_next(1, 400, after=1)
    with pytest.raises(SyncFailed) as failure:
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5)

    cause = failure.value.cause
    assert type(cause) is HubError and cause.status == 400
    assert failure.value.sync_run.pages == 1
    recovered = sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC, page_limit=5)
    assert recovered.state == SyncRun.State.SUCCEEDED
    assert ManagedCluster.objects.filter(kind="ManagedCluster").count() == demo_hub.seeded["ManagedCluster"]


@pytest.mark.parametrize(
    ("status", "transient"), [(401, False), (403, False), (404, False), (429, True), (503, True)]
)
def test_errors_are_classified(demo_hub: DemoHub, hub: Hub, status: int, transient: bool) -> None:
    demo_hub.fail_next(1, status)

    with pytest.raises(SyncFailed) as failure:
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)

    assert isinstance(failure.value.cause, HubError)
    assert isinstance(failure.value.cause, TransientHubError) is transient
    assert f"HTTP {status}" in failure.value.sync_run.error


def test_a_slow_hub_times_out_as_transient(settings, hub: Hub) -> None:
    settings.HUB_REQUEST_TIMEOUT = 0.3
    with DemoHub(clusters=2, latency_ms=1500) as slow:
        hub.server_url = slow.url
        with pytest.raises(SyncFailed) as failure:
            sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)
    assert isinstance(failure.value.cause, TransientHubError)
    assert "Timeout" in failure.value.sync_run.error
    assert ManagedCluster.objects.filter(stale=True).count() == ManagedCluster.objects.count() > 0


def test_an_unreachable_hub_is_transient_and_deletes_nothing(hub: Hub) -> None:
    hub.server_url = "http://127.0.0.1:9"  # discard port: connection refused
    count = ManagedCluster.objects.count()
    with pytest.raises(SyncFailed) as failure:
        sync_hub(hub, trigger=SyncRun.Trigger.PERIODIC)
    assert isinstance(failure.value.cause, TransientHubError)
    assert ManagedCluster.objects.count() == count
