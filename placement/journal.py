"""The per-hub change journal: which scheduler inputs each recorded hub change touched.

`record` bumps the hub's `HubInventoryVersion` and writes one `HubChangeEntry` per touched input under the
new version, in the caller's transaction (the one writing the rows): the version row's update lock orders
the writers of a hub, so versions commit in order and a reader that sees version V sees every entry up to
V. `since` answers what a process holding an older snapshot must reload, or None when it must build the
snapshot again: entries were pruned (only the last `KEEP_VERSIONS` versions are kept), a change was too
large to name its inputs one by one (`LIMIT`), or the delta is large against the hub.

The journal lives in the placement app, next to the version it extends, because the snapshot it serves
reads placement rows too (PlacementDecisions, ClusterResourceBindings), which the inventory cannot name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from inventory.changes import Change, HubChanges
from placement.models import (
    ClusterResourceBinding,
    HubChangeEntry,
    HubInventoryVersion,
    Owner,
    Placement,
    PlacementDecision,
)

Kind = HubChangeEntry.Kind
# (kind, namespace, name) of one touched input
Identity = tuple[str, str, str]

# A change naming more inputs than this is journaled as EVERYTHING (an initial sync, a full resync):
# the readers build their snapshot again rather than reload that many rows one by one.
LIMIT = 5_000
# Versions whose entries are kept; a snapshot older than that is built again.
KEEP_VERSIONS = 1_000


def identities(changes: HubChanges) -> set[Identity]:
    """The scheduler inputs `changes` touched: the inventory's own objects, and of the rows of other kinds
    the PlacementDecisions and ClusterResourceBindings (the snapshot's) and the dashboard's OCM Placements
    created or removed (which decide whether a published decision counts as the hub's)."""
    touched: set[Identity] = set()
    groups: tuple[tuple[str, Sequence[Change[Any]]], ...] = (
        (Kind.CLUSTER, changes.clusters),
        (Kind.MEMBER_CLUSTER, changes.member_clusters),
        (Kind.CLUSTER_SET, changes.cluster_sets),
        (Kind.BINDING, changes.bindings),
        (Kind.SCORE, changes.add_on_scores),
    )
    for kind, group in groups:
        for change in group:
            # the identity, not the rows: an initial sync's added rows would be read back to name them
            if (identity := change.identity) is not None:
                touched.add((kind, identity[1], identity[2]))
    for old, new in changes.other_rows:
        row = _row((old, new))
        if isinstance(row, PlacementDecision):
            touched.add((Kind.DECISION, row.namespace, row.name))
        elif isinstance(row, ClusterResourceBinding):
            touched.add((Kind.RESOURCE_BINDING, "", row.name))
        elif isinstance(row, Placement) and (old is None or new is None) and _publishable(row):
            touched.add((Kind.DECISIONS, "", ""))
    return touched


def _publishable(placement: Placement) -> bool:
    """Whether the hub may hold published copies of this placement's decisions."""
    return placement.owner == Owner.DASHBOARD and placement.kind == Placement.Kind.PLACEMENT


def _row(rows: tuple[Any, Any]) -> Any:
    old, new = rows
    row = new if new is not None else old
    assert row is not None, "a change has a row before or after"
    return row


def record(hub_id: int, touched: Iterable[Identity] | None) -> int:
    """Bump the hub's version and journal `touched` under it (None: everything); answers the version."""
    entries = [(Kind.EVERYTHING, "", "")] if touched is None else sorted(set(touched))
    if len(entries) > LIMIT:
        entries = [(Kind.EVERYTHING, "", "")]
    version = _bump(hub_id)
    HubChangeEntry.objects.bulk_create(
        HubChangeEntry(hub_id=hub_id, version=version, kind=kind, namespace=namespace, name=name)
        for kind, namespace, name in entries or [(Kind.NOTHING, "", "")]
    )
    HubChangeEntry.objects.filter(hub_id=hub_id, version__lte=version - KEEP_VERSIONS).delete()
    return version


def _bump(hub_id: int) -> int:
    """The hub's next version, its row locked until the caller's transaction ends."""
    versions = HubInventoryVersion.objects.filter(hub_id=hub_id)
    if not versions.update(version=F("version") + 1):
        try:
            with transaction.atomic():
                HubInventoryVersion.objects.create(hub_id=hub_id, version=1)
        except IntegrityError:  # created meanwhile by another process
            versions.update(version=F("version") + 1)
    return int(versions.values_list("version", flat=True).get())


@dataclass
class Delta:
    """What changed between two versions of a hub: the touched identities by kind."""

    by_kind: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))

    def __getitem__(self, kind: str) -> set[tuple[str, str]]:
        return self.by_kind.get(kind, set())


def since(hub_id: int, after: int, upto: int, limit: int) -> Delta | None:
    """The inputs touched by the versions after `after` up to `upto`, or None when the snapshot at
    `after` must be built again: entries pruned, a change journaled as EVERYTHING, or more than `limit`
    entries."""
    rows = list(
        HubChangeEntry.objects.filter(hub_id=hub_id, version__gt=after, version__lte=upto)
        .order_by("version")
        .values_list("version", "kind", "namespace", "name")[: limit + 1]
    )
    if len(rows) > limit or {row[0] for row in rows} != set(range(after + 1, upto + 1)):
        return None
    delta = Delta()
    for _, kind, namespace, name in rows:
        if kind == Kind.EVERYTHING:
            return None
        if kind != Kind.NOTHING:
            delta.by_kind[kind].add((namespace, name))
    return delta
