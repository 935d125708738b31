"""The change hook: what a sync or watch event changed, as the scheduler reads it.

The sync and the watch `build` a `HubChanges` from the rows they wrote, `record` it inside the
transaction that writes them and `notify` once they are committed; each sends its signal of
`inventory.signals`, to which the apps that read the inventory connect (placement re-queues the
placements a change affects). Changes a scheduler cannot notice (a heartbeat, a condition's timestamp:
`inventory.relevance`) are left out; rows of kinds that are no scheduler input of the inventory's own
(placements, their decisions and bindings, rollouts) are handed on as written, for their app to read.
"""

import logging
from collections.abc import Callable
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
from inventory.signals import hub_changed, hub_changes_recorded
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.ocm import types

logger = logging.getLogger(__name__)
T = TypeVar("T")
RowPair = tuple[models.Model | None, models.Model | None]


class Change(Generic[T]):
    """One object before and after as scheduler inputs; `old` None is an add, `new` None a delete.

    Rows are converted on first access: a full sync changes thousands, most never looked at.
    """

    def __init__(self, old: Any, new: Any, convert: Callable[[Any], T] | None = None) -> None:
        self.rows, self._convert = (old, new), convert

    def _side(self, index: int) -> T | None:
        row = self.rows[index]
        return row if self._convert is None else scheduler_view(row, self._convert)

    @cached_property
    def old(self) -> T | None:
        return self._side(0)

    @cached_property
    def new(self) -> T | None:
        return self._side(1)

    def relevant(self, now: datetime) -> bool:
        """Whether a scheduler can notice this change at `now`; adds and deletes always count."""
        if self.rows[0] is None or self.rows[1] is None:
            return True
        return relevance.changed(self.old, self.new, now)


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


@dataclass
class ChangeLog:
    """Rows written by a sync or a watch event: (old, new) unsaved/saved model instances per model."""

    rows: list[RowPair] = field(default_factory=list)

    def record(self, old: models.Model | None, new: models.Model | None) -> None:
        self.rows.append((old, new))

    def __bool__(self) -> bool:
        return bool(self.rows)


# (model, ManagedCluster.kind or "") -> (HubChanges field, row -> scheduler dataclass)
_CONVERTERS: dict[tuple[type[object], str], tuple[str, Callable[[Any], Any]]] = {
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
    inputs = noise = 0
    for old, new in log.rows:
        row = new if new is not None else old
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
    if inputs:
        logger.debug("hub %s: %d changed objects, %d of them noise", hub.name, inputs, noise)
    return changes
