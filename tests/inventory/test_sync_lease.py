"""A SyncRun whose worker died: found by the next sync of its hub and by the periodic check, marked
failed with the time of its last heartbeat, and the hub is synced again."""

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from demohub import DemoHub
from inventory.models import Hub, ManagedCluster, SyncRun
from inventory.sync import sync_hub
from inventory.tasks import LOCK_TTL, run_locked_sync, sync_due_hubs
from tests.factories import DemoHubRowFactory, HubFactory, ManagedClusterFactory, SyncRunFactory

pytestmark = pytest.mark.django_db


def lost_run(hub: Hub, silent_for: timedelta) -> SyncRun:
    """A run left "running" by a worker that died, holding the hub's lock when it did."""
    heartbeat = timezone.now() - silent_for
    Hub.objects.filter(pk=hub.pk).update(sync_lock_until=heartbeat + LOCK_TTL, sync_lock_owner="dead-worker")
    return SyncRunFactory(
        hub=hub,
        state=SyncRun.State.RUNNING,
        started_at=heartbeat - timedelta(seconds=5),
        heartbeat_at=heartbeat,
    )


def worker_lost(run: SyncRun) -> str:
    return f"worker lost: no heartbeat since {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"


def test_the_next_sync_marks_the_lost_run_failed_and_proceeds(demo_hub: DemoHub) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    dead = lost_run(hub, silent_for=LOCK_TTL + timedelta(seconds=1))

    run = run_locked_sync(hub.pk, SyncRun.Trigger.MANUAL)

    dead.refresh_from_db()
    assert dead.state == SyncRun.State.FAILED
    assert dead.error == worker_lost(dead)
    assert dead.finished_at is not None
    assert run is not None and run.state == SyncRun.State.SUCCEEDED
    assert (
        ManagedCluster.objects.filter(hub=hub, kind="ManagedCluster").count()
        == demo_hub.seeded["ManagedCluster"]
    )


def test_a_sync_finds_the_lock_of_a_live_run_and_leaves_it_running(demo_hub: DemoHub) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    live = lost_run(hub, silent_for=timedelta(seconds=1))

    assert run_locked_sync(hub.pk, SyncRun.Trigger.MANUAL) is None

    live.refresh_from_db()
    assert live.state == SyncRun.State.RUNNING and live.error == ""


def test_the_periodic_check_fails_silent_runs_only(demo_hub: DemoHub, tasks_in_process: None) -> None:
    dead_hub = DemoHubRowFactory(name="dead", server_url=demo_hub.url)
    dead = lost_run(dead_hub, silent_for=LOCK_TTL + timedelta(seconds=1))
    live_hub = DemoHubRowFactory(name="live", server_url=demo_hub.url)
    live = lost_run(live_hub, silent_for=timedelta(seconds=1))

    enqueued = sync_due_hubs()

    dead.refresh_from_db()
    live.refresh_from_db()
    assert dead.state == SyncRun.State.FAILED and dead.error == worker_lost(dead)
    assert live.state == SyncRun.State.RUNNING
    # the live run's hub is still locked: only the hub of the lost run was synced again (in-process here)
    assert enqueued == [dead_hub.pk]
    latest = SyncRun.objects.filter(hub=dead_hub).first()
    assert latest is not None and latest.state == SyncRun.State.SUCCEEDED


def test_a_lost_run_shows_on_its_hub_as_a_failed_sync(tasks_in_process: None) -> None:
    hub = HubFactory(last_synced_at=timezone.now(), sync_interval_seconds=3600)  # not due for an hour
    cluster = ManagedClusterFactory(hub=hub)
    dead = lost_run(hub, silent_for=LOCK_TTL + timedelta(seconds=1))

    assert sync_due_hubs() == []

    hub.refresh_from_db()
    cluster.refresh_from_db()
    assert hub.last_sync_error == worker_lost(dead) and hub.state == "failing"
    assert cluster.stale


def test_every_page_renews_the_heartbeat(demo_hub: DemoHub) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    beats: list[datetime] = []

    def heartbeat() -> None:
        beats.append(SyncRun.objects.get().heartbeat_at)

    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND, page_limit=5, heartbeat=heartbeat)

    assert len(beats) == run.pages > 1
    assert beats == sorted(beats) and run.started_at < beats[0] < beats[-1]
