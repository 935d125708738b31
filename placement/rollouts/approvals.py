"""Approving staged update runs: the inbox of open ClusterApprovalRequests and the Approve button.

Hub-owned requests are approved on the hub the way `kubectl fleet approve` does it: read the object
fresh, merge-patch its status subresource with `Approved=True` whose observedGeneration is the
object's current generation (a stale one is ignored by the hub), read it back, and store what the hub
now has. The hub's run controller then sets `ApprovalAccepted`. Dashboard-owned requests get the same
condition in the database; the dashboard's run executor accepts them (placement.rollouts.runs).

Every attempt is audited (ok, no-op, denied or failed) with the actor and the hub's answer. Approving
an approved request is a no-op, not an error; a row lock serialises approvers of one request so two
people approving at once give one approval and one no-op.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from inventory import audit, roles
from inventory.hubclient import APPROVAL_REQUEST, KINDS_BY_NAME, HubClient, HubError
from inventory.hubwrites import update_with_retry
from inventory.models import AuditEntry, Hub
from inventory.sync import apply_event
from placement.models import ApprovalRequest, Owner, StagedUpdateRun
from placement.rollouts import runs as rollouts
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.rollout.approval import APPROVED, PENDING, approval_state, approved_condition
from placement.scheduler.timeutil import parse_time

ACTION = "approval.approve"
DENIED = "Approving needs the admin role on cluster sets that hold every cluster of the stage."
OPEN_STATES = (ApprovalRequest.State.PENDING, ApprovalRequest.State.APPROVED)
TASK_LISTS = {"beforeStage": "beforeStageTaskStatus", "afterStage": "afterStageTaskStatus"}


class ApprovalFailed(Exception):
    """The hub could not be read or written, or did not keep the approval; nothing was approved."""


@dataclass(frozen=True)
class ApprovalResult:
    """What one Approve did: `outcome` is AuditEntry.Outcome.OK or NO_OP; `request` is the stored row."""

    request: ApprovalRequest
    outcome: str
    message: str

    @property
    def state(self) -> str:
        return self.request.state


@dataclass(frozen=True)
class InboxEntry:
    """One row of the inbox: the request and what the page shows about it."""

    request: ApprovalRequest
    task: str  # "before" or "after" the stage
    clusters: tuple[str, ...]
    waiting_since: datetime | None
    can_approve: bool
    # upstream has no Reject: a dashboard-owned run waiting here can be stopped instead (Stop run)
    can_stop_run: bool


# --- who may approve, and what they see ---------------------------------------------------------------


def can_approve(user: roles.User, request: ApprovalRequest) -> bool:
    """Admins of cluster sets that together hold every cluster of the request's stage, and superusers
    (approving a rollout that touches a set's clusters is the set admin's call)."""
    return roles.can_approve_clusters(user, request.hub, stage_clusters(request))


def visible_requests(user: roles.User) -> QuerySet[ApprovalRequest]:
    """The approval requests the user may see (those of runs of placements they see), oldest first
    (the longest waiting on top)."""
    rows = ApprovalRequest.objects.select_related("hub", "run").order_by("created", "pk")
    return roles.restrict(rows, user)


def pending_approvals(user: roles.User) -> QuerySet[ApprovalRequest]:
    """The inbox: hub- and dashboard-owned requests not accepted yet (pending, or approved and waiting)."""
    return visible_requests(user).filter(state__in=OPEN_STATES)


def pending_count(user: roles.User) -> int:
    """Requests the user sees that nobody has approved yet: the navigation bar's badge (one count)."""
    return roles.restrict(ApprovalRequest.objects.filter(state=ApprovalRequest.State.PENDING), user).count()


def inbox_entries(rows: Iterable[ApprovalRequest], user: roles.User) -> list[InboxEntry]:
    """The inbox rows; who may approve which is decided for the whole page at once (two queries)."""
    stages = {row: stage_clusters(row) for row in rows}
    allowed = _approvable(user, stages)
    running = [run.pk for row in stages if (run := row.run) is not None and _stoppable(run)]
    stoppable = _administered_runs(user, running)
    return [
        InboxEntry(
            row,
            task_kind(row),
            names,
            waiting_since(row),
            can_approve=allowed[row.pk],
            can_stop_run=row.run_id in stoppable,
        )
        for row, names in stages.items()
    ]


def approvable(user: roles.User, rows: Iterable[ApprovalRequest]) -> dict[int, bool]:
    """`can_approve` for a whole page of requests at once (two queries at most), by request pk."""
    return _approvable(user, {row: stage_clusters(row) for row in rows})


def _approvable(user: roles.User, stages: dict[ApprovalRequest, tuple[str, ...]]) -> dict[int, bool]:
    allowed = roles.can_approve_stages(user, [(row.hub_id, names) for row, names in stages.items()])
    return {row.pk: may for row, may in zip(stages, allowed, strict=True)}


def _administered_runs(user: roles.User, run_ids: list[int]) -> set[int]:
    """Which of these runs `user` may stop: one query, none without runs."""
    if not run_ids:
        return set()
    runs = roles.restrict(StagedUpdateRun.objects.filter(pk__in=run_ids), user, roles.ADMIN)
    return set(runs.values_list("pk", flat=True))


def _stoppable(run: StagedUpdateRun) -> bool:
    """A running dashboard-owned run (hub-owned runs change on the hub)."""
    return run.owner == Owner.DASHBOARD and run.spec.get("state") == rollouts.RUN


def task_kind(row: ApprovalRequest) -> str:
    """ "before" or "after": the taskType label, else which task list of the run's stage names it."""
    if row.task_type in TASK_LISTS:
        return row.task_type.removesuffix("Stage")
    task = _task_status(row)
    return task[0] if task else "after"  # requests older than before-stage tasks were all after-stage


def stage_clusters(row: ApprovalRequest) -> tuple[str, ...]:
    """The clusters of the request's stage, in the run's update order."""
    stage = _stage_status(row)
    return tuple(str(cluster.get("clusterName")) for cluster in (stage or {}).get("clusters") or ())


def waiting_since(row: ApprovalRequest) -> datetime | None:
    """When the run created the request (its task's ApprovalRequestCreated), else when we first saw it."""
    task = _task_status(row)
    for condition in (task[1] if task else {}).get("conditions") or ():
        if condition.get("type") == "ApprovalRequestCreated" and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime")) or row.created
    return row.created


def _stage_status(row: ApprovalRequest) -> Mapping[str, Any] | None:
    status = row.run.status if row.run is not None else {}
    stages: list[Mapping[str, Any]] = status.get("stagesStatus") or []
    for stage in stages:
        if stage.get("stageName") == row.stage_name:
            return stage
    return None


def _task_status(row: ApprovalRequest) -> tuple[str, Mapping[str, Any]] | None:
    """("before" | "after", the run's task status) of the Approval task that names this request."""
    stage = _stage_status(row) or {}
    for task_type, field in TASK_LISTS.items():
        for task in stage.get(field) or ():
            if task.get("approvalRequestName") == row.name:
                return task_type.removesuffix("Stage"), task
    return None


# --- approving ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Done:
    """What an approval path did, before it is audited."""

    outcome: str
    before: Mapping[str, Any]
    after: Mapping[str, Any]
    hub_answer: str


def approve(
    request_row: ApprovalRequest, user: AbstractBaseUser, *, http_request: HttpRequest | None = None
) -> ApprovalResult:
    """Approve one request as `user`: PermissionDenied when not allowed, ApprovalFailed when the hub
    fails (audited as failed, nothing recorded as approved), a no-op result when already approved."""
    if not can_approve(user, request_row):
        audit.record_refusal(user, ACTION, request_row, request=http_request)
        raise PermissionDenied(DENIED)
    failure: HubError | ApprovalFailed | None = None
    with transaction.atomic():
        # of=self: the nullable run join cannot be locked (PostgreSQL), and only this row needs to be
        row = (
            ApprovalRequest.objects.select_for_update(of=("self",))
            .select_related("hub", "run")
            .get(pk=request_row.pk)
        )
        try:
            done = _approve_on_hub(row) if row.owner == Owner.HUB else _approve_here(row)
        except (HubError, ApprovalFailed) as exc:
            failure = exc
            audit.record(
                user,
                ACTION,
                row,
                hub=row.hub,
                before=row.status,
                outcome=AuditEntry.Outcome.FAILED,
                hub_answer=str(exc),
                request=http_request,
            )
        else:
            row.refresh_from_db()
            audit.record(
                user,
                ACTION,
                row,
                hub=row.hub,
                before=dict(done.before),
                after=dict(done.after),
                outcome=done.outcome,
                hub_answer=done.hub_answer,
                request=http_request,
            )
            run = row.run
            if done.outcome == AuditEntry.Outcome.OK and row.owner == Owner.DASHBOARD and run is not None:
                # the run's executor accepts the approval on its next step: queue it now
                transaction.on_commit(lambda: rollouts.request_reconcile(run))
    if failure is not None:
        raise ApprovalFailed(f"{request_row.name} was not approved: {failure}") from failure
    return ApprovalResult(row, done.outcome, _message(row, done.outcome))


def _message(row: ApprovalRequest, outcome: str) -> str:
    state = row.get_state_display().lower()
    if outcome == AuditEntry.Outcome.NO_OP:
        return f"{row.name} was already {state}; nothing to do."
    return f"{row.name}: {state}."


def _approve_on_hub(row: ApprovalRequest) -> _Done:
    """Read fresh, patch the status with this generation, read back; a 409 (someone else wrote the
    object in between) starts over from a fresh read, as kubectl does, so no condition the hub wrote is
    lost, and a request someone approved meanwhile is a no-op."""
    now = timezone.now()
    seen: list[dict[str, Any]] = []

    def approve_pending(fresh: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(fresh)
        return approval_patch(fresh, now) if approval_state(fresh) == PENDING else None

    with HubClient(row.hub) as hub:
        written = update_with_retry(hub, APPROVAL_REQUEST, row.name, approve_pending, subresource="status")
        fresh = seen[-1]
        if not written.written:
            store_hub_object(row.hub, fresh)
            return _Done(AuditEntry.Outcome.NO_OP, _status(fresh), _status(fresh), _answer(fresh))
        after = hub.get_approval_request(row.name)
    if approval_state(after) == PENDING:
        raise ApprovalFailed(f"the hub did not keep the approval ({_answer(after)})")
    store_hub_object(row.hub, after)
    return _Done(AuditEntry.Outcome.OK, _status(fresh), _status(after), _answer(after))


def approval_patch(fresh: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The status merge patch `kubectl fleet approve` amounts to: every condition kept, Approved set as
    meta.SetStatusCondition sets it (the write is conditional on the resourceVersion that was read)."""
    metadata = fresh.get("metadata") or {}
    conditions = (fresh.get("status") or {}).get("conditions") or []
    # a merge patch replaces lists whole: send them all
    return {"status": {"conditions": _approved(conditions, int(metadata.get("generation") or 0), now)}}


def _approved(conditions: list[dict[str, Any]], generation: int, now: datetime) -> list[dict[str, Any]]:
    """`conditions` with kubectl's Approved condition set; its message is kubectl's too (the audit log
    names the approver), so the hub holds exactly what `kubectl fleet approve` would have written."""
    return set_condition(conditions, approved_condition(generation, now, actor=""), now)


def _approve_here(row: ApprovalRequest) -> _Done:
    """A dashboard-owned request: the same condition, written to the (locked) row."""
    before = dict(row.status)
    if row_state(row) != PENDING:
        return _Done(AuditEntry.Outcome.NO_OP, before, before, "")
    conditions = _approved(before.get("conditions") or [], row.generation, timezone.now())
    row.status = {**before, "conditions": conditions}
    row.state = row_state(row)
    row.save(update_fields=["status", "state", "updated"])
    return _Done(AuditEntry.Outcome.OK, before, row.status, "")


def row_state(row: ApprovalRequest) -> str:
    return approval_state(rollouts.approval_object(row))


def _status(obj: Mapping[str, Any]) -> dict[str, Any]:
    return dict(obj.get("status") or {})


def _answer(obj: Mapping[str, Any]) -> str:
    """The hub's answer for the audit log: the state it reports and the conditions it holds."""
    metadata = obj.get("metadata") or {}
    conditions = (obj.get("status") or {}).get("conditions") or []
    return (
        f"{approval_state(obj)} at generation {metadata.get('generation')}, resourceVersion "
        f"{metadata.get('resourceVersion')}: {json.dumps(conditions, sort_keys=True)}"
    )


def store_hub_object(hub: Hub, obj: dict[str, Any]) -> None:
    """Write what the hub answered through the sync's row path, as a watch event would."""
    apply_event(hub, KINDS_BY_NAME[APPROVAL_REQUEST], "MODIFIED", obj)


def refresh_waiting(rows: Iterable[ApprovalRequest]) -> list[str]:
    """Re-read hub-owned requests approved but not accepted yet, so the page shows "accepted" as soon as
    the hub does, with or without a watch. Answers the errors (the stored state is kept on failure)."""
    errors = []
    by_hub: dict[int, list[ApprovalRequest]] = {}
    for row in rows:
        if row.owner == Owner.HUB and row.state == APPROVED:
            by_hub.setdefault(row.hub_id, []).append(row)
    for waiting in by_hub.values():
        try:
            with HubClient(waiting[0].hub) as hub:
                for row in waiting:
                    store_hub_object(row.hub, hub.get_approval_request(row.name))
                    row.refresh_from_db(fields=["status", "state", "resource_version"])
        except HubError as exc:
            errors.append(str(exc))
    return errors
