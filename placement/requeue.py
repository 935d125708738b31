"""Which placements a hub change re-queues.

A change of a placement re-queues it, a row of its stored result (a PlacementDecision, a
ClusterResourceBinding) the placement it is labelled with; rollouts read placements' results and re-queue
nothing. Which inventory changes re-queue which placements is each family's (`Family.requeued_by`).

`requeued` works this out once per change, when first asked (by the receiver of
`inventory.signals.hub_changes_recorded`, inside the writing transaction), and keeps it on the change.
"""

from dataclasses import dataclass, field

from django.db import models

from inventory.changes import HubChanges
from placement import families
from placement.models import Placement

# (kind, namespace, name); a cluster-scoped placement's namespace is ""
PlacementKey = tuple[str, str, str]


@dataclass
class Requeue:
    # the placements to re-evaluate
    placements: set[PlacementKey] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.placements)


def requeued(changes: HubChanges) -> Requeue:
    """The placements `changes` re-queues, worked out on the first call and kept on the change."""
    return changes.derive(__name__, _work_out)


def _work_out(changes: HubChanges) -> Requeue:
    requeue = Requeue()
    for old, new in changes.other_rows:
        row = new if new is not None else old
        if isinstance(row, Placement):
            requeue.placements.add((row.kind, row.namespace, row.name))
        else:
            _parents(requeue, old, new)
    for family in families.all_families():
        requeue.placements |= {(family.kind, *key) for key in family.requeued_by(changes)}
    return requeue


def _parents(requeue: Requeue, *rows: models.Model | None) -> None:
    """A row of a placement's stored result re-queues the placement it is labelled with."""
    for row in rows:
        for family in families.all_families():
            if row is not None and (key := family.result_owner(row)) is not None:
                requeue.placements.add((family.kind, *key))
