"""The audit trail of a placement: events (as upstream records them) and its decision history."""

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from placement.models import DecisionChange, Placement, PlacementEvent

logger = logging.getLogger(__name__)


def actor_label(actor: AbstractBaseUser | str | None) -> str:
    if isinstance(actor, AbstractBaseUser):
        return actor.get_username()
    return actor or "system"


def _actor_fields(actor: AbstractBaseUser | str | None) -> dict[str, Any]:
    if isinstance(actor, AbstractBaseUser):
        return {"actor": actor, "actor_name": actor.get_username()}
    return {"actor": None, "actor_name": actor or ""}


def record_change(
    placement: Placement,
    trigger: str,
    before: Sequence[str],
    after: Sequence[str],
    at: datetime,
    actor: AbstractBaseUser | str | None = None,
) -> DecisionChange:
    """A change of the selected set: what was added and removed, and why."""
    old, new = set(before), set(after)
    change = DecisionChange.objects.create(
        placement=placement,
        at=at,
        trigger=trigger[:200],
        added=sorted(new - old),
        removed=sorted(old - new),
        selected=sorted(new),
        **_actor_fields(actor),
    )
    logger.info(
        "%s %s: %s (+%d -%d, %d selected)%s",
        placement.kind,
        placement,
        trigger,
        len(change.added),
        len(change.removed),
        len(change.selected),
        f" by {actor_label(actor)}" if actor else "",
    )
    return change


def record_spec_change(
    placement: Placement,
    trigger: str,
    before: Mapping[str, Any] | None,
    actor: AbstractBaseUser | str | None,
) -> DecisionChange:
    """A spec edit (or creation): before/after, the actor; the selection it leads to follows separately."""
    current = placement.history.order_by("-at", "-pk").values_list("selected", flat=True).first() or []
    change = DecisionChange.objects.create(
        placement=placement,
        at=timezone.now(),
        trigger=trigger[:200],
        selected=list(current),
        spec_before=None if before is None else dict(before),
        spec_after=dict(placement.spec),
        **_actor_fields(actor),
    )
    logger.info("%s %s: %s by %s", placement.kind, placement, trigger, actor_label(actor))
    return change


def record_events(placement: Placement, events: Sequence[Mapping[str, str]], at: datetime) -> None:
    """The scheduler's events (DecisionCreate, DecisionUpdate, ScoreUpdate, ...); keeps the last KEEP."""
    if not events:
        return
    PlacementEvent.objects.bulk_create(
        PlacementEvent(
            placement=placement,
            at=at,
            type=event.get("type", PlacementEvent.Type.NORMAL),
            reason=event.get("reason", ""),
            message=event.get("message", ""),
            related=event.get("related", ""),
        )
        for event in events
    )
    stale = placement.events.order_by("-at", "-pk").values_list("pk", flat=True)[PlacementEvent.KEEP :]
    stale_ids = list(stale)
    if stale_ids:
        PlacementEvent.objects.filter(pk__in=stale_ids).delete()
