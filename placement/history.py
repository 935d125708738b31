"""The audit trail of a placement: events (as upstream records them) and its decision history.

Every history entry is recorded once: a spec edit and the decisions it leads to are one entry, and each
entry carries an idempotency key (`change_key`) that a second writer of the same change runs into.
`selection_over_time` reads the history back as counts for the placement page's chart.
"""

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone

from placement.models import DecisionChange, Placement, PlacementEvent

if TYPE_CHECKING:  # the type of a compiled expression exists in the stubs only
    from django.db.models.sql.compiler import _AsSqlType

logger = logging.getLogger(__name__)


def actor_label(actor: AbstractBaseUser | str | None) -> str:
    if isinstance(actor, AbstractBaseUser):
        return actor.get_username()
    return actor or "system"


def _actor_fields(actor: AbstractBaseUser | str | None) -> dict[str, Any]:
    if isinstance(actor, AbstractBaseUser):
        return {"actor": actor, "actor_name": actor.get_username()}
    return {"actor": None, "actor_name": actor or ""}


def change_key(placement: Placement, *parts: Any, follows: Any) -> str:
    """The idempotency key of a change: the placement, the state the writer saw (`follows`: the
    history entry it follows, or the version an editor started from) and what changed (`parts`). Two
    writers of the same change (a double-submitted Apply, a reschedule racing it) saw the same state and
    get the same key, so the unique (placement, key) keeps one row; the same change made again later
    follows another state."""
    payload = json.dumps([placement.pk, follows, *parts], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _create_once(placement: Placement, key: str, **fields: Any) -> tuple[DecisionChange, bool]:
    """The row of this key: created now, or the one another writer created (answers which)."""
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on after a duplicate
            return DecisionChange.objects.create(placement=placement, key=key, **fields), True
    except IntegrityError:
        return DecisionChange.objects.get(placement=placement, key=key), False


def record_change(
    placement: Placement,
    trigger: str,
    before: Sequence[str],
    after: Sequence[str],
    at: datetime,
    actor: AbstractBaseUser | str | None = None,
    *,
    follows: Any,
    into: DecisionChange | None = None,
) -> DecisionChange:
    """A change of the selected set: what was added and removed, and why. `into` is the entry of the spec
    edit that led to it (record_spec_change): the change is written into that entry, so one edit is one
    entry with its spec and its decisions. Otherwise answers the new entry unsaved, keyed by `follows`
    (the pk of the newest entry, read under the placement's row lock), for the caller to insert with the
    other rows of its run: a second writer of the same change runs into the key, and the insert skips it
    (`placement.runwrites`)."""
    old, new = set(before), set(after)
    fields = {"added": sorted(new - old), "removed": sorted(old - new), "selected": sorted(new)}
    logger.info(
        "%s %s: %s (+%d -%d, %d selected)%s",
        placement.kind,
        placement,
        trigger,
        len(fields["added"]),
        len(fields["removed"]),
        len(fields["selected"]),
        f" by {actor_label(actor)}" if actor else "",
    )
    if into is not None:
        DecisionChange.objects.filter(pk=into.pk).update(**fields)
        for name, value in fields.items():
            setattr(into, name, value)
        return into
    key = change_key(
        placement, "decisions", placement.spec, fields["added"], fields["removed"], follows=follows
    )
    return DecisionChange(
        placement=placement, key=key, at=at, trigger=trigger[:200], **fields, **_actor_fields(actor)
    )


def record_spec_change(
    placement: Placement,
    trigger: str,
    before: Mapping[str, Any] | None,
    actor: AbstractBaseUser | str | None,
    *,
    follows: Any = None,
) -> tuple[DecisionChange, bool]:
    """A spec edit (or creation): before/after, the actor; the selection it leads to is written into the
    same entry (record_change(into=...)). Answers the entry and whether it is new (False: the same edit
    was recorded by another request, e.g. a double submit). `follows`: the placement's version the
    editor started from (its `updated` before the save), so two submits of one edit share a key."""
    current = placement.history.order_by("-at", "-pk").values_list("selected", flat=True).first() or []
    if follows is None:
        follows = placement.history.order_by("-at", "-pk").values_list("pk", flat=True).first()
    key = change_key(placement, "spec", before, placement.spec, follows=follows)
    change, created = _create_once(
        placement,
        key,
        at=timezone.now(),
        trigger=trigger[:200],
        selected=list(current),
        spec_before=None if before is None else dict(before),
        spec_after=dict(placement.spec),
        **_actor_fields(actor),
    )
    if created:
        logger.info("%s %s: %s by %s", placement.kind, placement, trigger, actor_label(actor))
    return change, created


def record_events(placement: Placement, events: Sequence[Mapping[str, str]], at: datetime) -> None:
    """The scheduler's events (DecisionCreate, DecisionUpdate, ScoreUpdate, ...); keeps the last KEEP."""
    if events:
        PlacementEvent.objects.bulk_create(event_rows(placement, events, at))
        trim_events([placement.pk])


def event_rows(
    placement: Placement, events: Sequence[Mapping[str, str]], at: datetime
) -> list[PlacementEvent]:
    """The rows of the placement's events, unsaved."""
    return [
        PlacementEvent(
            placement=placement,
            at=at,
            type=event.get("type", PlacementEvent.Type.NORMAL),
            reason=event.get("reason", ""),
            message=event.get("message", ""),
            related=event.get("related", ""),
        )
        for event in events
    ]


def trim_events(placement_ids: Sequence[int]) -> None:
    """Delete the events of these placements beyond each one's newest KEEP, found in one query."""
    newest_first = Window(
        RowNumber(), partition_by=F("placement_id"), order_by=(F("at").desc(), F("pk").desc())
    )
    ranked = PlacementEvent.objects.filter(placement__in=placement_ids).annotate(position=newest_first)
    stale = list(ranked.filter(position__gt=PlacementEvent.KEEP).values_list("pk", flat=True))
    if stale:
        PlacementEvent.objects.filter(pk__in=stale).delete()


# The newest history entries the chart of the selected count reads.
CHART_LENGTH = 500


class JSONArrayLength(models.Func):
    """The length of a JSON array column, counted by the database: the chart reads how many clusters each
    entry selected without loading 10,000 names per entry."""

    function = "json_array_length"  # SQLite
    output_field = models.IntegerField()

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> "_AsSqlType":
        # Django stores JSONField as jsonb on PostgreSQL
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


@dataclass(frozen=True, slots=True)
class SelectionPoint:
    """After one history entry: when, how many clusters were selected, and how many the policy requested
    (None where it asks for all of them)."""

    at: datetime
    selected: int
    requested: int | None


def _requested(placement: Placement, spec: Mapping[str, Any] | None) -> int | None:
    """The number of clusters `spec` requests, as the placement's family reads a spec."""
    requested = placement.family.requested(Placement(kind=placement.kind, spec=dict(spec or {})))
    return int(requested) if requested.isdigit() else None


def selection_over_time(placement: Placement, length: int = CHART_LENGTH) -> list[SelectionPoint]:
    """The selected count after each of the newest `length` history entries, oldest first, with the
    requested count then in force: an entry that edited the spec carries its spec before and after, and
    entries between two edits keep the count of the edit before them (the current spec after the last)."""
    entries = (
        placement.history.order_by("-at", "-pk")
        .annotate(selected_count=JSONArrayLength("selected"))
        .values_list("at", "selected_count", "spec_before", "spec_after")[:length]
    )
    points = []
    requested = _requested(placement, placement.spec)
    for at, count, before, after in entries:  # newest first: walk back through the spec edits
        if after is not None:
            requested = _requested(placement, after)
        points.append(SelectionPoint(at, count or 0, requested))
        if before is not None:
            requested = _requested(placement, before)
    return points[::-1]
