"""Staged update runs: dashboard-owned strategies and runs, their preview, and their executor.

Hub-owned ClusterStagedUpdateStrategies, ClusterStagedUpdateRuns and ClusterApprovalRequests are
mirrors: the hub's own controller executes those runs, so they are never changed here. Runs of
dashboard-owned ClusterResourcePlacements (strategy type External) are executed here, with the same
pure engine the demo hub runs (`placement.scheduler.rollout.execution.reconcile_update_run`):

- `create_strategy` / `create_run`: validated with upstream's messages, authorised, audited.
- `preview(run)`: before a run starts, which clusters go in which stage in which order, or the exact
  initialisation error — the engine's own initialisation, on a copy, nothing written.
- `reconcile(run, now)`: one engine step from the database (bindings' status read back from the hub
  first), applied in one transaction with the run row locked, so two workers never step one run at once.
- `reconcile_run(run_id)`: the runner's step (the Celery task's body): the run claimed (one runner at
  a time, on SQLite too), stepped when due, the next step queued; a failure is stored on the run
  (`last_error`, `attempts`) and retried with a doubling backoff. `due_runs(now)` is what the periodic
  runner (celery beat, or `run_periodic` without a broker) steps; pages never step a run.
- `request_reconcile(run)`: queue a step now (coalesced); `set_run_state(run, state, user)`: Initialize,
  Run or Stop, as `kubectl patch` of spec.state would; `resume_run(run, user)`: step a stuck run now.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils import timezone
from django_stubs_ext import WithAnnotations

from inventory import audit, bulk
from inventory.hubclient import HubError
from inventory.models import AuditEntry, Hub, ManagedCluster
from placement import access, claims, history, hubbindings, queries, service
from placement.families.fleet import CRP_SCHEDULED, FLEET
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    Owner,
    Placement,
    PlacementEvent,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.rollouts import tables, tasks
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.types import PICK_FIXED, PICK_N
from placement.scheduler.labels import dns_subdomain_error
from placement.scheduler.rollout.approval import approval_state
from placement.scheduler.rollout.execution import (
    RUN_FAILED_REASON,
    RUN_PROGRESSING_REASON,
    RUN_STUCK_REASON,
    RUN_WAITING_REASON,
    PolicySnapshot,
    UpdateRunInputs,
    UpdateRunStep,
    reconcile_update_run,
)
from placement.scheduler.rollout.staged import INITIALIZED, parse_staged_update_strategy

logger = logging.getLogger(__name__)

Actor = AbstractBaseUser | str

API_VERSION = service.FLEET_API_VERSION
RUN_KIND, STRATEGY_KIND, APPROVAL_KIND = (
    "ClusterStagedUpdateRun",
    "ClusterStagedUpdateStrategy",
    "ClusterApprovalRequest",
)
INITIALIZE, RUN, STOP = "Initialize", "Run", "Stop"
STATES = (INITIALIZE, RUN, STOP)
# KubeFleet v0.1.2 names the same intents Execute and Pause, and adds Abandon (terminal); a hub-owned
# run may hold any of them, and its pages read them as their Run and Stop counterparts
EXECUTE, PAUSE, ABANDON = "Execute", "Pause", "Abandon"
HUB_STATES = (*STATES, EXECUTE, PAUSE, ABANDON)
# a run in one of these states may still change on its own: its page refreshes itself
MOVING_STATES = frozenset({RUN, STOP, EXECUTE, PAUSE})
EXTERNAL = "External"
# upstream CRD rules on spec.state (oldSelf -> self)
FORBIDDEN_TRANSITIONS = frozenset({(INITIALIZE, STOP), (RUN, INITIALIZE), (STOP, INITIALIZE)})
# upstream CRD: size(self.metadata.name) < 64, placementName MaxLength=255
MAX_RUN_NAME, MAX_PLACEMENT_NAME = 63, 255

STRATEGY_DENIED = "Adding a strategy needs the admin role on a cluster set of its hub."
RUN_DENIED = "Changing a staged update run needs the admin role on a cluster set its placement can use."
# A due marker older than this belongs to a lost message: the next request (or beat) queues again.
QUEUED_TTL = timedelta(minutes=2)
# A failed step is tried again this much later, doubling with each failure in a row up to RETRY_MAX.
RETRY_FIRST = timedelta(seconds=5)
RETRY_MAX = timedelta(minutes=5)
# How long a runner holds a run it steps; longer than a step can take (its hub requests time out sooner).
CLAIM_TTL = timedelta(minutes=5)
# A running run whose step is this late has no runner taking it: its page offers Resume.
STUCK_AFTER = timedelta(minutes=1)
RESUME_ACTION = "run.resume"
EVENT_REASON = "StagedUpdateRun"


class ReadOnlyRun(PermissionDenied):
    """A hub-owned run: its hub's controller executes it; change it on the hub."""


# --- authorisation --------------------------------------------------------------------------------


# --- objects as the engine and the API see them ----------------------------------------------------


def _object(kind: str, name: str, labels: Mapping[str, str], spec: Any, **extra: Any) -> dict[str, Any]:
    metadata = {"name": name, "labels": dict(labels), **extra.pop("metadata", {})}
    spec = copy.deepcopy(spec)
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec, **extra}


def _with_status(kind: str, row: StagedUpdateRun | ApprovalRequest) -> dict[str, Any]:
    metadata = {"generation": row.generation}
    return _object(kind, row.name, row.labels, row.spec, metadata=metadata, status=copy.deepcopy(row.status))


def run_object(run: StagedUpdateRun) -> dict[str, Any]:
    """The ClusterStagedUpdateRun as Kubernetes holds it."""
    return _with_status(RUN_KIND, run)


def strategy_object(strategy: StagedUpdateStrategy) -> dict[str, Any]:
    return _object(STRATEGY_KIND, strategy.name, strategy.labels, strategy.spec)


def approval_object(request: ApprovalRequest) -> dict[str, Any]:
    return _with_status(APPROVAL_KIND, request)


def policy_snapshot(placement: Placement) -> PolicySnapshot | None:
    """The dashboard CRP's latest policy snapshot as its scheduler stored it (None: never scheduled).

    Scheduled is the CRP's scheduled condition, which `service.reschedule` copies from the snapshot's.
    """
    stored = (placement.status or {}).get("policySnapshot")
    if not isinstance(stored, Mapping) or "index" not in stored:
        return None
    index = str(stored["index"])
    scheduled = any(
        c.get("type") == CRP_SCHEDULED and c.get("status") == "True"
        for c in (placement.status or {}).get("conditions") or ()
    )
    policy = (placement.spec or {}).get("policy") or {}
    count = None
    if policy.get("placementType") == PICK_N:
        count = int(policy.get("numberOfClusters") or 0)
    elif policy.get("placementType") == PICK_FIXED:
        count = len(policy.get("clusterNames") or ())
    return PolicySnapshot(f"{placement.name}-{index}", index, scheduled, count)


def latest_resource_snapshot_index(placement: Placement) -> str:
    """What `resourceSnapshotIndex: ""` means: the CRP's current resource snapshot (the rollout action
    of placement.rollouts.rolling bumps `status.resourceSnapshot.index`; 0 until then)."""
    snapshot = (placement.status or {}).get("resourceSnapshot") or {}
    return str(snapshot.get("index", 0))


def _binding(row: ClusterResourceBinding, hub_object: Mapping[str, Any] | None) -> dict[str, Any]:
    """The row as the engine reads it: spec from the row (ours), metadata.generation and status from the
    hub's object; a binding not on the hub (yet) is at the generation our own RolloutStarted observed."""
    if hub_object is not None:
        generation = (hub_object.get("metadata") or {}).get("generation") or 1
        status = hub_object.get("status") or {}
    else:
        observed = [c.get("observedGeneration") or 1 for c in (row.status or {}).get("conditions") or ()]
        generation, status = max(observed, default=1), row.status or {}
    return _object(
        "ClusterResourceBinding",
        row.name,
        row.labels,
        row.spec,
        metadata={"generation": generation},
        status=copy.deepcopy(status),
    )


def _members(hub: Hub) -> list[dict[str, Any]]:
    rows = ManagedCluster.objects.filter(hub=hub, kind=FLEET.cluster_kind)
    return [{"metadata": {"name": n, "labels": labels}} for n, labels in rows.values_list("name", "labels")]


def _run_approvals(run: StagedUpdateRun) -> dict[str, dict[str, Any]]:
    # by name: the engine also sees a request of another run that holds a name this run would use
    rows = ApprovalRequest.objects.filter(hub=run.hub).filter(
        Q(run_id=run.pk) | Q(name__startswith=f"{run.name}-")
    )
    return {row.name: approval_object(row) for row in rows}


def run_placement(run: StagedUpdateRun) -> Placement | None:
    """The CRP the run names on its hub (the stored link, or found by name)."""
    if run.placement_id is not None:
        return run.placement
    return Placement.objects.filter(hub=run.hub, kind=FLEET.kind, name=run.placement_name).first()


def inputs(run: StagedUpdateRun, *, pull: bool, obj: Mapping[str, Any] | None = None) -> UpdateRunInputs:
    """What one engine step reads, from the database; `pull`: bindings' status read from the hub first
    (raises HubError). The preview does without (initialisation reads no binding status) and passes
    the run object `obj` to initialise instead of the stored one."""
    placement = run_placement(run)
    strategy = StagedUpdateStrategy.objects.filter(hub=run.hub, name=run.strategy_name).first()
    bindings: list[dict[str, Any]] = []
    if placement is not None:
        pulled = hubbindings.pull_binding_status(placement) if pull else {}
        rows = placement.bindings.filter(owner=placement.owner).order_by("name")
        bindings = [_binding(row, pulled.get(row.name)) for row in rows]
    return UpdateRunInputs(
        run=run_object(run) if obj is None else obj,
        strategy=strategy_object(strategy) if strategy is not None else None,
        placement=_placement_object(placement),
        policy_snapshot=policy_snapshot(placement) if placement is not None else None,
        bindings=bindings,
        member_clusters=_members(run.hub),
        approval_requests=_run_approvals(run),
        latest_resource_snapshot_index=latest_resource_snapshot_index(placement) if placement else "0",
    )


def _placement_object(placement: Placement | None) -> dict[str, Any] | None:
    if placement is None:
        return None
    return {**service.manifest(placement), "status": copy.deepcopy(placement.status or {})}


# --- creating strategies and runs ------------------------------------------------------------------


def _name_error(name: str, limit: int | None = None) -> str | None:
    if limit is not None and len(name) > limit:
        return f"Too long: may not be longer than {limit}"
    if (why := dns_subdomain_error(name)) is not None:
        return f'Invalid value: "{name}": {why}'
    return None


def _check_name(model: type[StagedUpdateRun | StagedUpdateStrategy], hub: Hub, name: str, kind: str) -> None:
    if (why := _name_error(name, MAX_RUN_NAME if model is StagedUpdateRun else None)) is not None:
        raise ValidationError({"metadata.name": why})
    if model.objects.filter(hub=hub, name=name).exists():
        raise ValidationError({"metadata.name": f"{kind} {name} already exists on hub {hub.name}"})


def create_strategy(
    *, hub: Hub, name: str, spec: Any, actor: Actor, request: HttpRequest | None = None
) -> StagedUpdateStrategy:
    """A dashboard-owned ClusterStagedUpdateStrategy of `hub`, checked with the CRD's rules."""
    access.authorise(
        actor,
        lambda user: access.can_add_strategy(user, hub),
        STRATEGY_DENIED,
        action="strategy.create",
        target=StagedUpdateStrategy(hub=hub, name=name),
        request=request,
    )
    _check_name(StagedUpdateStrategy, hub, name, STRATEGY_KIND)
    try:
        parse_staged_update_strategy({"metadata": {"name": name}, "spec": spec})
    except ManifestError as exc:
        raise ValidationError({exc.field: exc.message}) from None
    strategy = StagedUpdateStrategy.objects.create(hub=hub, owner=Owner.DASHBOARD, name=name, spec=dict(spec))
    audit.record(actor, "strategy.create", strategy, hub=hub, after=strategy.spec, request=request)
    logger.info("%s %s created on hub %s by %s", STRATEGY_KIND, name, hub, history.actor_label(actor))
    return strategy


def run_spec(spec: Any) -> dict[str, Any]:
    """A run spec with the CRD's checks and defaults (state: Initialize); raises ValidationError."""
    if not isinstance(spec, Mapping):
        raise ValidationError({"spec": "Required value"})
    cleaned: dict[str, Any] = {}
    for key in ("placementName", "stagedRolloutStrategyName"):
        value = spec.get(key)
        if not isinstance(value, str) or not value:
            raise ValidationError({f"spec.{key}": "Required value"})
        cleaned[key] = value
    if len(cleaned["placementName"]) > MAX_PLACEMENT_NAME:
        too_long = f"Too long: may not be longer than {MAX_PLACEMENT_NAME}"
        raise ValidationError({"spec.placementName": too_long})
    index = spec.get("resourceSnapshotIndex", "")
    if not isinstance(index, str):
        raise ValidationError({"spec.resourceSnapshotIndex": "must be a string"})
    cleaned["resourceSnapshotIndex"] = index
    cleaned["state"] = _state(spec.get("state") or INITIALIZE)
    return cleaned


def _state(state: Any) -> str:
    if state not in STATES:
        supported = ", ".join(f'"{s}"' for s in STATES)
        raise ValidationError({"spec.state": f'Unsupported value: "{state}": supported values: {supported}'})
    return str(state)


def external_placement(hub: Hub, name: str, actor: Actor = "") -> Placement:
    """The dashboard-owned External CRP a dashboard run can drive, or a ValidationError saying why not;
    for a user actor, among the CRPs their roles show (others are "not found", as if absent)."""
    crps: QuerySet[Placement] = Placement.objects.filter(hub=hub, kind=FLEET.kind, name=name)
    if isinstance(actor, AbstractBaseUser):
        crps = access.visible(crps, actor)
    crp = crps.first()
    if crp is None:
        missing = f"ClusterResourcePlacement {name} not found on hub {hub.name}"
        raise ValidationError({"spec.placementName": missing})
    if crp.read_only:
        raise ValidationError(
            {
                "spec.placementName": f"ClusterResourcePlacement {name} is owned by hub {hub.name}: "
                "create its runs on the hub, whose controller executes them"
            }
        )
    strategy_type = ((crp.spec or {}).get("strategy") or {}).get("type") or "RollingUpdate"
    if strategy_type != EXTERNAL:
        raise ValidationError(
            {
                "spec.placementName": f"ClusterResourcePlacement {name} has strategy type {strategy_type}; "
                "a staged update run needs spec.strategy.type External"
            }
        )
    return crp


def create_run(
    *, hub: Hub, name: str, spec: Any, actor: Actor, request: HttpRequest | None = None
) -> StagedUpdateRun:
    """A dashboard-owned ClusterStagedUpdateRun of `hub`, then its first step (initialisation) queued."""
    draft = StagedUpdateRun(hub=hub, owner=Owner.DASHBOARD, name=name)

    def authorise(check: Callable[[access.User], bool], reason: str) -> None:
        access.authorise(actor, check, reason, action="run.create", target=draft, request=request)

    authorise(access.administers_any, access.ADMIN_NEEDED)
    cleaned = run_spec(spec)
    placement = external_placement(hub, cleaned["placementName"], actor)
    authorise(lambda user: access.can_change(user, placement), RUN_DENIED)
    # only now: whether a name is taken on the hub is for those who may run its placements
    _check_name(StagedUpdateRun, hub, name, RUN_KIND)
    if not StagedUpdateStrategy.objects.filter(hub=hub, name=cleaned["stagedRolloutStrategyName"]).exists():
        strategy = cleaned["stagedRolloutStrategyName"]
        raise ValidationError(
            {"spec.stagedRolloutStrategyName": f"{STRATEGY_KIND} {strategy} not found on hub {hub.name}"}
        )
    run = StagedUpdateRun.objects.create(
        hub=hub, owner=Owner.DASHBOARD, name=name, spec=cleaned, placement=placement, generation=1
    )
    audit.record(actor, "run.create", run, hub=hub, after=run.spec, request=request)
    logger.info("%s %s created on hub %s by %s", RUN_KIND, name, hub, history.actor_label(actor))
    request_reconcile(run)
    return run


def set_run_state(
    run: StagedUpdateRun, state: str, user: Actor, request: HttpRequest | None = None
) -> StagedUpdateRun:
    """Set a dashboard-owned run's spec.state (Initialize, Run or Stop) as `kubectl patch` would: the
    CRD's transition rules apply, generation is bumped, the change is audited and a step queued.
    Setting the state it has is a no-op (audited as such)."""
    if run.read_only:
        raise ReadOnlyRun(
            f"{RUN_KIND} {run.name} belongs to hub {run.hub.name}; its controller runs it, so change its "
            "state on the hub (kubectl patch)"
        )
    access.authorise(
        user,
        lambda actor: access.can_change_run(actor, run),
        RUN_DENIED,
        action="run.state",
        target=run,
        request=request,
    )
    state = _state(state)
    with transaction.atomic():
        locked = StagedUpdateRun.objects.select_for_update().get(pk=run.pk)
        before = locked.spec.get("state") or INITIALIZE
        if (before, state) in FORBIDDEN_TRANSITIONS:
            raise ValidationError(
                {"spec.state": f"invalid state transition: cannot transition from {before} to {state}"}
            )
        if before == state:
            audit.record(
                user,
                "run.state",
                locked,
                hub=locked.hub,
                before=before,
                after=state,
                outcome=AuditEntry.Outcome.NO_OP,
                request=request,
            )
            return locked
        locked.spec = {**locked.spec, "state": state}
        locked.generation += 1
        locked.save(update_fields=["spec", "generation", "updated"])
        audit.record(user, "run.state", locked, hub=locked.hub, before=before, after=state, request=request)
    logger.info("%s %s: state %s -> %s by %s", RUN_KIND, run.name, before, state, history.actor_label(user))
    request_reconcile(locked)
    return locked


# --- preview ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Preview:
    """What initialisation gives: the status with stagesStatus (shown as stages), or why it fails."""

    status: dict[str, Any]
    error: str = ""
    # True when the status shown is the run's own (it is initialised already), not a dry run
    stored: bool = False


def initialized_condition(status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == INITIALIZED), None)


def _outcome(status: dict[str, Any], condition: Mapping[str, Any], *, stored: bool) -> Preview:
    """Initialized=True: the stages; False: its message, the exact initialisation error."""
    failed = condition.get("status") != "True"
    error = str(condition.get("message") or condition.get("reason")) if failed else ""
    return Preview(status, error=error, stored=stored)


def preview(run: StagedUpdateRun, now: datetime | None = None) -> Preview:
    """Which clusters go in which stage, in which order, or the exact initialisation error. A run
    initialised already shows its own outcome; otherwise the engine initialises a copy of a
    dashboard-owned run in state Initialize (a hub-owned one waits for its hub)."""
    condition = initialized_condition(run.status or {})
    if condition is not None:
        return _outcome(copy.deepcopy(run.status), condition, stored=True)
    if run.read_only:
        return Preview({}, error=f"hub {run.hub.name} has not initialised this run yet; its controller will")
    dry = {**run_object(run), "spec": {**run.spec, "state": INITIALIZE}, "status": {}}
    try:
        step = reconcile_update_run(inputs(run, pull=False, obj=dry), now or timezone.now())
    except ManifestError as exc:
        return Preview({}, error=f"{exc.field}: {exc.message}")
    condition = initialized_condition(step.status)
    if condition is None:
        # a transient binding state: upstream retries initialisation later
        return Preview({}, error=" ".join(step.events) or "initialisation has to wait; it is retried")
    return _outcome(step.status, condition, stored=False)


# --- executing -------------------------------------------------------------------------------------


def reconcile(
    run: StagedUpdateRun, now: datetime | None = None, *, claim_marker: datetime | None = None
) -> UpdateRunStep | None:
    """One engine step of a dashboard-owned run, applied; None for hub-owned or deleted runs.

    The run row is locked for the whole step (hub reads and writes included); `reconcile_run` also holds
    the run's claim, which keeps a second runner out on SQLite too. A hub failure rolls the step back
    and raises HubError. `claim_marker` is the due time the claim set: a different one found when the
    step is written was requested meanwhile (an approval, a state change) and stays due.
    """
    now = now or timezone.now()
    with transaction.atomic():
        locked = (
            StagedUpdateRun.objects.select_for_update(of=("self",))
            .select_related("hub", "placement__hub")
            .filter(pk=run.pk, owner=Owner.DASHBOARD)
            .first()
        )
        if locked is None:
            return None
        step = reconcile_update_run(inputs(locked, pull=True), now)
        _apply(locked, step, now, claim_marker)
    run.status, run.requeue_at = locked.status, locked.requeue_at
    run.attempts, run.last_error = locked.attempts, locked.last_error
    return step


def _apply(run: StagedUpdateRun, step: UpdateRunStep, now: datetime, claim_marker: datetime | None) -> None:
    """Write one step: the run's status and next due time, bindings (rows, then the hub), approvals."""
    placement = run_placement(run)
    events = list(step.events)
    if placement is not None:
        events += _write_bindings(placement, step)
    _write_approvals(run, step)
    due = now + step.requeue_after if step.requeue_after is not None else None
    requested = StagedUpdateRun.objects.filter(pk=run.pk).values_list("requeue_at", flat=True).first()
    if claim_marker is not None and requested is not None and requested != claim_marker:
        due = requested if due is None else min(due, requested)
    run.status, run.requeue_at, run.attempts, run.last_error = step.status, due, 0, ""
    run.save(update_fields=["status", "requeue_at", "attempts", "last_error", "updated"])
    if placement is not None and events:
        records = [{"reason": EVENT_REASON, "message": text, "related": run.name} for text in events]
        history.record_events(placement, records, now)


def _write_bindings(placement: Placement, step: UpdateRunStep) -> list[str]:
    """Write the step's binding changes; answers what the run's events should say about the writes (the
    409 Conflicts met on the hub and resolved by writing again on the fresh objects)."""
    events = []
    if step.binding_updates:
        rows = {row.name: row for row in placement.bindings.filter(owner=Owner.DASHBOARD)}
        changed = []
        for update in step.binding_updates:
            row = rows.get(update.name)
            if row is None:
                continue  # deleted meanwhile; the next step sees it gone
            row.spec = dict(update.spec)
            row.status = {**(row.status or {}), "conditions": [dict(c) for c in update.conditions]}
            changed.append(row)
        bulk.update_instances(changed, ["spec", "status"])
        report = hubbindings.push_bindings(placement, changed)
        if report.conflicts:
            names = ", ".join(sorted(set(report.conflicts)))
            events.append(
                f"Resolved {len(report.conflicts)} write conflicts on the hub (another writer changed the "
                f"binding first; written again on the fresh object): {names}"
            )
    if step.bindings_to_delete:
        hubbindings.delete_bindings(placement, step.bindings_to_delete)
    return events


def _write_approvals(run: StagedUpdateRun, step: UpdateRunStep) -> None:
    for obj in step.approvals_to_create:
        metadata = obj.get("metadata") or {}
        ApprovalRequest.objects.create(
            hub=run.hub,
            owner=Owner.DASHBOARD,
            run=run,
            name=metadata["name"],
            labels=dict(metadata.get("labels") or {}),
            spec=dict(obj.get("spec") or {}),
            status=dict(obj.get("status") or {}),
            generation=int(metadata.get("generation") or 1),
            state=approval_state(obj),
        )
    if step.approvals_to_accept:
        rows = {
            r.name: r
            for r in ApprovalRequest.objects.filter(hub=run.hub, owner=Owner.DASHBOARD).filter(
                name__in=[a.name for a in step.approvals_to_accept]
            )
        }
        for acceptance in step.approvals_to_accept:
            row = rows.get(acceptance.name)
            if row is None:
                continue
            row.status = dict(acceptance.status)
            row.state = approval_state(approval_object(row))
            row.save(update_fields=["status", "state", "updated"])


def retry_delay(attempts: int) -> timedelta:
    """How long after its `attempts`-th failure in a row a step is tried again: doubling, capped."""
    doublings: int = 2 ** max(attempts - 1, 0)
    return min(RETRY_FIRST * doublings, RETRY_MAX)


def reconcile_run(run_id: int, now: datetime | None = None, *, force: bool = False) -> dict[str, Any]:
    """The task's body: claim the run, step it if it is due (`force`: now anyway), queue the next step.

    Whatever fails (the hub, an object the engine cannot read, the database) is stored on the run
    (`last_error`, `attempts`), shown as a Warning event, and the step is due again after a doubling
    backoff, so an unfinished run always has its next step due. Answers what happened.
    """
    now = now or timezone.now()
    run = StagedUpdateRun.objects.select_related("hub", "placement__hub").filter(pk=run_id).first()
    if run is None:
        return {"state": "gone"}
    if run.read_only:
        return {"state": "hub-owned"}
    due = Q() if force else Q(requeue_at__lte=now)
    if not force and (run.requeue_at is None or run.requeue_at > now):
        return {"state": "not-due"}
    # the claim moves the due time to its own end: should this runner die mid-step, the run is due again
    # once the claim has run out
    marker = timezone.now() + CLAIM_TTL
    scope = due & Q(owner=Owner.DASHBOARD)
    with claims.claimed(StagedUpdateRun, run.pk, ttl=CLAIM_TTL, scope=scope, requeue_at=marker) as owner:
        if owner is None:
            return {"state": "busy"}
        try:
            step = reconcile(run, now, claim_marker=marker)
        except Exception as exc:  # noqa: BLE001 - every failure is stored and retried, none is lost
            return _failed(run, exc, now)
    if step is None:
        return {"state": "gone"}
    if run.requeue_at is not None:
        tasks.schedule_run_reconcile(run.pk, run.requeue_at, now)
    after = step.requeue_after.total_seconds() if step.requeue_after is not None else None
    return {"state": "reconciled", "requeue_after": after, "events": list(step.events)}


def _failed(run: StagedUpdateRun, exc: Exception, now: datetime) -> dict[str, Any]:
    """Store the failure on the run and make its step due again after the backoff."""
    if isinstance(exc, HubError):
        error = str(exc)  # names the hub and the request
    elif isinstance(exc, ManifestError):
        error = f"cannot read {exc.field}: {exc.message}"
    else:
        logger.exception("%s %s: the step failed", RUN_KIND, run.name)
        error = f"{type(exc).__name__}: {exc}"
    attempts = run.attempts + 1
    due = now + retry_delay(attempts)
    StagedUpdateRun.objects.filter(pk=run.pk).update(requeue_at=due, attempts=attempts, last_error=error)
    run.requeue_at, run.attempts, run.last_error = due, attempts, error
    _warn(run, f"the step failed (attempt {attempts}) and is retried at {due:%H:%M:%S}: {error}", now)
    tasks.schedule_run_reconcile(run.pk, due, now)
    return {"state": "failed", "error": error, "attempts": attempts, "retry_at": due.isoformat()}


def _warn(run: StagedUpdateRun, message: str, now: datetime) -> None:
    logger.warning("%s %s: %s", RUN_KIND, run.name, message)
    placement = run_placement(run)
    if placement is not None:
        event = {"type": PlacementEvent.Type.WARNING, "reason": EVENT_REASON, "related": run.name}
        history.record_events(placement, [{**event, "message": message}], now)


def _free(now: datetime) -> Q:
    """No step is due yet (nothing, or a timed one later), or the due marker is stale."""
    return Q(requeue_at__isnull=True) | Q(requeue_at__gt=now) | Q(requeue_at__lt=now - QUEUED_TTL)


def request_reconcile(run: StagedUpdateRun) -> bool:
    """Queue one step of a dashboard-owned run now unless one is due already; answers whether it queued.

    `requeue_at` is the due marker: set to now with a compare-and-set UPDATE, so a burst of requests
    (approvals, state changes) queues one step; a step running meanwhile leaves it due. Without a broker
    the step runs here and now.
    """
    now = timezone.now()
    mine = StagedUpdateRun.objects.filter(_free(now), pk=run.pk, owner=Owner.DASHBOARD)
    if not mine.update(requeue_at=now):
        return False
    tasks.reconcile_run.delay(run.pk)
    return True


def due_runs(now: datetime) -> QuerySet[StagedUpdateRun]:
    """Dashboard-owned runs whose next step is due and that no runner holds: the periodic runner (beat,
    or run_periodic without a broker) steps them."""
    due = Q(requeue_at__lte=now) & claims.is_free("", now)
    return StagedUpdateRun.objects.filter(due, owner=Owner.DASHBOARD).only("pk").order_by("requeue_at", "pk")


def needs_resume(run: StagedUpdateRun, now: datetime | None = None) -> bool:
    """A dashboard-owned run that should be moving but is not: its last step failed, or it is running
    with no step due, or its step is long overdue (no runner took it)."""
    if run.read_only or tables.RunSummary.of(run.status or {}).finished:
        return False
    now = now or timezone.now()
    if run.attempts:
        return True
    if (run.spec.get("state") or INITIALIZE) != RUN:
        return False
    return run.requeue_at is None or run.requeue_at < now - STUCK_AFTER


def resume_run(run: StagedUpdateRun, actor: Actor, request: HttpRequest | None = None) -> StagedUpdateRun:
    """Step a dashboard-owned run now, whatever its due time and failed attempts say (audited); a finished
    run is left alone (audited as a no-op). A live runner's claim is respected: its step comes first."""
    if run.read_only:
        raise ReadOnlyRun(f"{RUN_KIND} {run.name} belongs to hub {run.hub.name}; its controller runs it")
    access.authorise(
        actor,
        lambda user: access.can_change_run(user, run),
        RUN_DENIED,
        action=RESUME_ACTION,
        target=run,
        request=request,
    )
    now = timezone.now()
    before = {"requeueAt": run.requeue_at and run.requeue_at.isoformat(), "attempts": run.attempts}
    if tables.RunSummary.of(run.status or {}).finished:
        audit.record(
            actor,
            RESUME_ACTION,
            run,
            hub=run.hub,
            before=before,
            outcome=AuditEntry.Outcome.NO_OP,
            request=request,
        )
        return run
    StagedUpdateRun.objects.filter(pk=run.pk).update(requeue_at=now, attempts=0)
    audit.record(
        actor,
        RESUME_ACTION,
        run,
        hub=run.hub,
        before=before,
        after={"requeueAt": now.isoformat()},
        request=request,
    )
    logger.info("%s %s: resumed by %s", RUN_KIND, run.name, history.actor_label(actor))
    tasks.reconcile_run.delay(run.pk)
    run.refresh_from_db()
    return run


# --- what the pages and the API show ----------------------------------------------------------------


class PendingApprovals(TypedDict):
    """What `with_pending_approvals` adds to each run."""

    pending_approvals: int


if TYPE_CHECKING:  # WithAnnotations takes a TypedDict only in annotations, not at run time
    RunWithApprovals = WithAnnotations[StagedUpdateRun, PendingApprovals]


def with_pending_approvals(runs: QuerySet[StagedUpdateRun]) -> QuerySet[RunWithApprovals]:
    """Runs with hub and placement, and `pending_approvals`: their requests not accepted yet (one query)."""
    pending = (
        ApprovalRequest.objects.filter(run=OuterRef("pk"))
        .exclude(state=ApprovalRequest.State.ACCEPTED)
        .order_by()
        .values("run")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    return runs.select_related("hub", "placement").annotate(pending_approvals=Coalesce(Subquery(pending), 0))


# What a run's conditions and last step say of its progress, for the runs list's filter and the home page.
ACTIVE, STUCK = "active", "stuck"
PROGRESS_CHOICES = ((ACTIVE, "active (progressing or waiting)"), (STUCK, "stuck or failed"))


def _stuck() -> Q:
    """Stuck (the engine's Progressing=False UpdateRunStuck), failed (UpdateRunFailed, or initialisation
    failed), or a dashboard-owned run whose last step failed and is being retried."""
    given_up = queries.has_condition(
        StagedUpdateRun, ("Progressing",), reasons=(RUN_STUCK_REASON, RUN_FAILED_REASON)
    )
    failed_init = queries.has_condition(StagedUpdateRun, (INITIALIZED,), statuses=("False",))
    return Q(given_up) | Q(failed_init) | ~Q(last_error="")


def filter_progress(runs: QuerySet[StagedUpdateRun], progress: str) -> QuerySet[StagedUpdateRun]:
    """Runs that are stuck, or active: progressing, or waiting on a task (an approval, a timed wait)."""
    if progress == STUCK:
        return runs.filter(_stuck())
    moving = queries.has_condition(
        StagedUpdateRun, ("Progressing",), reasons=(RUN_PROGRESSING_REASON, RUN_WAITING_REASON)
    )
    return runs.filter(Q(moving)).exclude(_stuck())


def next_states(run: StagedUpdateRun) -> list[str]:
    """The states a user can set now: none for hub-owned or finished runs, never the current one or a
    transition the CRD forbids."""
    if run.read_only or tables.RunSummary.of(run.status or {}).finished:
        return []
    current = run.spec.get("state") or INITIALIZE
    return [s for s in STATES if s != current and (current, s) not in FORBIDDEN_TRANSITIONS]


def run_events(run: StagedUpdateRun, limit: int = 50) -> QuerySet[PlacementEvent]:
    """What the executor did to the run (and hub failures), newest first, from its placement's events."""
    placement = run_placement(run)
    if placement is None:
        return PlacementEvent.objects.none()
    return placement.events.filter(related=run.name)[:limit]


def run_counts(strategies: list[StagedUpdateStrategy]) -> dict[tuple[int, str], int]:
    """How many runs name each strategy, by (hub id, strategy name), for a page of strategies."""
    runs = StagedUpdateRun.objects.filter(
        hub_id__in={s.hub_id for s in strategies},
        spec__stagedRolloutStrategyName__in=[s.name for s in strategies],
    )
    counts: dict[tuple[int, str], int] = {}
    for hub_id, spec in runs.values_list("hub_id", "spec"):
        key = (hub_id, str(spec.get("stagedRolloutStrategyName")))
        counts[key] = counts.get(key, 0) + 1
    return counts
