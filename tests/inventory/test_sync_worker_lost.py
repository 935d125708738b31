"""A hub sync whose Celery worker is killed with SIGKILL mid-sync: the message comes back, the sync
completes with every cluster, and the run the dead worker left "running" is marked failed.

Real `celery worker` processes on the real Redis broker and PostgreSQL, syncing the demo hub over HTTP.
The demo hub answers slowly until the kill, so the kill lands mid-sync. The workers get a short
visibility timeout and lease through their environment, as an operator would set them.
"""

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection

from demohub import DemoHub
from inventory.models import Hub, ManagedCluster, SyncRun
from inventory.tasks import sync_hub
from tests.factories import DemoHubRowFactory
from tests.servers import celery_worker

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

VISIBILITY_SECONDS = 4
LEASE_SECONDS = 3
LONG_LEASE_SECONDS = 10
# 1,200 clusters in pages of 500, each answer 300 ms late: the sync is still listing when it is killed.
CLUSTERS = 1200
LATENCY_MS = 300


def wait_for(what: str, check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(0.1)


@pytest.fixture
def slow_hub() -> Iterator[DemoHub]:
    with DemoHub(clusters=CLUSTERS, fleet=True, seed=3, latency_ms=LATENCY_MS) as hub:
        yield hub


@pytest.fixture
def worker_env(broker_url: str, database_url: str) -> dict[str, str]:
    """The environment of a worker process: this test's database, the broker, short timeouts."""
    test_database = connection.settings_dict["NAME"]
    return {
        **os.environ,
        "DATABASE_URL": f"{database_url.rsplit('/', 1)[0]}/{test_database}",
        "CELERY_BROKER_URL": broker_url,
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_SECONDS),
        "HUB_SYNC_LEASE_SECONDS": str(LEASE_SECONDS),
    }


@pytest.fixture
def queue() -> str:
    """A queue of this test alone: messages other runs left on the shared broker are not its business."""
    return f"sync-worker-lost-{uuid.uuid4().hex[:8]}"


def running_run(hub: Hub) -> SyncRun | None:
    return SyncRun.objects.filter(hub=hub, state=SyncRun.State.RUNNING, pages__gte=1).first()


def assert_recovered(hub: Hub, slow_hub: DemoHub, dead: SyncRun) -> None:
    """The dead run failed with its last heartbeat, a later run succeeded, and no cluster is missing."""
    dead.refresh_from_db()
    assert dead.state == SyncRun.State.FAILED
    assert dead.error.startswith("worker lost: no heartbeat since ")
    assert SyncRun.objects.filter(
        hub=hub, state=SyncRun.State.SUCCEEDED, started_at__gt=dead.started_at
    ).exists()
    for kind in ("ManagedCluster", "MemberCluster"):
        stored = set(ManagedCluster.objects.filter(hub=hub, kind=kind).values_list("name", flat=True))
        assert stored == set(slow_hub.store.names(kind)), kind
    assert not ManagedCluster.objects.filter(hub=hub, stale=True).exists()


def test_a_sync_killed_with_its_worker_is_redelivered_to_the_next_worker(
    slow_hub: DemoHub, worker_env: dict[str, str], queue: str, tmp_path: Path
) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=slow_hub.url)
    log = tmp_path / "worker.log"
    with celery_worker(worker_env, queue, tmp_path / "first.log", pool="solo") as first:
        message = sync_hub.apply_async((hub.pk, SyncRun.Trigger.MANUAL), queue=queue)
        wait_for("the first page of the sync", lambda: running_run(hub) is not None)
        dead = running_run(hub)
        assert dead is not None
        os.kill(first.pid, signal.SIGKILL)  # solo pool: the task runs in this very process
        first.wait(10)
    slow_hub.faults.latency_ms = 0
    # Redis hands the unacknowledged message out again once the visibility timeout has passed
    time.sleep(VISIBILITY_SECONDS)
    with celery_worker(worker_env, queue, log, pool="solo"):
        wait_for("the redelivered sync", lambda: SyncRun.objects.filter(hub=hub).count() >= 2)
        wait_for(
            "the end of the redelivered sync", lambda: not SyncRun.objects.filter(state="running").exists()
        )
    assert f"sync_hub[{message.id}] received" in log.read_text()
    assert_recovered(hub, slow_hub, dead)


def test_a_sync_whose_pool_process_is_killed_is_requeued_at_once(
    slow_hub: DemoHub, worker_env: dict[str, str], queue: str, tmp_path: Path
) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=slow_hub.url)
    log = tmp_path / "worker.log"
    # a lease the requeued message surely arrives within, so it finds the dead attempt's lock
    env = {**worker_env, "HUB_SYNC_LEASE_SECONDS": str(LONG_LEASE_SECONDS)}
    with celery_worker(env, queue, log, pool="prefork") as worker:
        message = sync_hub.apply_async((hub.pk, SyncRun.Trigger.MANUAL), queue=queue)
        wait_for("the first page of the sync", lambda: running_run(hub) is not None)
        dead = running_run(hub)
        assert dead is not None
        children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text().split()
        assert len(children) == 1, children  # --concurrency 1: the one pool process runs the sync
        slow_hub.faults.latency_ms = 0
        os.kill(int(children[0]), signal.SIGKILL)
        # the worker requeues the message (reject_on_worker_lost); the redelivered sync finds the dead
        # attempt's lock, waits for it to expire, and runs
        wait_for("the redelivered sync", lambda: SyncRun.objects.filter(hub=hub).count() >= 2)
        wait_for(
            "the end of the redelivered sync", lambda: not SyncRun.objects.filter(state="running").exists()
        )
    output = log.read_text()
    assert "WorkerLostError" in output
    assert output.count(f"sync_hub[{message.id}] received") >= 2
    assert f"sync_hub[{message.id}] retry" in output  # it waited for the dead attempt's lock
    assert_recovered(hub, slow_hub, dead)
