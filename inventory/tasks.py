"""Celery tasks of the inventory: hub syncs (periodic, "Sync now") under a per-hub lock.

Tasks take ids only (never credentials); transient hub errors retry with backoff, others do not.
"""

import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import Task, shared_task
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.tasks import REDELIVER_IF_LOST
from inventory import sync
from inventory.hubclient import HubError, TransientHubError
from inventory.models import Hub, ManagedCluster, SyncRun

logger = logging.getLogger(__name__)

# A lock (and a SyncRun heartbeat) not renewed for this long belongs to a dead worker: the lock may be
# taken over and the run is marked failed (HUB_SYNC_LEASE_SECONDS, 2 minutes by default).
LOCK_TTL = timedelta(seconds=settings.HUB_SYNC_LEASE_SECONDS)


@contextmanager
def hub_lock(hub_id: int) -> Iterator[Callable[[], None] | None]:
    """Compare-and-set on Hub.sync_lock_until; yields a refresh callable, or None when another run holds it.

    Plain UPDATE ... WHERE statements: no long transaction, the same on SQLite and PostgreSQL.
    """
    owner = uuid.uuid4().hex
    now = timezone.now()
    free = Q(sync_lock_until__isnull=True) | Q(sync_lock_until__lt=now)
    taken = Hub.objects.filter(free, pk=hub_id).update(sync_lock_until=now + LOCK_TTL, sync_lock_owner=owner)
    if not taken:
        yield None
        return

    def refresh() -> None:
        Hub.objects.filter(pk=hub_id, sync_lock_owner=owner).update(sync_lock_until=timezone.now() + LOCK_TTL)

    try:
        yield refresh
    finally:
        Hub.objects.filter(pk=hub_id, sync_lock_owner=owner).update(sync_lock_until=None, sync_lock_owner="")


def fail_lost_runs(hub_id: int | None = None) -> list[int]:
    """Mark failed the runs still "running" whose worker died; answers their ids.

    With `hub_id` the caller holds that hub's lock, so every run of the hub still running is lost (a
    live one would hold the lock). Without, the lost runs are those whose heartbeat is older than the
    lease. As after any failed sync, the hub shows the error and its clusters are stale (the lost run
    may have written some pages); its last sync time is left alone, so the hub stays due.
    """
    now = timezone.now()
    running = SyncRun.objects.filter(state=SyncRun.State.RUNNING)
    if hub_id is None:
        candidates = running.filter(heartbeat_at__lt=now - LOCK_TTL)
    else:
        candidates = running.filter(hub_id=hub_id)
    lost = []
    for run in candidates.select_related("hub"):
        error = f"worker lost: no heartbeat since {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
        # compare-and-set: a run that finished meanwhile keeps its own outcome
        if running.filter(pk=run.pk).update(state=SyncRun.State.FAILED, error=error, finished_at=now):
            Hub.objects.filter(pk=run.hub_id).update(last_sync_error=error)
            ManagedCluster.objects.filter(hub_id=run.hub_id).update(stale=True)
            logger.warning("hub %s: %s sync failed: %s", run.hub.name, run.trigger, error)
            lost.append(run.pk)
    return lost


def run_locked_sync(hub_id: int, trigger: str) -> SyncRun | None:
    """One sync of the hub unless another is running (then None); raises sync.SyncFailed on failure."""
    hub = Hub.objects.get(pk=hub_id)
    with hub_lock(hub_id) as refresh:
        if refresh is None:
            logger.info("hub %s: a sync is already running; skipped", hub.name)
            return None
        fail_lost_runs(hub_id)
        return sync.sync_hub(hub, trigger=trigger, heartbeat=refresh)


@shared_task(
    bind=True,
    **REDELIVER_IF_LOST,
    autoretry_for=(TransientHubError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def sync_hub(
    self: Task[..., dict[str, object]], hub_id: int, trigger: str = SyncRun.Trigger.PERIODIC
) -> dict[str, object]:
    """Sync one hub; answers {"state": succeeded|failed|skipped|gone, "sync_run": id}."""
    if not Hub.objects.filter(pk=hub_id).exists():
        return {"state": "gone", "sync_run": None}
    try:
        run = run_locked_sync(hub_id, trigger)
    except sync.SyncFailed as exc:
        if isinstance(exc.cause, TransientHubError):
            raise exc.cause from exc
        # 401/403/404/bad credentials: recorded on the SyncRun and the hub; retrying will not help
        return {"state": SyncRun.State.FAILED, "sync_run": exc.sync_run.pk}
    if run is None:
        if (self.request.delivery_info or {}).get("redelivered"):
            # Delivered again because its worker died: the lock is most likely that dead attempt's own,
            # so this sync waits for the lock to expire instead of being skipped.
            raise self.retry(countdown=LOCK_TTL.total_seconds())
        return {"state": "skipped", "sync_run": None}
    return {"state": run.state, "sync_run": run.pk}


@shared_task
def sync_due_hubs() -> list[int]:
    """Run by celery beat: enqueue every hub whose interval has passed since its last sync (after marking
    failed the runs whose worker died, whose hubs are then due again)."""
    fail_lost_runs()
    now = timezone.now()
    # a handful of hubs: the interval arithmetic reads clearer here than as a portable SQL expression
    hubs = Hub.objects.filter(Q(sync_lock_until__isnull=True) | Q(sync_lock_until__lt=now))
    hub_ids = [
        pk
        for pk, last, interval in hubs.values_list("pk", "last_synced_at", "sync_interval_seconds")
        if last is None or last + timedelta(seconds=interval) <= now
    ]
    for hub_id in hub_ids:
        sync_hub.delay(hub_id, SyncRun.Trigger.PERIODIC)
    return hub_ids


def request_sync(hub: Hub, actor: str = "") -> None:
    """The "Sync now" action: queued for a worker, or run here when Celery runs tasks in-process.

    In-process, a failure is recorded on the SyncRun and the hub and not raised (no retry storm
    inside a web request).
    """
    logger.info("hub %s: sync requested by %s", hub.name, actor or "unknown")
    if not sync_hub.app.conf.task_always_eager:
        sync_hub.delay(hub.pk, SyncRun.Trigger.MANUAL)
        return
    with contextlib.suppress(HubError):  # already recorded on the SyncRun and the hub
        run_locked_sync(hub.pk, SyncRun.Trigger.MANUAL)
