"""The audit log's one writer: every mutation (approvals, run state, spec edits, hub changes) records here.

`record` takes the acting user (or a command/task name), the target row, before/after and the hub's
answer; with the request it also keeps the request id (fleetui.middleware.RequestIdMiddleware) and the
client address. Entries are append-only (AuditEntry.save refuses updates).

Who reads them is inventory.roles' rule for AuditEntry: superusers every entry, other signed-in users
the entries they made themselves, anonymous users none. The log page and `/api/audit/` both read through
it.
"""

from typing import Any

from django.contrib.auth import get_user_model
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
    user = actor if isinstance(actor, get_user_model()) else None
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


# What the log keeps of a hub: its settings, never its credentials (only whether they changed).
HUB_SETTINGS = ("server_url", "serves_ocm", "serves_fleet", "sync_interval_seconds", "publish_namespace")


def hub_settings(hub: Hub) -> dict[str, Any]:
    return {field: getattr(hub, field) for field in HUB_SETTINGS}


def record_hub_saved(
    actor: Actor,
    hub: Hub,
    before: dict[str, Any] | None,
    *,
    credentials_changed: bool = False,
    request: HttpRequest | None = None,
) -> AuditEntry:
    """hub.create (`before` None) or hub.update, with the settings before and after (credentials: a flag)."""
    action = "hub.create" if before is None else "hub.update"
    after = {**hub_settings(hub), "credentials_changed": credentials_changed}
    return record(actor, action, hub, hub=hub, before=before, after=after, request=request)


def record_hub_removed(actor: Actor, hub: Hub, *, request: HttpRequest | None = None) -> AuditEntry:
    """hub.remove, before the row goes: its settings; the entry outlives the hub, so it names none."""
    return record(actor, "hub.remove", hub, before=hub_settings(hub), request=request)


def record_refusal(
    actor: Actor, action: str, target: models.Model, *, request: HttpRequest | None = None, **fields: Any
) -> AuditEntry:
    """A refused attempt at `action` on `target` (outcome denied), filed under the target's hub."""
    denied, hub = AuditEntry.Outcome.DENIED, getattr(target, "hub", None)
    return record(actor, action, target, hub=hub, outcome=denied, request=request, **fields)


def target_filter(target: models.Model) -> dict[str, str]:
    """How entries name their object; the log's `target_type` and `target_id` filters take the same."""
    return {"target_type": target._meta.label_lower, "target_id": str(target.pk)}


def entries_for(target: models.Model, limit: int = 10) -> models.QuerySet[AuditEntry]:
    """The latest entries about one object, for its page."""
    return AuditEntry.objects.filter(**target_filter(target)).select_related("actor")[:limit]
