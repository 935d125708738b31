"""Rolling updates of dashboard-owned Fleet CRPs, executed round by round.

For a CRP this dashboard schedules, the dashboard is also the rollout controller. One round
(`run_round`) makes the hub hold the CRP's binding rows and reads their status back
(placement.hubbindings), plans with the pure `plan_rolling_update_round` against the latest resource
snapshot `<crp>-<index>-snapshot`, and applies the plan as upstream does: the chosen bindings become
Bound on the latest snapshot with RolloutStarted=True, the ones the budgets hold back get
RolloutStarted=False, chosen Unscheduled ones are deleted. The round's summary is stored in
`placement.status["rollout"]` (the placement page reads it) and the next round is queued with Celery
at the requeue time.

As upstream's rollout controller, a round that leaves bindings to roll comes back after the planner's
wait (the first not-trackable binding's, else `unavailablePeriodSeconds`, never sooner than
`MIN_REQUEUE`), and a round with nothing left to roll queues none: the hub's reports on the bindings
(Available or DiffReported changed, read by the watch: `reported`) bring the next round, as binding
update events do upstream: one queued round per CRP however many reports, and none once another round
has read them (`request_rounds`). `roll_out_new_snapshot` bumps
`placement.status["resourceSnapshot"]["index"]`, which makes the next rounds roll every bound cluster
to the new snapshot, wave by wave within maxUnavailable / maxSurge.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from inventory import audit, bulk
from inventory.hubclient import HubError
from inventory.models import Hub
from placement import access, claims, families, history, hubbindings, queries, service
from placement.families.fleet import parse_stored
from placement.models import ClusterResourceBinding, Owner, Placement, PlacementEvent
from placement.rollouts import preview as rollout_preview
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet import types as fleet
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.rollout.rolling import (
    IN_PROGRESS_REASONS,
    ROLLOUT_STARTED,
    BindingConflictError,
    RolloutRound,
    plan_rolling_update_round,
)
from placement.scheduler.timeutil import format_time, parse_time
from placement.tasks import take_markers

logger = logging.getLogger(__name__)

# The soonest a round with bindings still to roll comes back (upstream requeues such a round at once, rate
# limited, when no binding has a wait of its own); the hub's reports on the bindings bring one sooner.
MIN_REQUEUE = timedelta(seconds=5)
# After a failed round (the hub, a plan the controller refuses: two live bindings on one cluster, the
# database), doubling with each failure in a row up to ERROR_RETRY_MAX.
ERROR_RETRY = timedelta(seconds=30)
ERROR_RETRY_MAX = timedelta(minutes=5)
# How long a runner holds a rollout it runs a round of (placement.claims, columns rollout_claim*).
CLAIM_TTL = timedelta(minutes=5)
CLAIM_PREFIX = "rollout_"

# upstream rollout controller's RolloutStarted condition (updateBindingStatus)
STARTED = (
    "True",
    "RolloutStarted",
    "Detected the new changes on the resources and started the rollout process",
)
BLOCKED = (
    "False",
    "RolloutNotStartedYet",
    "The resources cannot be updated to the latest because of the rollout strategy",
)
# The binding conditions the Rollout section shows, in column order.
CONDITION_COLUMNS = (ROLLOUT_STARTED, "Applied", "Available")
OVERRIDE_FIELDS = ("clusterResourceOverrideSnapshots", "resourceOverrideSnapshots")
SNAPSHOT_ACTION = "placement.rollout"

Actor = AbstractBaseUser | str


# --- what rolls -------------------------------------------------------------------------------------


def snapshot_index(placement: Placement) -> int:
    """The CRP's latest resource snapshot index (`status.resourceSnapshot.index`, 0 until bumped)."""
    stored = (placement.status or {}).get("resourceSnapshot") or {}
    try:
        return int(stored.get("index", 0))
    except (TypeError, ValueError):
        return 0


def latest_snapshot_name(placement: Placement) -> str:
    """upstream's master resource snapshot name for that index."""
    return f"{placement.name}-{snapshot_index(placement)}-snapshot"


def rolling_crp(placement: Placement) -> fleet.ClusterResourcePlacement | None:
    """The parsed CRP when the dashboard runs its rolling update (dashboard-owned, RollingUpdate)."""
    if placement.owner != Owner.DASHBOARD or not placement.family.rolls_out_bindings:
        return None
    try:
        parsed = parse_stored(placement)
    except ManifestError:
        return None
    strategy = parsed.strategy
    if strategy.type != fleet.ROLLING_UPDATE or strategy.rolling_update is None:
        return None
    return parsed


# --- one round ----------------------------------------------------------------------------------------


def run_round(
    placement: Placement,
    now: datetime | None = None,
    *,
    due: str | None = None,
    requested: datetime | None = None,
) -> dict[str, Any] | None:
    """One rolling-update round, with the placement claimed (one runner at a time, on SQLite too) and its
    row locked; answers the stored summary, or None when there was nothing to run (or another runner
    holds the rollout).

    Every dashboard-owned CRP's bindings are written to the hub; only RollingUpdate ones are planned.
    `due` is the requeue time a scheduled round was queued for: when a later round has been queued
    since, this one is superseded and skipped. `requested` is the marker a round asked for by a change
    was queued with (`request_rounds`): when another round has started since, that one answered the
    change and this one is skipped. Whatever fails is stored in the summary (`error`, `attempts`) and
    the round is due again after a doubling backoff.
    """
    now = timezone.now() if now is None else now
    with claims.claimed(Placement, placement.pk, ttl=CLAIM_TTL, prefix=CLAIM_PREFIX) as owner:
        if owner is None:
            logger.debug("%s: another runner holds the rollout", placement)
            if due is None:
                # asked for by a change (a hub report, a reschedule) the running round may have read
                # too early: run again after it, as upstream's work queue re-queues a key that is busy
                _queue_again(placement.pk, requested)
            return None
        if not _runs(placement, now, due, requested):
            return None
        try:
            summary = _locked_round(placement, now)
        except Exception as exc:  # noqa: BLE001 - every failure is stored and retried, none is lost
            logger.exception("%s: rolling-update round failed", placement)
            summary = _store_failure(placement, f"{type(exc).__name__}: {exc}", now)
    if summary is not None:
        _queue_next(placement, summary, now)
    return summary


def _runs(placement: Placement, now: datetime, due: str | None, requested: datetime | None) -> bool:
    """Whether the claimed round runs; if so, the CRP's marker is freed first, so the changes reported from
    now on queue the next round, and a round queued for a change reported before (which this one reads)
    is skipped, as upstream's work queue holds a key once. Written before the row is locked, so a report
    arriving meanwhile does not wait for the round."""
    rows = Placement.objects.filter(pk=placement.pk)
    if requested is not None:
        if rows.filter(round_queued_at=requested).update(round_queued_at=None):
            return True
        logger.debug("%s: a round started since answered the change", placement)
        return False
    if due is not None:
        stored = rows.values_list("status__rollout__requeueAt", flat=True).first()
        if _superseded(stored, due, now):
            logger.debug("%s: round due at %s superseded", placement, due)
            return False
    rows.update(round_queued_at=None)
    return True


def _locked_round(placement: Placement, now: datetime) -> dict[str, Any] | None:
    with transaction.atomic():
        locked = Placement.objects.select_for_update().select_related("hub").filter(pk=placement.pk).first()
        if locked is None or locked.owner != Owner.DASHBOARD or not locked.family.rolls_out_bindings:
            return None
        parsed = rolling_crp(locked)
        if parsed is None:
            _sync_only(locked)
            return None
        summary = _round(locked, parsed, now)
        locked.status = {**(locked.status or {}), "rollout": summary}
        Placement.objects.filter(pk=locked.pk).update(status=locked.status)
    placement.status = locked.status
    return summary


def _failure(previous: Mapping[str, Any], error: str, now: datetime) -> dict[str, Any]:
    """The summary after a failed round: the last one's facts, the error, and when it is tried again."""
    attempts = int(previous.get("attempts") or 0) + 1
    retry = min(ERROR_RETRY * 2 ** (attempts - 1), ERROR_RETRY_MAX)
    return {
        **previous,
        "at": format_time(now),
        "error": error,
        "attempts": attempts,
        "requeueAt": format_time(now + retry),
    }


def _store_failure(placement: Placement, error: str, now: datetime) -> dict[str, Any] | None:
    """A round that failed outside the planner (e.g. the database): stored the same way, in a fresh
    transaction."""
    with transaction.atomic():
        locked = Placement.objects.select_for_update().filter(pk=placement.pk).first()
        if locked is None:
            return None
        summary = _failure((locked.status or {}).get("rollout") or {}, error, now)
        locked.status = {**(locked.status or {}), "rollout": summary}
        Placement.objects.filter(pk=locked.pk).update(status=locked.status)
    placement.status = locked.status
    return summary


def _superseded(stored: str | None, due: str, now: datetime) -> bool:
    """A later round queued another moment (`stored`, the last round's requeue time), or found nothing
    left to roll (no moment at all)."""
    if stored == due:
        return False
    if not stored:
        return True
    moment = parse_time(stored)
    return moment is not None and moment > now


def _sync_only(placement: Placement) -> None:
    """External (staged) or unreadable CRPs: their bindings still belong on the hub."""
    try:
        hubbindings.sync_bindings(placement)
    except HubError as exc:
        logger.warning("%s: writing bindings to hub %s failed: %s", placement, placement.hub, exc)


def _round(placement: Placement, parsed: fleet.ClusterResourcePlacement, now: datetime) -> dict[str, Any]:
    previous = (placement.status or {}).get("rollout") or {}
    latest = latest_snapshot_name(placement)
    try:
        objects, _ = hubbindings.sync_bindings(placement)
        rows = {row.name: row for row in placement.bindings.filter(owner=Owner.DASHBOARD).order_by("name")}
        readable = service._converted(rows.values(), service._binding)
        bindings = [_with_hub_facts(binding, objects.get(binding.name)) for binding in readable]
        config = parsed.strategy.rolling_update or fleet.RollingUpdateConfig()
        plan = plan_rolling_update_round(parsed.policy, config, bindings, latest, now)
        changed, removed = _apply(plan, rows, now)
        bulk.update_instances(changed, ["spec", "status"])
        hubbindings.delete_bindings(placement, removed)
        hubbindings.push_bindings(placement, changed, listed=objects)
    except (HubError, BindingConflictError) as exc:
        logger.warning("%s: rolling-update round failed: %s", placement, exc)
        return _failure(previous, str(exc), now)
    summary = _summary(previous, plan, rows, removed, latest, now)
    _record_events(placement, previous, summary, now)
    logger.info(
        "%s: round %d on %s: updated %s, removed %s, stale %s",
        placement,
        summary["round"],
        latest,
        summary["updated"],
        summary["removed"],
        summary["stale"],
    )
    return summary


def _with_hub_facts(
    binding: fleet.ClusterResourceBinding, hub_object: Mapping[str, Any] | None
) -> fleet.ClusterResourceBinding:
    """The row as the planner reads it: generation and deletion come from the hub's object (the row's
    conditions were just read from it); without one nothing is known of them."""
    if hub_object is None:
        return binding
    metadata = hub_object.get("metadata") or {}
    return replace(
        binding,
        generation=int(metadata.get("generation") or 0),
        deleting=metadata.get("deletionTimestamp") is not None,
    )


def _apply(
    plan: RolloutRound, rows: Mapping[str, ClusterResourceBinding], now: datetime
) -> tuple[list[ClusterResourceBinding], list[str]]:
    """The plan's effects on the rows: (rows changed, names of rows to delete)."""
    changed: dict[str, ClusterResourceBinding] = {}
    removed = []
    for update in plan.to_be_updated:
        row = rows[update.binding.name]
        if update.desired is None:
            removed.append(row.name)
            continue
        row.spec = _desired_spec(row.spec, update.desired)
        row.status = _rollout_started(row.status, STARTED, update.binding.generation, now)
        changed[row.name] = row
    marks = [(u.binding, BLOCKED) for u in plan.stale] + [(b, STARTED) for b in plan.up_to_date]
    for binding, mark in marks:
        row = rows[binding.name]
        status = _rollout_started(row.status, mark, binding.generation, now)
        if status != row.status:
            row.status = status
            changed[row.name] = row
    return list(changed.values()), removed


def _desired_spec(spec: Mapping[str, Any], desired: fleet.ClusterResourceBinding) -> dict[str, Any]:
    """Bound on the latest snapshot; no override snapshots are modelled, so none are kept."""
    updated = {**spec, "state": desired.state, "resourceSnapshotName": desired.resource_snapshot_name}
    for key in OVERRIDE_FIELDS:
        updated.pop(key, None)
    return updated


def _rollout_started(
    status: Mapping[str, Any], mark: tuple[str, str, str], generation: int, now: datetime
) -> dict[str, Any]:
    state, reason, message = mark
    condition: dict[str, Any] = {
        "type": ROLLOUT_STARTED,
        "status": state,
        "reason": reason,
        "message": message,
    }
    if generation:
        condition["observedGeneration"] = generation
    conditions = set_condition(list((status or {}).get("conditions") or []), condition, now)
    return {**(status or {}), "conditions": conditions}


# --- the summary the page shows -------------------------------------------------------------------


def _summary(
    previous: Mapping[str, Any],
    plan: RolloutRound,
    rows: Mapping[str, ClusterResourceBinding],
    removed: Sequence[str],
    latest: str,
    now: datetime,
) -> dict[str, Any]:
    """What the round did and found, by cluster name; the wave carries over until the next one starts."""
    cluster = {name: row.spec.get("targetCluster", "") for name, row in rows.items()}
    assessed = {a.binding.name: a for a in plan.assessments}
    updated = sorted(cluster[u.binding.name] for u in plan.to_be_updated if u.desired is not None)
    wave = dict(previous.get("wave") or {}) if previous.get("resourceSnapshot") == latest else {}
    if updated or removed:
        wave = {
            "number": int(wave.get("number", 0)) + 1,
            "startedAt": format_time(now),
            "updated": updated,
            "removed": sorted(cluster[name] for name in removed),
        }
    requeue = _requeue_after(plan)
    budgets = plan.budgets
    return {
        "round": int(previous.get("round", 0)) + 1,
        "at": format_time(now),
        "resourceSnapshot": latest,
        "needRoll": plan.need_roll,
        "targetNumber": budgets.target_number if budgets else None,
        "budgets": _budgets(budgets),
        "wave": wave,
        "updated": updated,
        "removed": sorted(cluster[name] for name in removed),
        "stale": sorted(cluster[u.binding.name] for u in plan.stale),
        "ready": sorted(cluster[name] for name, a in assessed.items() if a.ready and name in cluster),
        "failed": sorted(cluster[name] for name, a in assessed.items() if a.failed and name in cluster),
        # still applying: their reports (not a timer) bring the next round, and the page follows them
        "applying": sorted(
            cluster[name] for name, a in assessed.items() if not (a.ready or a.failed) and name in cluster
        ),
        "upToDate": sorted(cluster[b.name] for b in plan.up_to_date),
        "waitingForCleanup": plan.waiting_for_cleanup or "",
        "requeueAt": format_time(now + requeue) if requeue is not None else None,
        "error": "",
        "attempts": 0,
    }


def _budgets(budgets: Any) -> dict[str, int]:
    if budgets is None:
        return {}
    return {
        "maxUnavailable": budgets.max_unavailable,
        "minAvailable": budgets.min_available,
        "maxToRemove": budgets.max_to_remove,
        "maxSurge": budgets.max_surge,
        "maxToAdd": budgets.max_to_add,
        "ready": budgets.ready,
        "canBeReady": budgets.can_be_ready,
        "canBeUnavailable": budgets.can_be_unavailable,
    }


def _requeue_after(plan: RolloutRound) -> timedelta | None:
    """upstream (Reconcile): a deleting binding's cleanup is retried after its wait, a rollout that still
    rolls after the planner's wait; with nothing left to roll it stops, and binding reports restart it."""
    if plan.waiting_for_cleanup:
        return plan.requeue_after
    if not plan.need_roll:
        return None
    return max(plan.requeue_after, MIN_REQUEUE)


def _record_events(
    placement: Placement, previous: Mapping[str, Any], summary: Mapping[str, Any], now: datetime
) -> None:
    events = []
    wave = summary["wave"]
    if wave and wave.get("startedAt") == summary["at"]:
        parts = [f"bound {', '.join(wave['updated'])}"] * bool(wave["updated"])
        parts += [f"removed {', '.join(wave['removed'])}"] * bool(wave["removed"])
        message = f"wave {wave['number']} of {summary['resourceSnapshot']}: {'; '.join(parts)}"
        events.append({"reason": "RollingUpdateWave", "message": message})
    newly_failed = sorted(set(summary["failed"]) - set(previous.get("failed") or []))
    if newly_failed:
        message = f"failed on {', '.join(newly_failed)} ({summary['resourceSnapshot']})"
        events.append(
            {"type": PlacementEvent.Type.WARNING, "reason": "RollingUpdateFailed", "message": message}
        )
    finished = not summary["needRoll"] and summary["requeueAt"] is None
    if finished and (previous.get("needRoll") or previous.get("requeueAt")):
        events.append(
            {
                "reason": "RollingUpdateCompleted",
                "message": f"every binding is on {summary['resourceSnapshot']}",
            }
        )
    history.record_events(placement, events, now)


# --- queueing -----------------------------------------------------------------------------------------


def request_rounds(placement_ids: Sequence[int]) -> list[int]:
    """Queue a round of each CRP that has none queued (in-process: run it now); answers the ids queued.

    A queued round holds its CRP's marker (`Placement.round_queued_at`, the time it was taken, which the
    message carries), so a burst of the hub's reports on one CRP's bindings queues one round, as
    upstream's work queue holds a key once. Any round that starts frees the marker (`_runs`): reports
    from then on queue the next round, and a queued one whose marker was freed is skipped. A marker
    older than `placement.tasks.QUEUED_TTL` belongs to a lost message and is taken again. Called outside
    a transaction, as its callers are (after their writes commit): a round queued inside one could start
    before its marker is committed, and be skipped."""
    from placement.rollouts import tasks

    now = timezone.now()
    taken = take_markers(placement_ids, "round_queued_at", now)
    queued = [pk for pk in placement_ids if pk in taken]
    for index, placement_id in enumerate(queued):
        try:
            tasks.rolling_update_round.delay(placement_id, requested=now.isoformat())
        except Exception:
            # no message holds the markers of this one and those after it: the next report takes them
            Placement.objects.filter(pk__in=queued[index:], round_queued_at=now).update(round_queued_at=None)
            raise
    return queued


def _queue_again(placement_id: int, requested: datetime | None) -> None:
    """Queue a round asked for by a change again after MIN_REQUEUE, with its marker (with a broker;
    in-process rounds do not overlap)."""
    from placement.rollouts import tasks

    if tasks.rolling_update_round.app.conf.task_always_eager:
        return
    if requested is None:
        # asked for without a marker (the periodic runner, a command): take one now
        requested = timezone.now()
        if not take_markers([placement_id], "round_queued_at", requested):
            return  # a round is queued already
    tasks.rolling_update_round.apply_async(
        (placement_id,), kwargs={"requested": requested.isoformat()}, countdown=MIN_REQUEUE.total_seconds()
    )


def _queue_next(placement: Placement, summary: Mapping[str, Any], now: datetime) -> None:
    from placement.rollouts import tasks

    due = summary.get("requeueAt")
    if not due:
        return
    if tasks.rolling_update_round.app.conf.task_always_eager:
        # in-process nobody holds a queued round: the periodic runner (run_periodic) runs it when due
        logger.info("%s: next rolling-update round at %s", placement, due)
        return
    moment = parse_time(due) or now
    tasks.rolling_update_round.apply_async((placement.pk, due), countdown=service.due_delay(moment, now))


def due(now: datetime) -> list[int]:
    """Dashboard-owned CRPs whose next round is due and that no runner holds: the periodic runner (beat,
    or run_periodic without a broker) runs them."""
    kinds = [family.kind for family in families.all_families() if family.rolls_out_bindings]
    rows = (
        Placement.objects.filter(claims.is_free(CLAIM_PREFIX, now))
        .filter(owner=Owner.DASHBOARD, kind__in=kinds)
        .order_by("pk")
        .values_list("pk", "status__rollout__requeueAt")
    )
    return [pk for pk, moment in rows if moment and (parse_time(moment) or now) <= now]


# --- the hub's reports on the bindings ----------------------------------------------------------------

# upstream rollout controller (handleBindingUpdated): a binding update re-plans its placement when one of
# these conditions changed (or the spec did, which only the dashboard writes for its own bindings)
WATCHED_CONDITIONS = ("DiffReported", "Available")


def reported(hub: Hub, objects: Iterable[Mapping[str, Any]]) -> list[int]:
    """The rolling CRPs of `hub` whose next round these binding objects, as the hub lists them, call for:
    those with a binding whose Available or DiffReported condition is not the one its row holds (the
    last the dashboard read). The hub's answers to a round's own writes are stored by that round, so they
    call for none."""
    by_name = {
        name: obj for obj in objects if isinstance(name := (obj.get("metadata") or {}).get("name"), str)
    }
    rows = ClusterResourceBinding.objects.filter(
        placement__hub=hub, owner=Owner.DASHBOARD, name__in=list(by_name)
    ).values_list("placement_id", "name", "status")
    owed = {pk for pk, name, status in rows if _reports_changed(status, by_name[name].get("status"))}
    placements = Placement.objects.filter(pk__in=owed).order_by("pk")
    return [placement.pk for placement in placements if rolling_crp(placement) is not None]


def _reports_changed(stored: Mapping[str, Any] | None, listed: object) -> bool:
    before, after = _watched(stored), _watched(listed)
    return any(not _same_condition(before.get(kind), after.get(kind)) for kind in WATCHED_CONDITIONS)


def _watched(status: object) -> dict[str, Mapping[str, Any]]:
    """The watched conditions of a binding's status; a hub's report of any other shape has none."""
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conditions, list):
        return {}
    return {c["type"]: c for c in conditions if isinstance(c, dict) and c.get("type") in WATCHED_CONDITIONS}


def _generation(condition: Mapping[str, Any]) -> int:
    """A condition's observedGeneration; one a hub reports that is not an integer counts as none."""
    value = condition.get("observedGeneration")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _same_condition(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """upstream condition.EqualCondition: same status and reason, `old` observed no earlier generation."""
    if old is None or new is None:
        return old is None and new is None
    return (
        old.get("status") == new.get("status")
        and old.get("reason") == new.get("reason")
        and _generation(old) >= _generation(new)
    )


# --- rolling out a new resource snapshot --------------------------------------------------------------


def roll_out_new_snapshot(
    placement: Placement, *, actor: Actor, request: HttpRequest | None = None, now: datetime | None = None
) -> int:
    """Bump a dashboard-owned CRP's resource snapshot index (audited); rolling CRPs then roll every
    bound cluster to it, staged ones use it for their next run. Answers the new index."""
    access.authorise_change(actor, placement, SNAPSHOT_ACTION, request=request, verb="roll it out")
    if not placement.family.rolls_out_bindings:
        raise ValidationError("only Fleet ClusterResourcePlacements have resource snapshots")
    now = timezone.now() if now is None else now
    with transaction.atomic():
        locked = Placement.objects.select_for_update().get(pk=placement.pk)
        before = snapshot_index(locked)
        index = before + 1
        snapshot = {"index": index, "name": f"{locked.name}-{index}-snapshot", "createdAt": format_time(now)}
        locked.status = {**(locked.status or {}), "resourceSnapshot": snapshot}
        Placement.objects.filter(pk=locked.pk).update(status=locked.status)
        created = f"{snapshot['name']} by {history.actor_label(actor)}"
        history.record_events(locked, [{"reason": "ResourceSnapshotCreated", "message": created}], now)
        audit.record(
            actor,
            SNAPSHOT_ACTION,
            locked,
            hub=locked.hub,
            before={"resourceSnapshotIndex": before},
            after={"resourceSnapshotIndex": index},
            request=request,
        )
    placement.status = locked.status
    if rolling_crp(placement) is not None:
        transaction.on_commit(lambda: request_rounds([placement.pk]))
    return index


def cluster_states(placement: Placement, rows: Iterable[ClusterResourceBinding]) -> list[dict[str, Any]]:
    """Each binding as the Rollout section shows it: state, snapshot, and the conditions the rollout
    reads (hub mirrors included, read-only), with the last round's verdict for dashboard-owned CRPs."""
    summary = (placement.status or {}).get("rollout") or {}
    wave = set((summary.get("wave") or {}).get("updated") or [])
    verdicts = {
        "failed": set(summary.get("failed") or []),
        "ready": set(summary.get("ready") or []),
        "stale": set(summary.get("stale") or []),
    }
    states = []
    for row in rows:
        cluster = row.spec.get("targetCluster", "")
        conditions = {
            c.get("type"): c for c in (row.status or {}).get("conditions") or [] if isinstance(c, dict)
        }
        states.append(
            {
                "binding": row.name,
                "cluster": cluster,
                "state": row.spec.get("state", ""),
                "resourceSnapshot": row.spec.get("resourceSnapshotName", ""),
                "conditions": conditions,
                "columns": [_cell(conditions.get(t)) for t in CONDITION_COLUMNS],
                "inWave": cluster in wave,
                "verdict": next((name for name, members in verdicts.items() if cluster in members), ""),
            }
        )
    return states


def _cell(condition: dict[str, Any] | None) -> dict[str, Any] | None:
    """A binding's condition as the Rollout tab shows it, with its tone: a False status for a reason that
    means the work is under way is in progress, as upstream counts it, not a failure."""
    if not condition:
        return None
    if condition.get("status") == "True":
        tone = "ok"
    else:
        tone = "running" if condition.get("reason") in IN_PROGRESS_REASONS else "failing"
    return {**condition, "tone": tone}


def describe(placement: Placement) -> dict[str, Any]:
    """A placement's rollout as the API and the `rollout` command answer it: a Fleet CRP's last round
    and bindings, or an OCM Placement's step-by-step preview."""
    status = placement.status or {}
    if placement.family.previews_rollout:
        preview = rollout_preview.preview(placement, queries.decision_pages(placement), timezone.now())
        return {"kind": placement.kind, "owner": placement.owner, "preview": rollout_preview.as_dict(preview)}
    clusters = [
        {key: value for key, value in state.items() if key != "columns"}
        for state in cluster_states(placement, queries.bindings(placement))
    ]
    return {
        "kind": placement.kind,
        "owner": placement.owner,
        "rolling": rolling_crp(placement) is not None,
        "resourceSnapshot": {
            "name": latest_snapshot_name(placement),
            **(status.get("resourceSnapshot") or {}),
        },
        "rollout": status.get("rollout") or {},
        "clusters": clusters,
    }
