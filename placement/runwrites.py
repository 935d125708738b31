"""The rows scheduler runs store, gathered while each run's writer runs and then written in bulk.

A run's writer (`service.Planned.write`) does not write: it adds its placement's fields, its decision or
binding rows, its events and its history entry to a `RunWrites`. `store` then writes the runs given to
it, one run's (`service.reschedule`) or a whole chunk's (`service.reschedule_chunk`), with a few
statements per kind of row, whatever the number of runs: a chunk of a full reschedule pays the database's
per-statement cost (and Django's query building) once per kind instead of once per run.

Rows are written in the order the runs were given, each kind in the order its runs added them, so a
chunk stores the same rows, in the same primary-key order, as its runs stored one after the other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models
from django.utils import timezone

from inventory import bulk
from placement import history, nametables
from placement.models import DecisionChange, Placement, PlacementEvent
from placement.scheduler.record import NameTable

# The fields of a placement a run stores (its status stored on top of the one read under the row lock).
RUN_FIELDS = (
    "explanation",
    "cluster_record",
    "name_table",
    "run_digest",
    "last_scheduled_at",
    "status",
    "updated",
)


@dataclass(eq=False)
class RunWrites:
    """What one scheduler run stores, unwritten."""

    placement: Placement
    saved: bool = False
    # the name table the stored record refers to, stored with it
    names: NameTable | None = None
    created: list[models.Model] = field(default_factory=list)
    # rows to update, by the fields updated
    updated: dict[tuple[str, ...], list[models.Model]] = field(default_factory=lambda: defaultdict(list))
    deleted: dict[type[models.Model], list[Any]] = field(default_factory=lambda: defaultdict(list))
    events: list[PlacementEvent] = field(default_factory=list)
    change: DecisionChange | None = None

    def save_run(self, names: NameTable | None) -> None:
        """Store the placement's RUN_FIELDS (`updated` set now, as saving it would), and `names`, the
        name table its record refers to."""
        self.placement.name_table_id = None if names is None else names.key
        self.placement.updated = timezone.now()
        self.saved, self.names = True, names

    def create(self, rows: Iterable[models.Model]) -> None:
        self.created.extend(rows)

    def update(self, rows: Iterable[models.Model], fields: Sequence[str]) -> None:
        self.updated[tuple(fields)].extend(rows)

    def delete(self, model: type[models.Model], pks: Iterable[Any]) -> None:
        self.deleted[model].extend(pks)

    def record_events(self, events: Sequence[dict[str, str]], at: datetime) -> None:
        """The run's events; the placement keeps its newest PlacementEvent.KEEP."""
        self.events.extend(history.event_rows(self.placement, events, at))


def store(runs: Sequence[RunWrites]) -> None:
    """Write the runs' rows, in the caller's transaction (under their placements' row locks)."""
    created: dict[type[models.Model], list[models.Model]] = defaultdict(list)
    updated: dict[tuple[type[models.Model], tuple[str, ...]], list[models.Model]] = defaultdict(list)
    deleted: dict[type[models.Model], list[Any]] = defaultdict(list)
    for run in runs:
        for row in run.created:
            created[type(row)].append(row)
        for fields, rows in run.updated.items():
            for row in rows:
                updated[type(row), fields].append(row)
        for model, pks in run.deleted.items():
            deleted[model].extend(pks)
    for model, rows in created.items():
        model._default_manager.bulk_create(rows)
    for (_, fields), rows in updated.items():
        bulk.update_instances(rows, fields)
    for model, pks in deleted.items():
        model._default_manager.filter(pk__in=pks).delete()
    saved = [run for run in runs if run.saved]
    nametables.store([run.names for run in saved if run.names is not None], timezone.now())
    bulk.update_instances([run.placement for run in saved], RUN_FIELDS)
    events = [event for run in runs for event in run.events]
    if events:
        PlacementEvent.objects.bulk_create(events)
        history.trim_events(sorted({run.placement.pk for run in runs if run.events}))
    # a second writer of the same change (same key) recorded it already: INSERT ... ON CONFLICT skips it
    changes: list[DecisionChange] = []
    for run in runs:
        # an entry written into the spec edit's entry (it has a pk) is stored already
        if run.change is not None and run.change._state.adding:
            changes.append(run.change)
    if changes:
        DecisionChange.objects.bulk_create(changes, ignore_conflicts=True)
