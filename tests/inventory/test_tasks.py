"""inventory.tasks: the per-hub lock, the periodic enqueue, "Sync now", and no retries for HubError."""

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from demohub import DemoHub
from inventory.models import Hub, SyncRun
from inventory.tasks import hub_lock, request_sync, run_locked_sync, sync_due_hubs, sync_hub
from tests.factories import DemoHubRowFactory, HubFactory


@pytest.fixture
def in_process_celery() -> Iterator[None]:
    """Tasks run in this process even when CI configures a broker (as `make run` runs them)."""
    conf = sync_hub.app.conf
    saved = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager, conf.task_eager_propagates = True, True
    yield
    conf.task_always_eager, conf.task_eager_propagates = saved


@pytest.fixture
def hub(db: None, demo_hub: DemoHub) -> Hub:
    return DemoHubRowFactory(name="demo", server_url=demo_hub.url)


def test_a_second_run_while_one_holds_the_lock_is_skipped(hub: Hub) -> None:
    with hub_lock(hub.pk) as refresh:
        assert refresh is not None
        assert sync_hub.apply(args=[hub.pk]).get() == {"state": "skipped", "sync_run": None}
    assert sync_hub.apply(args=[hub.pk]).get()["state"] == SyncRun.State.SUCCEEDED
    assert Hub.objects.get(pk=hub.pk).sync_lock_owner == ""


def test_a_lock_left_by_a_dead_worker_expires(hub: Hub) -> None:
    Hub.objects.filter(pk=hub.pk).update(
        sync_lock_until=timezone.now() - timedelta(seconds=1), sync_lock_owner="dead-worker"
    )
    assert run_locked_sync(hub.pk, SyncRun.Trigger.PERIODIC).state == SyncRun.State.SUCCEEDED


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_one_is_skipped(database_url: str, demo_hub: DemoHub) -> None:
    """Real concurrency needs a server database: SQLite's shared in-memory test database locks tables."""
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    demo_hub.faults.latency_ms = 20  # keeps the first run inside its lock while the second starts
    start = threading.Barrier(2)
    results: list[SyncRun | None] = []

    def run() -> None:
        start.wait()
        try:
            results.append(run_locked_sync(hub.pk, SyncRun.Trigger.MANUAL))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(result is None for result in results) == [False, True]
    assert SyncRun.objects.count() == 1


def test_an_auth_failure_is_recorded_and_not_retried(demo_hub: DemoHub, hub: Hub) -> None:
    demo_hub.fail_next(1, 401)

    result = sync_hub.apply(args=[hub.pk]).get()

    assert result["state"] == SyncRun.State.FAILED
    assert SyncRun.objects.count() == 1
    assert "HTTP 401" in SyncRun.objects.get().error


@pytest.mark.usefixtures("in_process_celery")
def test_due_hubs_are_enqueued(hub: Hub) -> None:
    recent = HubFactory(last_synced_at=timezone.now(), sync_interval_seconds=3600)
    overdue = DemoHubRowFactory(
        name="overdue", server_url=hub.server_url, last_synced_at=timezone.now() - timedelta(seconds=61)
    )

    enqueued = sync_due_hubs()

    assert set(enqueued) == {hub.pk, overdue.pk} and recent.pk not in enqueued
    # in-process Celery ran them
    assert set(SyncRun.objects.values_list("hub__name", "trigger")) == {
        ("demo", "periodic"),
        ("overdue", "periodic"),
    }


@pytest.mark.usefixtures("in_process_celery")
def test_request_sync_runs_in_process_and_records_failures(demo_hub: DemoHub, hub: Hub) -> None:
    request_sync(hub, actor="alice")
    assert SyncRun.objects.get().trigger == SyncRun.Trigger.MANUAL

    demo_hub.fail_next(5, 503)
    request_sync(hub, actor="alice")
    assert SyncRun.objects.first().state == SyncRun.State.FAILED
