"""Load manifests into the database as the objects of one hub, all or nothing.

Used by `load_demo`; the kinds and field names are the upstream ones, so the same files are valid
input for the offline `schedule` command.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from inventory import memberships
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from inventory.objects import (
    FLEET_CLUSTER_GROUP,
    OCM_GROUP,
    InvalidManifest,
    Row,
    addon_placement_score_row,
    managed_cluster_row,
    managed_cluster_set_binding_row,
    managed_cluster_set_row,
    member_cluster_row,
)
from placement.models import CRP_LABEL, PLACEMENT_LABEL, ClusterResourceBinding, Placement, PlacementDecision
from placement.objects import (
    FLEET_PLACEMENT_GROUP,
    cluster_resource_binding_row,
    cluster_resource_placement_row,
    placement_decision_row,
    placement_row,
)
from placement.scheduler.documents import Document


@dataclass(frozen=True)
class KindHandler:
    """How one hub kind is stored: its row builder, its model, and the rows of the model it owns."""

    to_row: Callable[[Document], Row]
    model: type[models.Model]
    namespaced: bool = False
    # Lookup fields shared by every row of the kind (two kinds share the ManagedCluster table).
    scope: dict[str, Any] = field(default_factory=dict)


KINDS: dict[tuple[str, str], KindHandler] = {
    (OCM_GROUP, "ManagedCluster"): KindHandler(
        managed_cluster_row, ManagedCluster, scope={"kind": ManagedCluster.Kind.MANAGED_CLUSTER}
    ),
    (OCM_GROUP, "ManagedClusterSet"): KindHandler(managed_cluster_set_row, ManagedClusterSet),
    (OCM_GROUP, "ManagedClusterSetBinding"): KindHandler(
        managed_cluster_set_binding_row, ManagedClusterSetBinding, namespaced=True
    ),
    (OCM_GROUP, "AddOnPlacementScore"): KindHandler(
        addon_placement_score_row, AddOnPlacementScore, namespaced=True
    ),
    (FLEET_CLUSTER_GROUP, "MemberCluster"): KindHandler(
        member_cluster_row, ManagedCluster, scope={"kind": ManagedCluster.Kind.MEMBER_CLUSTER}
    ),
    (OCM_GROUP, "Placement"): KindHandler(
        placement_row, Placement, namespaced=True, scope={"kind": Placement.Kind.PLACEMENT}
    ),
    (OCM_GROUP, "PlacementDecision"): KindHandler(placement_decision_row, PlacementDecision, namespaced=True),
    (FLEET_PLACEMENT_GROUP, "ClusterResourcePlacement"): KindHandler(
        cluster_resource_placement_row,
        Placement,
        scope={"kind": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT},
    ),
    (FLEET_PLACEMENT_GROUP, "ClusterResourceBinding"): KindHandler(
        cluster_resource_binding_row, ClusterResourceBinding
    ),
}


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
        handler = KINDS[(manifest.group, manifest.kind)]
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
        values = dict(row.values)
        if row.model in (PlacementDecision, ClusterResourceBinding):
            key = parent_key(row)
            values["placement"] = key and Placement.objects.filter(
                hub=hub, kind=key[0], namespace=key[1], name=key[2]
            ).first()
        _, created = row.model.objects.update_or_create(hub=hub, **row.lookup, defaults=values)
        (report.created if created else report.updated)[row.model.__name__] += 1
    memberships.rebuild(hub)
    hub.last_synced_at = hub.last_good_sync_at = timezone.now()
    hub.last_sync_error = ""
    hub.save(update_fields=["last_synced_at", "last_good_sync_at", "last_sync_error"])
    return report


def parent_key(row: Row) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of the placement a decision or binding belongs to, from its label."""
    if row.model is PlacementDecision:
        kind, namespace, label = Placement.Kind.PLACEMENT, row.lookup["namespace"], PLACEMENT_LABEL
    elif row.model is ClusterResourceBinding:
        kind, namespace, label = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "", CRP_LABEL
    else:
        return None
    name = row.values["labels"].get(label)
    return (kind, namespace, name) if name else None
