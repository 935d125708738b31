"""The change hook: what a sync or watch event changed, and which placements that re-queues.

`register(listener)` subscribes; the sync and the watch call `notify(build(hub, log))` once their
rows are committed. `register_recorder(recorder)` subscribes to `record`, which they call inside the
transaction that writes the rows, for bookkeeping that must be committed with the change (a change and
the work it owes are stored together, or neither is). Affected OCM placements come from the upstream
trigger chain in `placement.scheduler.ocm.triggers`; a MemberCluster change re-queues every
ClusterResourcePlacement of the hub, a binding its parent CRP. Changes a scheduler cannot notice (a
heartbeat, a condition's timestamp: `inventory.relevance`) are left out.
"""

import logging
from collections.abc import Callable, Iterator
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
from placement.models import (
    CRP_LABEL,
    PLACEMENT_LABEL,
    ApprovalRequest,
    ClusterResourceBinding,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.ocm import triggers, types
from placement.scheduler.ocm.inventory import OcmInventory

logger = logging.getLogger(__name__)
T = TypeVar("T")
PlacementKey = tuple[str, str]


class Change(Generic[T]):
    """One object before and after as scheduler inputs; `old` None is an add, `new` None a delete.

    Rows are converted on first access: a full sync changes thousands, most never looked at.
    """

    def __init__(self, old: Any, new: Any, convert: Callable[[Any], T] | None = None) -> None:
        self.rows, self._convert = (old, new), convert

    def _side(self, index: int) -> T | None:
        row = self.rows[index]
        return row if self._convert is None else _convert(row, self._convert)

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
    # (namespace, name) of the OCM Placements to re-evaluate
    placements: set[PlacementKey] = field(default_factory=set)
    # names of the ClusterResourcePlacements to re-evaluate
    cluster_resource_placements: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        objects = (self.clusters, self.member_clusters, self.cluster_sets, self.bindings, self.add_on_scores)
        return bool(self.placements or self.cluster_resource_placements or any(objects))


Listener = Callable[[HubChanges], None]
_listeners: list[Listener] = []
_recorders: list[Listener] = []


def register(listener: Listener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def unregister(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def register_recorder(recorder: Listener) -> None:
    if recorder not in _recorders:
        _recorders.append(recorder)


def unregister_recorder(recorder: Listener) -> None:
    if recorder in _recorders:
        _recorders.remove(recorder)


def record(changes: HubChanges) -> None:
    """Call every recorder inside the writer's transaction; a failing one fails the write with it."""
    if not changes:
        return
    for recorder in list(_recorders):
        recorder(changes)


def notify(changes: HubChanges) -> None:
    """Call every listener after the write committed; a failing listener is logged and does not stop the
    others or the sync (what it owed is recorded: see `record`)."""
    if not changes:
        return
    for listener in list(_listeners):
        try:
            listener(changes)
        except Exception:
            logger.exception("change listener %r failed for hub %s", listener, changes.hub_id)


@dataclass
class ChangeLog:
    """Rows written by a sync or a watch event: (old, new) unsaved/saved model instances per model."""

    rows: list[tuple[models.Model | None, models.Model | None]] = field(default_factory=list)

    def record(self, old: models.Model | None, new: models.Model | None) -> None:
        self.rows.append((old, new))

    def __bool__(self) -> bool:
        return bool(self.rows)


# (model, ManagedCluster.kind or "") -> (HubChanges field, row -> scheduler dataclass)
_CONVERTERS: dict[tuple[type[models.Model], str], tuple[str, Callable[[Any], Any]]] = {
    (ManagedCluster, "ManagedCluster"): ("clusters", scheduler_inputs.managed_cluster),
    (ManagedCluster, "MemberCluster"): ("member_clusters", scheduler_inputs.member_cluster),
    (ManagedClusterSet, ""): ("cluster_sets", scheduler_inputs.cluster_set),
    (ManagedClusterSetBinding, ""): ("bindings", scheduler_inputs.cluster_set_binding),
    (AddOnPlacementScore, ""): ("add_on_scores", scheduler_inputs.add_on_score),
}


def _convert(row: models.Model | None, convert: Callable[[Any], Any]) -> Any:
    if row is None:
        return None
    try:
        return convert(row)
    except (ManifestError, ValueError) as exc:
        logger.warning("%s %s cannot be read by the scheduler: %s", type(row).__name__, row, exc)
        return None


def build(hub: Hub, log: ChangeLog, now: datetime | None = None) -> HubChanges:
    """Scheduler views of what changed (noise left out), and the placements the trigger chain re-queues."""
    changes = HubChanges(hub.pk)
    now = now or timezone.now()
    # objects a scheduler reads, and those of them whose change it cannot notice (bench/soak.py counts it)
    inputs = noise = 0
    for old, new in log.rows:
        row = new if new is not None else old
        if isinstance(row, Placement):
            if row.kind == Placement.Kind.PLACEMENT:
                changes.placements.add((row.namespace, row.name))
            else:
                changes.cluster_resource_placements.add(row.name)
            continue
        if isinstance(row, PlacementDecision | ClusterResourceBinding):
            _parents(changes, old, new)
            continue
        if isinstance(row, StagedUpdateStrategy | StagedUpdateRun | ApprovalRequest):
            # rollouts read placements' results; they are not scheduling inputs
            continue
        target, convert = _CONVERTERS[(type(row), getattr(row, "kind", ""))]
        change = Change(old, new, convert)
        inputs += 1
        if change.relevant(now):
            getattr(changes, target).append(change)
        else:
            noise += 1
    if inputs:
        logger.debug("hub %s: %d changed objects, %d of them noise", hub.name, inputs, noise)
    if changes.member_clusters:
        changes.cluster_resource_placements |= set(
            Placement.objects.filter(hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT).values_list(
                "name", flat=True
            )
        )
    if changes.clusters or changes.cluster_sets or changes.bindings or changes.add_on_scores:
        changes.placements |= _affected_placements(hub, changes)
    return changes


def _parents(changes: HubChanges, *rows: models.Model | None) -> None:
    """A PlacementDecision re-queues the placement it is labelled with; a binding its CRP."""
    for row in rows:
        if isinstance(row, PlacementDecision) and (name := row.labels.get(PLACEMENT_LABEL)):
            changes.placements.add((row.namespace, name))
        elif isinstance(row, ClusterResourceBinding) and (name := row.labels.get(CRP_LABEL)):
            changes.cluster_resource_placements.add(name)


def _affected_placements(hub: Hub, changes: HubChanges) -> set[PlacementKey]:
    placements = _ocm_placements(hub)
    every = {p.key for p in placements}
    affected: set[PlacementKey] = set()
    # scores need their clusters in the inventory: loaded only if clusters, sets and bindings left any out
    for steps in (_set_chain, _score_chain):
        for found in steps(changes, _trigger_inventory(hub, changes, steps is _score_chain), placements):
            affected |= found
            # a full sync changes thousands of objects; once every placement is in, the rest adds nothing
            if affected >= every:
                return affected
    return affected


def _set_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[types.Placement]
) -> Iterator[set[PlacementKey]]:
    for change in changes.clusters:
        if change.old or change.new:
            yield triggers.placements_affected_by_cluster_change(
                change.old, change.new, inventory, placements
            )
    for set_change in changes.cluster_sets:
        for cluster_set in filter(None, (set_change.old, set_change.new)):
            yield triggers.placements_affected_by_cluster_set(cluster_set.name, inventory, placements)
    for binding_change in changes.bindings:
        for binding in filter(None, (binding_change.old, binding_change.new)):
            yield triggers.placements_affected_by_binding(binding, placements)


def _score_chain(
    changes: HubChanges, inventory: OcmInventory, placements: list[types.Placement]
) -> Iterator[set[PlacementKey]]:
    for score_change in changes.add_on_scores:
        if score := score_change.new or score_change.old:
            yield triggers.placements_affected_by_add_on_score(score, inventory, placements)


def _ocm_placements(hub: Hub) -> list[types.Placement]:
    placements = []
    for row in Placement.objects.filter(hub=hub, kind=Placement.Kind.PLACEMENT):
        try:
            placements.append(scheduler_inputs.placement(row))
        except ManifestError as exc:
            logger.warning("hub %s: Placement %s cannot be read by the scheduler: %s", hub.name, row, exc)
    return placements


def _trigger_inventory(hub: Hub, changes: HubChanges, with_score_clusters: bool) -> OcmInventory:
    """Sets and bindings as stored now, and optionally the clusters named by changed add-on scores."""
    score_clusters = {
        row.namespace for change in changes.add_on_scores if with_score_clusters for row in change.rows if row
    }
    clusters = ManagedCluster.objects.filter(
        hub=hub, kind=ManagedCluster.Kind.MANAGED_CLUSTER, name__in=score_clusters
    )
    sets = ManagedClusterSet.objects.filter(hub=hub)
    bindings = ManagedClusterSetBinding.objects.filter(hub=hub)
    return OcmInventory(
        [c for c in (_convert(row, scheduler_inputs.managed_cluster) for row in clusters) if c],
        [s for s in (_convert(row, scheduler_inputs.cluster_set) for row in sets) if s],
        [scheduler_inputs.cluster_set_binding(row) for row in bindings],
    )
