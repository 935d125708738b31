"""Load manifests into the database as the objects of one hub, all or nothing.

Used by `load_demo`; the kinds and field names are the upstream ones, so the same files are valid
input for the offline `schedule` command.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from inventory.models import Hub
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
    to_row: Callable[[Document], Row]
    namespaced: bool = False


KINDS: dict[tuple[str, str], KindHandler] = {
    (OCM_GROUP, "ManagedCluster"): KindHandler(managed_cluster_row),
    (OCM_GROUP, "ManagedClusterSet"): KindHandler(managed_cluster_set_row),
    (OCM_GROUP, "ManagedClusterSetBinding"): KindHandler(managed_cluster_set_binding_row, namespaced=True),
    (OCM_GROUP, "AddOnPlacementScore"): KindHandler(addon_placement_score_row, namespaced=True),
    (FLEET_CLUSTER_GROUP, "MemberCluster"): KindHandler(member_cluster_row),
    (OCM_GROUP, "Placement"): KindHandler(placement_row, namespaced=True),
    (OCM_GROUP, "PlacementDecision"): KindHandler(placement_decision_row, namespaced=True),
    (FLEET_PLACEMENT_GROUP, "ClusterResourcePlacement"): KindHandler(cluster_resource_placement_row),
    (FLEET_PLACEMENT_GROUP, "ClusterResourceBinding"): KindHandler(cluster_resource_binding_row),
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
        if row.model is PlacementDecision:
            values["placement"] = _parent(
                hub, Placement.Kind.PLACEMENT, row.lookup["namespace"], values, PLACEMENT_LABEL
            )
        elif row.model is ClusterResourceBinding:
            values["placement"] = _parent(
                hub, Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "", values, CRP_LABEL
            )
        _, created = row.model.objects.update_or_create(hub=hub, **row.lookup, defaults=values)
        (report.created if created else report.updated)[row.model.__name__] += 1
    hub.last_synced_at = timezone.now()
    hub.last_sync_error = ""
    hub.save(update_fields=["last_synced_at", "last_sync_error"])
    return report


def _parent(hub: Hub, kind: str, namespace: str, values: dict[str, object], label: str) -> Placement | None:
    name = values["labels"].get(label)  # type: ignore[attr-defined]
    if not name:
        return None
    return Placement.objects.filter(hub=hub, kind=kind, namespace=namespace, name=name).first()
