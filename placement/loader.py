"""Load manifests into the database as the objects of one hub, all or nothing.

Used by `load_demo`; the kinds and field names are the upstream ones, so the same files are valid
input for the offline `schedule` command. How placements and what belongs to them are stored (`KINDS`)
is registered with `inventory.kinds` when the app is ready, for the hub sync as much as for `plan`.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import models, transaction
from django.utils import timezone

from inventory import kinds, memberships
from inventory.kinds import KindHandler
from inventory.models import Hub
from inventory.objects import OCM_GROUP, InvalidManifest, Row
from placement import service
from placement.models import (
    CRP_LABEL,
    PLACEMENT_LABEL,
    ApprovalRequest,
    ClusterResourceBinding,
    Owner,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.objects import (
    FLEET_PLACEMENT_GROUP,
    approval_request_row,
    cluster_resource_binding_row,
    cluster_resource_placement_row,
    placement_decision_row,
    placement_row,
    staged_update_run_row,
    staged_update_strategy_row,
)
from placement.scheduler.documents import Document


def _mirrored_parents(hub: Hub, rows: list[Row]) -> list[Row]:
    """The sync links a hub's child objects to the parents it mirrored, never to dashboard-owned rows."""
    return with_parents(hub, rows, owner=Owner.HUB)


# Placements and what belongs to them, stored beside the inventory's kinds (`register_kinds`).
KINDS: dict[tuple[str, str], KindHandler] = {
    (OCM_GROUP, "Placement"): KindHandler(
        placement_row, Placement, namespaced=True, scope={"kind": Placement.Kind.PLACEMENT}
    ),
    (OCM_GROUP, "PlacementDecision"): KindHandler(
        placement_decision_row, PlacementDecision, namespaced=True, link_parents=_mirrored_parents
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterResourcePlacement"): KindHandler(
        cluster_resource_placement_row,
        Placement,
        scope={"kind": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT},
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterResourceBinding"): KindHandler(
        cluster_resource_binding_row, ClusterResourceBinding, link_parents=_mirrored_parents
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterStagedUpdateStrategy"): KindHandler(
        staged_update_strategy_row, StagedUpdateStrategy
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterStagedUpdateRun"): KindHandler(
        staged_update_run_row, StagedUpdateRun, link_parents=_mirrored_parents
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterApprovalRequest"): KindHandler(
        approval_request_row, ApprovalRequest, link_parents=_mirrored_parents
    ),
}


def register_kinds() -> None:
    """Store these kinds as the inventory stores its own, in the sync and in `plan`."""
    for (group, kind), handler in KINDS.items():
        kinds.register(group, kind, handler)


@dataclass
class Plan:
    rows: list[Row] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    hub: Hub
    created: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)


def plan(manifests: Iterable[Document]) -> Plan:
    """Map every manifest (of a scheduler kind, already validated by its parser) to a row, collecting
    errors, without touching the database."""
    result = Plan()
    for manifest in manifests:
        handler = kinds.HANDLERS[(manifest.group, manifest.kind)]
        if handler.namespaced and not manifest.namespace:
            result.errors.append(
                f"{manifest.where}: missing metadata.namespace ({manifest.kind} is namespaced)"
            )
            continue
        try:
            result.rows.append(handler.to_row(manifest))
        except InvalidManifest as exc:
            result.errors.append(f"{manifest.where}: {exc}")
    # Placements first, so decisions and bindings can point at them.
    result.rows.sort(key=lambda row: row.model in (PlacementDecision, ClusterResourceBinding))
    return result


@transaction.atomic
def load(hub_name: str, server_url: str, rows: Iterable[Row]) -> LoadReport:
    """Upsert the rows as the objects of hub `hub_name` (created if missing); re-running changes nothing."""
    hub, _ = Hub.objects.get_or_create(
        name=hub_name, defaults={"server_url": server_url, "serves_ocm": True, "serves_fleet": True}
    )
    report = LoadReport(hub=hub)
    for row in rows:
        # one row at a time: a placement loaded earlier in this call is a parent of the rows after it
        (row,) = with_parents(hub, [row])
        _, created = row.model._default_manager.update_or_create(hub=hub, **row.lookup, defaults=row.values)
        (report.created if created else report.updated)[row.model.__name__] += 1
    memberships.rebuild(hub)
    # the rows were written past the change hook: every process builds its snapshot of the hub again
    service.invalidate_snapshot(hub.pk)
    hub.last_synced_at = hub.last_good_sync_at = timezone.now()
    hub.last_sync_error = ""
    hub.save(update_fields=["last_synced_at", "last_good_sync_at", "last_sync_error"])
    return report


# The foreign key each child kind sets to its parent.
PARENT_FIELDS: dict[type[models.Model], str] = {
    PlacementDecision: "placement_id",
    ClusterResourceBinding: "placement_id",
    StagedUpdateRun: "placement_id",
    ApprovalRequest: "run_id",
}


@dataclass(frozen=True)
class ParentLink:
    """The parent row a child row points at: its model and the lookup that finds it on the hub."""

    model: type[models.Model]
    lookup: tuple[tuple[str, str], ...]

    @property
    def name(self) -> str:
        return dict(self.lookup)["name"]


def parent_link(row: Row) -> ParentLink | None:
    """The parent of a decision or binding (its placement label), a run (spec.placementName) or an
    approval request (spec.parentStageRollout); None for other kinds or when that field is empty."""
    crp = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
    values = row.values
    model: type[models.Model]
    if row.model is PlacementDecision:
        model, kind, namespace = Placement, Placement.Kind.PLACEMENT, row.lookup["namespace"]
        name = values["labels"].get(PLACEMENT_LABEL)
    elif row.model is ClusterResourceBinding:
        model, kind, namespace, name = Placement, crp, "", values["labels"].get(CRP_LABEL)
    elif row.model is StagedUpdateRun:
        model, kind, namespace, name = Placement, crp, "", values["spec"].get("placementName")
    elif row.model is ApprovalRequest:
        model, name = StagedUpdateRun, values["spec"].get("parentStageRollout")
    else:
        return None
    if not isinstance(name, str) or not name:
        return None
    lookup = {"kind": kind, "namespace": namespace, "name": name} if model is Placement else {"name": name}
    return ParentLink(model, tuple(sorted(lookup.items())))


def with_parents(hub: Hub, rows: list[Row], owner: str | None = None) -> list[Row]:
    """The rows with their parent's foreign key set (None while the parent is not stored), one query per
    parent model; `owner` restricts which parents count (the sync links only hub-owned ones)."""
    links = [parent_link(row) for row in rows]
    found = _parent_ids(hub, {link for link in links if link}, owner)
    return [
        Row(row.model, row.lookup, row.values | {PARENT_FIELDS[row.model]: found.get(link) if link else None})
        if row.model in PARENT_FIELDS
        else row
        for row, link in zip(rows, links, strict=True)
    ]


def _parent_ids(hub: Hub, links: set[ParentLink], owner: str | None) -> dict[ParentLink, int]:
    found: dict[ParentLink, int] = {}
    for model in {link.model for link in links}:
        wanted = [link for link in links if link.model is model]
        fields = [name for name, _ in wanted[0].lookup]
        parents = model._default_manager.filter(hub=hub, name__in={link.name for link in wanted})
        if owner is not None:
            parents = parents.filter(owner=owner)
        for pk, *values in parents.values_list("pk", *fields):
            found[ParentLink(model, tuple(zip(fields, values, strict=True)))] = pk
    return found
