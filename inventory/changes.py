"""The change hook: what a sync or watch event changed, as the scheduler reads it.

The sync and the watch `build` a `HubChanges` from the rows they wrote, `record` it inside the
transaction that writes them and `notify` once they are committed; each sends its signal of
`inventory.signals`, to which the apps that read the inventory connect (placement re-queues the
placements a change affects). Changes a scheduler cannot notice (a heartbeat, a condition's timestamp:
`inventory.relevance`) are left out; rows of kinds that are no scheduler input of the inventory's own
(placements, their decisions and bindings, rollouts) are handed on as written, for their app to read.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Generic, TypeVar

from django.db import models
from django.utils import timezone

from inventory import relevance, scheduler_inputs
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from inventory.signals import hub_changed, hub_changes_recorded, managed_objects_reported
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.ocm import types

logger = logging.getLogger(__name__)
T = TypeVar("T")
# what a receiver derives from a change (`HubChanges.derive`)
D = TypeVar("D")
RowPair = tuple[models.Model | None, models.Model | None]
# (kind, namespace or "", name) of a hub object; the kind is the hub's (ManagedCluster, MemberCluster,
# ManagedClusterSet, ...), which is the model's name but for the two kinds of the cluster table
Identity = tuple[str, str, str]


class Change(Generic[T]):
    """One object before and after as scheduler inputs; `old` None is an add, `new` None a delete.

    Rows are converted on first access: a full sync changes thousands, most never looked at. An added
    row may be given by reference (an `Added`), read back from the database when first asked for.
    """

    def __init__(self, old: Any, new: Any, convert: Callable[[Any], T] | None = None) -> None:
        self._rows, self._convert = (old, new), convert

    @property
    def rows(self) -> tuple[Any, Any]:
        """(old, new) rows: model instances, or None for the side an add or a delete lacks."""
        old, new = self._rows
        return old, (new.row() if isinstance(new, Added) else new)

    @property
    def identity(self) -> Identity | None:
        """(kind, namespace, name) of the object, without reading an added row back; None for no row."""
        old, new = self._rows
        if isinstance(new, Added):
            return new.identity
        row = new if new is not None else old
        return None if row is None else identity(row)

    def _side(self, index: int) -> T | None:
        row = self.rows[index]
        return row if self._convert is None else scheduler_view(row, self._convert)

    @cached_property
    def old(self) -> T | None:
        return self._side(0)

    @cached_property
    def new(self) -> T | None:
        return self._side(1)

    @property
    def created(self) -> bool:
        """An add (told without reading an added row back)."""
        return self._rows[0] is None

    @property
    def deleted(self) -> bool:
        return self._rows[1] is None

    def relevant(self, now: datetime) -> bool:
        """Whether a scheduler can notice this change at `now`; adds and deletes always count."""
        if self.created or self.deleted:
            return True
        return relevance.changed(self.old, self.new, now)


def identity(row: models.Model) -> Identity:
    """(kind, namespace, name) of a row of a scheduler input's model."""
    kind = row.kind if isinstance(row, ManagedCluster) else type(row).__name__
    return kind, getattr(row, "namespace", ""), getattr(row, "name", "")


class _Reader:
    """The rows one write added to one model, read back by pk a chunk at a time when first asked for;
    only the chunk read last is kept, so walking every added row holds one chunk of them at a time."""

    CHUNK = 1000

    def __init__(self, model: type[models.Model], pks: list[int]) -> None:
        self.model, self.pks = model, pks
        self._start: int | None = None
        self._rows: dict[Any, models.Model] = {}

    def row(self, index: int) -> models.Model | None:
        start = index - index % self.CHUNK
        if start != self._start:
            self._rows = self.model._default_manager.in_bulk(self.pks[start : start + self.CHUNK])
            self._start = start
        return self._rows.get(self.pks[index])


@dataclass(frozen=True, slots=True)
class Added:
    """A row a write added, by reference: its identity, and where to read it back (`row` answers None
    once the row is deleted)."""

    identity: Identity
    reader: _Reader
    index: int

    def row(self) -> models.Model | None:
        return self.reader.row(self.index)


@dataclass
class HubChanges:
    hub_id: int
    clusters: list[Change[types.ManagedCluster]] = field(default_factory=list)
    member_clusters: list[Change[MemberCluster]] = field(default_factory=list)
    cluster_sets: list[Change[types.ManagedClusterSet]] = field(default_factory=list)
    bindings: list[Change[types.ManagedClusterSetBinding]] = field(default_factory=list)
    add_on_scores: list[Change[types.AddOnPlacementScore]] = field(default_factory=list)
    # (old, new) rows of the other kinds the sync and the watch write (placements, their decisions and
    # bindings, rollouts), as written: the app that owns them reads them
    other_rows: list[RowPair] = field(default_factory=list)
    # What receivers work out from this change, each under a name of its own: worked out by the first
    # receiver that asks (inside the writing transaction), read again after the commit.
    derived: dict[str, Any] = field(default_factory=dict)

    def inputs_changed(self) -> bool:
        """Whether a scheduler input of the inventory's own changed (noise left out)."""
        objects = (self.clusters, self.member_clusters, self.cluster_sets, self.bindings, self.add_on_scores)
        return any(objects)

    def __bool__(self) -> bool:
        return self.inputs_changed() or bool(self.other_rows)

    def derive(self, name: str, work_out: Callable[["HubChanges"], D]) -> D:
        """What `work_out` makes of this change, worked out on the first call for `name` and kept."""
        if name not in self.derived:
            self.derived[name] = work_out(self)
        found: D = self.derived[name]
        return found


def record(changes: HubChanges) -> None:
    """Send `hub_changes_recorded` inside the writer's transaction; a failing receiver fails the write."""
    if not changes:
        return
    hub_changes_recorded.send(sender=Hub, hub_changes=changes)


def notify(changes: HubChanges) -> None:
    """Send `hub_changed` after the write committed; a failing receiver is logged (Django logs its
    traceback) and does not stop the others or the sync (what it owed is recorded: see `record`)."""
    if not changes:
        return
    for receiver, result in hub_changed.send_robust(sender=Hub, hub_changes=changes):
        if isinstance(result, Exception):
            logger.error("change listener %r failed for hub %s: %s", receiver, changes.hub_id, result)


def report_managed(hub: Hub, kind: str, objects: Sequence[dict[str, Any]]) -> None:
    """Send `managed_objects_reported` for the objects of `kind` written by this dashboard that a sync
    or watch events listed (once the rows are committed); a failing receiver is logged like `notify`'s."""
    if not objects:
        return
    for receiver, result in managed_objects_reported.send_robust(
        sender=Hub, hub=hub, kind=kind, objects=objects
    ):
        if isinstance(result, Exception):
            logger.error("listener %r of managed %s failed for hub %s: %s", receiver, kind, hub.pk, result)


@dataclass
class ChangeLog:
    """Rows written by a sync or a watch event: (old, new) unsaved/saved model instances per model.

    A row added to a scheduler input's kind is kept by pk and identity alone (`added`, per converter):
    an initial sync adds every cluster of the hub, and holding each would hold every object the hub
    listed until the sync ends.
    """

    rows: list[RowPair] = field(default_factory=list)
    added: dict[tuple[type[models.Model], str], list[tuple[int, Identity]]] = field(default_factory=dict)
    # rows updated in ways no scheduler notices, told by their kind from the fields alone (heartbeats):
    # written, but neither side kept
    noise: int = 0

    def record(self, old: models.Model | None, new: models.Model | None) -> None:
        self.rows.append((old, new))

    def record_added(
        self, model: type[models.Model], rows: Sequence[dict[str, Any]], pks: Sequence[int]
    ) -> None:
        """Rows just inserted from these field values (`inventory.bulk.insert`), with their pks."""
        for values, pk in zip(rows, pks, strict=True):
            key = (model, values.get("kind", ""))
            if key in _CONVERTERS:
                kind = str(key[1]) if model is ManagedCluster else model.__name__
                self.added.setdefault(key, []).append(
                    (pk, (kind, values.get("namespace", ""), values["name"]))
                )
            else:
                self.rows.append((None, model(pk=pk, **values)))

    def __bool__(self) -> bool:
        return bool(self.rows or self.added or self.noise)


# (model, ManagedCluster.kind or "") -> (HubChanges field, row -> scheduler dataclass)
_CONVERTERS: dict[tuple[type[models.Model], str], tuple[str, Callable[[Any], Any]]] = {
    (ManagedCluster, "ManagedCluster"): ("clusters", scheduler_inputs.managed_cluster),
    (ManagedCluster, "MemberCluster"): ("member_clusters", scheduler_inputs.member_cluster),
    (ManagedClusterSet, ""): ("cluster_sets", scheduler_inputs.cluster_set),
    (ManagedClusterSetBinding, ""): ("bindings", scheduler_inputs.cluster_set_binding),
    (AddOnPlacementScore, ""): ("add_on_scores", scheduler_inputs.add_on_score),
}


def scheduler_view(row: models.Model | None, convert: Callable[[Any], T]) -> T | None:
    """`convert(row)`, or None (logged) for no row or one the scheduler cannot read."""
    if row is None:
        return None
    try:
        return convert(row)
    except (ManifestError, ValueError) as exc:
        logger.warning("%s %s cannot be read by the scheduler: %s", type(row).__name__, row, exc)
        return None


def build(hub: Hub, log: ChangeLog, now: datetime | None = None) -> HubChanges:
    """Scheduler views of what changed (noise left out), and the rows of other kinds as written."""
    changes = HubChanges(hub.pk)
    now = now or timezone.now()
    # objects a scheduler reads, and those of them whose change it cannot notice (bench/soak.py counts it)
    inputs = noise = log.noise
    for old, new in log.rows:
        row = new if new is not None else old
        assert row is not None  # a write logs a row on at least one side
        converter = _CONVERTERS.get((type(row), getattr(row, "kind", "")))
        if converter is None:
            changes.other_rows.append((old, new))
            continue
        target, convert = converter
        change = Change(old, new, convert)
        inputs += 1
        if change.relevant(now):
            getattr(changes, target).append(change)
        else:
            noise += 1
    for key, added in log.added.items():
        target, convert = _CONVERTERS[key]
        reader = _Reader(key[0], [pk for pk, _ in added])
        getattr(changes, target).extend(
            Change(None, Added(row_identity, reader, index), convert)
            for index, (_, row_identity) in enumerate(added)
        )
        inputs += len(added)
    if inputs:
        logger.debug("hub %s: %d changed objects, %d of them noise", hub.name, inputs, noise)
    return changes
