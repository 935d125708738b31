"""The audit log's one writer: every mutation (approvals, run state, spec edits, hub changes) records here.

`record` takes the acting user (or a command/task name), the target row, before/after and the hub's
answer; with the request it also keeps the request id (fleetui.middleware.RequestIdMiddleware) and the
client address. Entries are append-only (AuditEntry.save refuses updates).
"""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models
from django.http import HttpRequest

from inventory.models import AuditEntry, Hub

Actor = AbstractBaseUser | str


def record(
    actor: Actor,
    action: str,
    target: models.Model,
    *,
    hub: Hub | None = None,
    before: Any = None,
    after: Any = None,
    outcome: str = AuditEntry.Outcome.OK,
    hub_answer: str = "",
    request: HttpRequest | None = None,
) -> AuditEntry:
    """Append one entry; `target` names the object (its model, pk and str)."""
    user = actor if isinstance(actor, AbstractBaseUser) else None
    return AuditEntry.objects.create(
        actor=user,
        actor_name=user.get_username() if user is not None else str(actor),
        action=action,
        target_type=target._meta.label_lower,
        target_id=str(target.pk or ""),
        target=str(target)[:300],
        hub=hub,
        before=before,
        after=after,
        outcome=outcome,
        hub_answer=hub_answer,
        request_id=getattr(request, "request_id", "") if request is not None else "",
        source_address=request.META.get("REMOTE_ADDR") or None if request is not None else None,
    )


def entries_for(target: models.Model, limit: int = 10) -> models.QuerySet[AuditEntry]:
    """The latest entries about one object, for its page."""
    return AuditEntry.objects.filter(
        target_type=target._meta.label_lower, target_id=str(target.pk)
    ).select_related("actor")[:limit]
