"""Celery tasks of the placement service: rescheduling (coalesced per placement), resyncs, timed runs
and publishing. Tasks take ids and trigger texts only (JSON); in-process (no broker) they run at once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from inventory.changes import HubChanges
from inventory.hubclient import HubError, TransientHubError
from inventory.models import Hub
from placement import service
from placement.models import Owner, Placement

if TYPE_CHECKING:
    from inventory.changes import Change

logger = logging.getLogger(__name__)

# A queued marker older than this belongs to a lost message; the next change queues a new run.
QUEUED_TTL = timedelta(minutes=2)
PERIODIC_RESYNC = "periodic resync"


def request_reschedule(placement_ids: list[int], trigger: str) -> list[int]:
    """Queue one reschedule per placement unless one is already queued; answers the ids queued now.

    The marker (`Placement.reschedule_queued_at`) is taken with a compare-and-set UPDATE and cleared
    when the run starts, so changes arriving during a run queue the next one.
    """
    queued = []
    for placement_id in placement_ids:
        now = timezone.now()
        free = Q(reschedule_queued_at__isnull=True) | Q(reschedule_queued_at__lt=now - QUEUED_TTL)
        if Placement.objects.filter(free, pk=placement_id).update(reschedule_queued_at=now):
            queued.append(placement_id)
            reschedule_placement.delay(placement_id, trigger)
    return queued


@shared_task(acks_late=True)
def reschedule_placement(placement_id: int, trigger: str) -> dict[str, Any]:
    """Reschedule one placement; answers {"state": "rescheduled"|"gone", "changed": bool}."""
    Placement.objects.filter(pk=placement_id).update(reschedule_queued_at=None)
    placement = Placement.objects.select_related("hub").filter(pk=placement_id).first()
    if placement is None:
        return {"state": "gone", "changed": False}
    change = service.reschedule(placement, trigger=trigger)
    return {"state": "rescheduled", "changed": change is not None}


@shared_task(acks_late=True)
def reschedule_hub(hub_id: int, trigger: str = PERIODIC_RESYNC) -> int:
    """Every placement of the hub, in this process, against one snapshot; answers how many."""
    hub = Hub.objects.filter(pk=hub_id).first()
    if hub is None:
        return 0
    placements = Placement.objects.filter(hub=hub).select_related("hub").order_by("kind", "namespace", "name")
    count = 0
    for placement in placements:
        try:
            service.reschedule(placement, trigger=trigger)
            count += 1
        except Exception:
            # one broken placement must not stop the resync of the others
            logger.exception("hub %s: reschedule of %s %s failed", hub.name, placement.kind, placement)
    return count


@shared_task
def resync_placements() -> list[int]:
    """Run by celery beat (like upstream's informer resync): every hub's placements, one task per hub."""
    hub_ids = list(Hub.objects.filter(placements__isnull=False).distinct().values_list("pk", flat=True))
    for hub_id in hub_ids:
        reschedule_hub.delay(hub_id, PERIODIC_RESYNC)
    return hub_ids


@shared_task(
    acks_late=True,
    autoretry_for=(TransientHubError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def publish_placement(placement_id: int) -> dict[str, Any]:
    """Publish a dashboard-owned placement's decisions to its hub's publish namespace."""
    from placement import publishing

    placement = Placement.objects.select_related("hub").filter(pk=placement_id).first()
    if placement is None:
        return {"state": "gone"}
    try:
        report = publishing.publish_placement(placement)
    except TransientHubError:
        raise
    except HubError as exc:
        logger.warning("publishing %s to hub %s failed: %s", placement, placement.hub, exc)
        return {"state": "failed", "error": str(exc)}
    return {"state": "published", **report.counts()}


def follow_up(placement: Placement, outcome: service.Outcome, now: datetime) -> None:
    """After a reschedule: publish changed decisions, and queue the timed run when one is due."""
    publishes = placement.owner == Owner.DASHBOARD and placement.is_ocm and placement.hub.publish_namespace
    if outcome.changed_decisions and publishes:
        publish_placement.delay(placement.pk)
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
    old, new = change.rows
    if old is None:
        return "cluster added"
    if new is None:
        return "cluster removed"
    if old.labels != new.labels:
        return "cluster label changed"
    if old.taints != new.taints:
        return "cluster taints changed"
    if getattr(old, "claims", None) != getattr(new, "claims", None):
        return "cluster claims changed"
    return "cluster status changed"


def describe(changes: HubChanges) -> str:
    """The trigger text of a hub change, e.g. "cluster label changed, add-on score changed"."""
    texts = [_cluster_trigger(c) for c in (*changes.clusters, *changes.member_clusters)]
    texts += ["cluster set changed"] * bool(changes.cluster_sets)
    texts += ["cluster set binding changed"] * bool(changes.bindings)
    texts += ["add-on score changed"] * bool(changes.add_on_scores)
    if not texts and (changes.placements or changes.cluster_resource_placements):
        texts.append("placement or decisions changed on the hub")
    return ", ".join(dict.fromkeys(texts))[:200]


def on_hub_changes(changes: HubChanges) -> None:
    """The inventory change listener: mark the hub's snapshot stale, queue the affected placements."""
    service.invalidate_snapshot(changes.hub_id)
    placements = Placement.objects.filter(hub_id=changes.hub_id)
    ocm_keys = changes.placements
    crp_names = changes.cluster_resource_placements
    ids = [
        pk
        for pk, kind, namespace, name in placements.values_list("pk", "kind", "namespace", "name")
        if ((namespace, name) in ocm_keys if kind == Placement.Kind.PLACEMENT else name in crp_names)
    ]
    if ids:
        request_reschedule(ids, describe(changes))
