"""Celery tasks of the rollouts: staged update run steps and rolling-update rounds, each queued for its
due time, and the periodic runner's sweeps of those due.

They keep the names they had as `placement.tasks` (explicit `name=`): queued messages and
CELERY_BEAT_SCHEDULE entries name them so. Celery finds this module through the rollouts' AppConfig.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from celery import shared_task
from django.utils import timezone

from core.tasks import REDELIVER_IF_LOST
from inventory.models import Hub
from placement import hubbindings, service
from placement.models import Placement
from placement.rollouts import rolling
from placement.rollouts import runs as rollouts

logger = logging.getLogger(__name__)


def on_crp_bindings_changed(sender: object, placement: Placement, **_: object) -> None:
    """Receiver of `placement.signals.crp_bindings_changed`: a round rolls the CRP onto its new bindings."""
    rolling.request_rounds([placement.pk])


def on_managed_objects_reported(
    sender: object, hub: Hub, kind: str, objects: Sequence[dict[str, Any]], **_: object
) -> None:
    """Receiver of `inventory.signals.managed_objects_reported`: the hub's report on a rolling CRP's
    bindings (read by the watch or a sync) runs its next round, as a binding update does upstream."""
    if kind != hubbindings.KIND:
        return
    rolling.request_rounds(rolling.reported(hub, objects))


# --- staged update runs (runs) -----------------------------------------------------------------------


@shared_task(**REDELIVER_IF_LOST, name="placement.tasks.reconcile_run")
def reconcile_run(run_id: int) -> dict[str, Any]:
    """One step of a dashboard-owned ClusterStagedUpdateRun; the next is queued at its requeue time."""
    return rollouts.reconcile_run(run_id)


def schedule_run_reconcile(run_id: int, due: datetime, now: datetime) -> None:
    """Queue the run's next step for `due` (a worker holds it until then)."""
    if reconcile_run.app.conf.task_always_eager:
        if due <= now:  # a stage finished or was skipped: the next one starts now
            reconcile_run.delay(run_id)
            return
        # in-process nobody holds a queued step: the periodic runner (run_periodic) steps it when due
        logger.info("staged update run %s: next step at %s", run_id, due)
        return
    reconcile_run.apply_async((run_id,), countdown=service.due_delay(due, now))


# A step or round the periodic runner queues is dropped when no worker took it this soon: by then the
# runner has queued it again, so a busy worker does not pile up copies.
DUE_MESSAGE_EXPIRES = 60


@shared_task(name="placement.tasks.reconcile_due_runs")
def reconcile_due_runs() -> list[int]:
    """Run by the periodic runner (celery beat, or run_periodic without a broker) every few seconds: every
    dashboard-owned run whose step is due and unclaimed is stepped (a timed step, a failed step's retry,
    or a step whose message was lost). In-process the steps run here."""
    queued = list(rollouts.due_runs(timezone.now()).values_list("pk", flat=True))
    for run_id in queued:
        reconcile_run.apply_async((run_id,), expires=DUE_MESSAGE_EXPIRES)
    return queued


# --- rolling updates of dashboard-owned CRPs (rolling) ------------------------------------------------


@shared_task(**REDELIVER_IF_LOST, name="placement.tasks.rolling_update_round")
def rolling_update_round(
    placement_id: int, due: str | None = None, requested: str | None = None
) -> dict[str, Any]:
    """One rolling-update round of a dashboard-owned CRP; `due` is the requeue time it was queued for
    (a round queued later supersedes it), `requested` the marker of a round a change asked for (a round
    started since answers it). The round queues the next one itself."""
    placement = Placement.objects.select_related("hub").filter(pk=placement_id).first()
    if placement is None:
        return {"state": "gone"}
    marker = None if requested is None else datetime.fromisoformat(requested)
    summary = rolling.run_round(placement, due=due, requested=marker)
    if summary is None:
        return {"state": "skipped"}
    return {"state": "rolled", "round": summary.get("round"), "requeueAt": summary.get("requeueAt")}


@shared_task(name="placement.tasks.rolling_update_due_rounds")
def rolling_update_due_rounds() -> list[int]:
    """Run by the periodic runner like `reconcile_due_runs`: every rolling update whose next round is due
    and unclaimed gets it."""
    due = rolling.due(timezone.now())
    for placement_id in due:
        rolling_update_round.apply_async((placement_id,), expires=DUE_MESSAGE_EXPIRES)
    return due
