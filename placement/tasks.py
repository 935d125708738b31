"""Celery tasks of the placement service: rescheduling (coalesced per placement), resyncs, timed runs
and publishing; the rollouts' run steps and rounds are in `placement.rollouts.tasks`. Tasks take ids and
trigger texts only (JSON); in-process (no broker) they run at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from celery import Task, group, shared_task
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from core.tasks import REDELIVER_IF_LOST
from inventory import bulk
from inventory.changes import HubChanges
from inventory.hubclient import HubError, TransientHubError
from inventory.models import Hub
from placement import journal, publishing, service, signals, urgency
from placement.models import Owner, Placement
from placement.requeue import requeued
from placement.scheduler.ocm import cel_syntax

if TYPE_CHECKING:
    from kombu import Producer

    from inventory.changes import Change

logger = logging.getLogger(__name__)

# A queued marker older than this belongs to a lost message; the next change queues a new run.
QUEUED_TTL = timedelta(minutes=2)
# A pending reschedule this old has had its chance to run: the sweep queues it (again).
PENDING_GRACE_SECONDS = 10.0
# Pending reschedules the sweep queues at most per run; the next run takes the rest.
SWEEP_LIMIT = 500
# The Redis transport pops the lowest priority first (its steps 0, 3, 6 and 9). Every task goes at
# settings CELERY_TASK_DEFAULT_PRIORITY between these: a change's leading runs ahead of all other work,
# so they never wait behind the runs of earlier changes, and the runs it cannot alter behind all of it.
LEADING_PRIORITY, LATER_PRIORITY = 0, 9
PERIODIC_RESYNC = "periodic resync"


def request_reschedule(
    placement_ids: list[int], trigger: str, later: Collection[int] = (), *, lead: bool = False
) -> list[int]:
    """Queue one reschedule per placement unless one is already queued; answers the ids queued now.

    The markers (`Placement.reschedule_queued_at`) are taken with a compare-and-set UPDATE of them all and
    cleared when each run starts, so changes arriving during a run queue the next one; the messages go
    to the broker in one batch. The runs of `later` are queued at the lowest priority, so the workers
    take the others first; a run queued so does not hold back one requested without `later`, which is
    queued too (the run queued for later then finds nothing new). With `lead` the runs (of placements
    not in `later`) go at the highest priority, ahead of every queued task, and are queued even when a
    run of the placement is queued already: that run may wait behind the backlog of earlier changes.
    A run that cannot be queued (the broker is down) or, in-process, fails is logged and left pending
    (`mark_pending`) for `sweep_pending_reschedules`.
    """
    now, later = timezone.now(), set(later)
    ordered = []
    for deferred in (False, True):
        ids = [pk for pk in placement_ids if (pk in later) == deferred]
        taken = _take_markers(ids, now, later=deferred, lead=lead and not deferred)
        ordered += [pk for pk in ids if pk in taken]
    first = LEADING_PRIORITY if lead else settings.CELERY_TASK_DEFAULT_PRIORITY
    queued, failed = [], []
    try:
        with _publishing() as producer:
            for placement_id in ordered:
                priority = LATER_PRIORITY if placement_id in later else first
                try:
                    reschedule_placement.apply_async(
                        (placement_id, trigger), producer=producer, priority=priority
                    )
                except Exception:
                    logger.exception("reschedule of placement %s (%s) left pending", placement_id, trigger)
                    failed.append(placement_id)
                else:
                    queued.append(placement_id)
    except Exception:
        # the batch was not delivered: none of its messages holds its marker
        logger.exception("reschedules of %d placements (%s) left pending", len(queued), trigger)
        failed, queued = failed + queued, []
    if failed:
        # no message holds these markers now: the sweep or the next change may queue the runs
        Placement.objects.filter(pk__in=failed, reschedule_queued_at=now).update(
            reschedule_queued_at=None, reschedule_queued_later=False
        )
        mark_pending(failed, trigger, retry=True)
    return queued


def _take_markers(placement_ids: list[int], now: datetime, later: bool, lead: bool = False) -> set[int]:
    """Take the reschedule marker of each placement whose marker is free, or, unless `later`, held by a
    run queued for later, or, when `lead`, held by any run (`take_markers`). Answers the ids taken."""
    quote = connection.ops.quote_name
    column, flag = quote("reschedule_queued_at"), quote("reschedule_queued_later")
    also = f"{column} IS NOT NULL" if lead else "FALSE" if later else flag
    return take_markers(
        placement_ids, "reschedule_queued_at", now, also_free=also, values={"reschedule_queued_later": later}
    )


def take_markers(
    placement_ids: Sequence[int],
    field: str,
    now: datetime,
    *,
    also_free: str = "FALSE",
    values: Mapping[str, Any] | None = None,
) -> set[int]:
    """Set the queued marker `field` of each placement to `now` where it is free (none, or older than
    QUEUED_TTL: a lost message's) or the SQL condition `also_free` holds, with `values`; compare-and-set
    (`bulk.take`), so two requests never both take a marker. Answers the ids taken."""
    column = connection.ops.quote_name(field)
    free = f"{column} IS NULL OR {column} < %s OR {also_free}"
    stale = connection.ops.adapt_datetimefield_value(now - QUEUED_TTL)
    return bulk.take(Placement, list(placement_ids), {field: now, **(values or {})}, free, [stale])


@contextmanager
def _publishing() -> Iterator[Producer | None]:
    """A producer whose messages are sent to the broker together on leaving (kombu's publish batch);
    None in-process, where each run happens when queued."""
    app = reschedule_placement.app
    if app.conf.task_always_eager:
        yield None
        return
    with app.producer_or_acquire() as producer, producer.batch():
        yield producer


def mark_pending(placement_ids: list[int], trigger: str, *, retry: bool = False) -> None:
    """Record that these placements owe a reschedule. A first marker keeps its time and trigger, so the
    oldest change is what a run must come after; `retry` moves the time to now (a failed attempt is
    tried again by the sweep after PENDING_GRACE_SECONDS, not at once)."""
    now = timezone.now()
    rows = Placement.objects.filter(pk__in=placement_ids)
    if retry:
        rows.update(reschedule_pending_since=now, reschedule_pending_trigger=trigger[:200])
    else:
        rows.filter(reschedule_pending_since__isnull=True).update(
            reschedule_pending_since=now, reschedule_pending_trigger=trigger[:200]
        )


@shared_task(**REDELIVER_IF_LOST)
def reschedule_placement(placement_id: int, trigger: str) -> dict[str, Any]:
    """Reschedule one placement; answers {"state": "rescheduled"|"gone", "changed": bool}. Success clears
    the pending marker of changes older than the run (newer ones have queued the next run)."""
    started = timezone.now()
    Placement.objects.filter(pk=placement_id).update(reschedule_queued_at=None, reschedule_queued_later=False)
    placement = Placement.objects.select_related("hub").filter(pk=placement_id).first()
    if placement is None:
        return {"state": "gone", "changed": False}
    change = service.reschedule(placement, trigger=trigger)
    if placement.reschedule_pending_since is not None:
        Placement.objects.filter(pk=placement_id, reschedule_pending_since__lte=started).update(
            reschedule_pending_since=None, reschedule_pending_trigger=""
        )
    return {"state": "rescheduled", "changed": change is not None}


def warm_snapshots(**_: object) -> None:
    """Receiver of Celery's `worker_init`, in a worker's main process before it starts the processes that
    run the tasks: build the snapshot of every hub with placements, with the columns every placement
    reads (`warm`), and the CEL parser, all of which they inherit. So the first change after a worker
    (re)starts does not wait for a build (seconds at 10,000 clusters) behind its runs; they catch the
    snapshot up from the journal like any later run. A hub that cannot be read is logged and left to the
    first run."""
    cel_syntax.parser()
    for hub in Hub.objects.filter(placements__isnull=False).distinct():
        started = time.perf_counter()
        try:
            snapshot = service.hub_snapshot(hub)
            snapshot.ocm.warm()
            snapshot.fleet.warm()
        except Exception:
            logger.exception("hub %s: snapshot not built before the worker started", hub.name)
            continue
        logger.info(
            "hub %s: snapshot built in %.1f s before the worker started",
            hub.name,
            time.perf_counter() - started,
        )


@shared_task
def sweep_pending_reschedules(grace_seconds: float = PENDING_GRACE_SECONDS) -> list[int]:
    """Run every few seconds (celery beat, or in-process): queue the reschedules hub changes still owe
    whose marker is older than `grace_seconds` (their own run could not be queued, or failed). One indexed
    query when there are none. Answers the ids queued."""
    cutoff = timezone.now() - timedelta(seconds=grace_seconds)
    pending = (
        Placement.objects.filter(reschedule_pending_since__lte=cutoff)
        .order_by("reschedule_pending_since")
        .values_list("pk", "reschedule_pending_trigger")[:SWEEP_LIMIT]
    )
    by_trigger: dict[str, list[int]] = {}
    for placement_id, trigger in pending:
        by_trigger.setdefault(trigger or "pending reschedule", []).append(placement_id)
    return [pk for trigger, ids in by_trigger.items() for pk in request_reschedule(ids, trigger)]


def partition(ids: Sequence[int], chunk_size: int, workers: int) -> list[list[int]]:
    """`ids` dealt into chunks of at most `chunk_size`, as many chunks as a multiple of `workers` (never
    more than there are ids), sizes differing by one at most: chunk i holds ids i, i + n, i + 2n, ... So
    each chunk carries the same mix of the sorted ids' kinds and sets (a placement over `global` costs
    several times one over a small set), and the workers finish together instead of one of them taking
    the costliest chunks last."""
    if not ids:
        return []
    count = -(-len(ids) // max(1, chunk_size))
    share = max(1, workers)
    count = min(len(ids), -(-count // share) * share)
    return [list(ids[index::count]) for index in range(count)]


def hub_chunks(hub_id: int) -> list[list[int]]:
    """The hub's placement ids as a full reschedule splits them (settings RESCHEDULE_CHUNK_SIZE and
    RESCHEDULE_WORKERS)."""
    ids = (
        Placement.objects.filter(hub_id=hub_id)
        .order_by("kind", "namespace", "name")
        .values_list("pk", flat=True)
    )
    return partition(list(ids), settings.RESCHEDULE_CHUNK_SIZE, settings.RESCHEDULE_WORKERS)


@shared_task(**REDELIVER_IF_LOST)
def reschedule_hub(hub_id: int, trigger: str = PERIODIC_RESYNC) -> dict[str, int]:
    """Every placement of the hub, as a group of `reschedule_chunk` tasks that the workers share (see
    `partition`); in-process the chunks run here, one after the other. Answers what was dispatched."""
    chunks = hub_chunks(hub_id)
    if chunks:
        group(reschedule_chunk.si(hub_id, chunk, trigger) for chunk in chunks).apply_async()
    return {"placements": sum(map(len, chunks)), "chunks": len(chunks)}


@shared_task(**REDELIVER_IF_LOST)
def reschedule_chunk(hub_id: int, placement_ids: list[int], trigger: str = PERIODIC_RESYNC) -> dict[str, Any]:
    """Reschedule these placements of the hub against this process's snapshot of it, with the decisions
    other workers stored meanwhile read again. A placement whose own run is queued (its marker is set)
    is left to that run, which comes after the change that queued it; a deleted one is skipped. The
    chunk's placements are read in one query, without their stored explanations (up to a megabyte at
    10,000 clusters), which a run replaces unread, and their decisions or bindings in another: this
    serves as each run's compare-and-set read. Their runs are stored together
    (`service.reschedule_together`); one whose state changed meanwhile (a spec saved) or that failed
    is rescheduled on its own after them.
    Answers the counts and the seconds spent on the snapshot (a build when this process had none of
    this state)."""
    counts = {"rescheduled": 0, "failed": 0, "skipped": 0}
    hub = Hub.objects.filter(pk=hub_id).first()
    if hub is None:
        return {**counts, "skipped": len(placement_ids), "snapshot_seconds": 0.0}
    started = time.perf_counter()
    queued = Q(reschedule_queued_at__gte=timezone.now() - QUEUED_TTL)
    rows = (
        Placement.objects.filter(pk__in=placement_ids, hub=hub)
        .exclude(queued)
        .defer("explanation", "cluster_record")
    )
    placements = {placement.pk: placement for placement in rows}
    counts["skipped"] = len(placement_ids) - len(placements)
    ordered = [placements[pk] for pk in placement_ids if pk in placements]
    for placement in ordered:
        placement.hub = hub
    snapshot_started = time.perf_counter()
    service.current_snapshot(hub, heartbeats=service.reads_heartbeats(ordered))
    snapshot_seconds = time.perf_counter() - snapshot_started
    seen = service.read_stored(ordered)
    left = service.reschedule_together(hub, ordered, trigger=trigger, seen=seen)
    counts["rescheduled"] = len(ordered) - len(left)
    for placement in left:
        try:
            service.reschedule(placement, trigger=trigger)
            counts["rescheduled"] += 1
        except Exception:
            # one broken placement must not stop the resync of the others
            counts["failed"] += 1
            logger.exception("hub %s: reschedule of %s %s failed", hub.name, placement.kind, placement)
    logger.info(
        "hub %s: chunk of %d placements in %.2f s (snapshot %.2f s): %s",
        hub.name,
        len(placement_ids),
        time.perf_counter() - started,
        snapshot_seconds,
        counts,
    )
    return {**counts, "snapshot_seconds": round(snapshot_seconds, 3)}


@shared_task
def resync_placements() -> list[int]:
    """Run by celery beat (like upstream's informer resync): every hub's placements, one task per hub."""
    hub_ids = list(Hub.objects.filter(placements__isnull=False).distinct().values_list("pk", flat=True))
    for hub_id in hub_ids:
        reschedule_hub.delay(hub_id, PERIODIC_RESYNC)
    return hub_ids


@shared_task(
    **REDELIVER_IF_LOST,
    bind=True,
    autoretry_for=(TransientHubError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def publish_placement(self: Task[Any, Any], placement_id: int) -> dict[str, Any]:
    """Publish a dashboard-owned placement's decisions to its hub's publish namespace; each outcome is an
    event of the placement (a failure a Warning with the hub's reason)."""
    placement = Placement.objects.select_related("hub").filter(pk=placement_id).first()
    if placement is None:
        return {"state": "gone"}
    try:
        report = publishing.publish_placement(placement)
    except TransientHubError as exc:
        retries = self.max_retries or 0
        publishing.record_failure(placement, exc, retrying=self.request.retries < retries)
        raise
    except HubError as exc:
        logger.warning("publishing %s to hub %s failed: %s", placement, placement.hub, exc)
        publishing.record_failure(placement, exc, retrying=False)
        return {"state": "failed", "error": str(exc)}
    if publishing.publishes(placement):
        publishing.record_published(placement, report)
    return {"state": "published", **report.counts()}


def follow_up(placement: Placement, outcome: service.Outcome, now: datetime) -> None:
    """After a reschedule: publish changed decisions, and queue the timed run when one is due."""
    family, owned = placement.family, placement.owner == Owner.DASHBOARD
    if outcome.changed_decisions and publishing.publishes(placement):
        publish_placement.delay(placement.pk)
    if outcome.changed_decisions and owned and family.rolls_out_bindings:
        # the bindings go to the hub, and a RollingUpdate CRP rolls onto them (the rollouts' receiver)
        signals.crp_bindings_changed.send(sender=Placement, placement=placement)
    if outcome.due is None or outcome.due == placement.requeue_at:
        return
    placement.requeue_at = outcome.due
    Placement.objects.filter(pk=placement.pk).update(requeue_at=outcome.due)
    if reschedule_placement.app.conf.task_always_eager:
        # in-process there is no one to wait; the next change or resync picks it up
        logger.info("%s: timed run at %s (%s) needs a worker", placement, outcome.due, outcome.due_trigger)
        return
    reschedule_placement.apply_async(
        (placement.pk, outcome.due_trigger), countdown=service.due_delay(outcome.due, now)
    )


# --- the change hook -------------------------------------------------------------------------------


def _cluster_trigger(change: Change[Any]) -> str:
    if change.created:
        return "cluster added"
    if change.deleted:
        return "cluster removed"
    old, new = change.rows
    if old.labels != new.labels:
        return "cluster label changed"
    if old.taints != new.taints:
        return "cluster taints changed"
    if getattr(old, "claims", None) != getattr(new, "claims", None):
        return "cluster claims changed"
    return "cluster status changed"


def describe(changes: HubChanges) -> str:
    """The trigger text of a hub change, e.g. "cluster label changed, add-on score changed"."""
    cluster_changes: list[Change[Any]] = [*changes.clusters, *changes.member_clusters]
    texts = [_cluster_trigger(c) for c in cluster_changes]
    texts += ["cluster set changed"] * bool(changes.cluster_sets)
    texts += ["cluster set binding changed"] * bool(changes.bindings)
    texts += ["add-on score changed"] * bool(changes.add_on_scores)
    if not texts and requeued(changes):
        texts.append("placement or decisions changed on the hub")
    return ", ".join(dict.fromkeys(texts))[:200]


def affected(changes: HubChanges) -> list[int]:
    """Ids of the hub's placements the change re-queues, in the order they were created: without an
    order PostgreSQL answers in the rows' physical order, which every write of a row (its pending marker)
    moves, and their runs would be queued in a different order each time. Read on the first call and kept
    on the change: the placements marked pending in its transaction are those queued after its commit."""
    return changes.derive(f"{__name__}.affected", _affected)


def _affected(changes: HubChanges) -> list[int]:
    requeue = requeued(changes)
    if not requeue:
        return []
    placements = Placement.objects.filter(hub_id=changes.hub_id).order_by("pk")
    rows = placements.values_list("pk", "kind", "namespace", "name")
    return [pk for pk, *key in rows if tuple(key) in requeue.placements]


def record_hub_changes(sender: object, hub_changes: HubChanges, **_: object) -> None:
    """Receiver of `hub_changes_recorded`, in the transaction that writes the hub's rows: mark the hub's
    snapshot stale and the affected placements pending, so the reschedules are owed even if queueing
    them after the commit fails. A change of rows that are no scheduler input and re-queue nothing (a
    rollout's) leaves both alone."""
    if not (hub_changes.inputs_changed() or requeued(hub_changes)):
        return
    service.invalidate_snapshot(hub_changes.hub_id, journal.identities(hub_changes))
    if ids := affected(hub_changes):
        mark_pending(ids, describe(hub_changes))


def on_hub_changes(sender: object, hub_changes: HubChanges, **_: object) -> None:
    """Receiver of `hub_changed`, once the rows are committed: queue the affected placements, those
    whose decisions hold a changed cluster first of all and those whose decisions the change cannot alter
    after the others (`placement.urgency`). The leading runs are sent to the broker on their own, ahead
    of the runs earlier changes queued, so the workers take them while the others are being sent
    (hundreds of messages take about a second)."""
    if ids := affected(hub_changes):
        order, trigger = urgency.order(hub_changes, ids), describe(hub_changes)
        leading, others = order.split(ids)
        if leading:
            request_reschedule(leading, trigger, lead=True)
        if others:
            request_reschedule(others, trigger, later=order.later)
