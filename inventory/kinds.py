"""How each hub kind is stored: its row builder, its model, and which rows of the model are its.

The sync (`inventory.sync`) and the manifest loader (`placement.loader`) look kinds up in `HANDLERS`.
Inventory's own kinds are listed here; the kinds of the apps above it (placements and what belongs to
them) are registered by those apps when they are ready, so the inventory imports none of their models.
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models

from inventory import relevance
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
    Row,
    addon_placement_score_row,
    managed_cluster_row,
    managed_cluster_set_binding_row,
    managed_cluster_set_row,
    member_cluster_row,
)
from placement.scheduler.documents import Document


def _without_parents(hub: Hub, rows: list[Row]) -> list[Row]:
    return rows


@dataclass(frozen=True)
class KindHandler:
    """How one hub kind is stored: its row builder, its model, and the rows of the model it owns."""

    to_row: Callable[[Document], Row]
    model: type[models.Model]
    namespaced: bool = False
    # Lookup fields shared by every row of the kind (two kinds share the ManagedCluster table).
    scope: dict[str, Any] = field(default_factory=dict)
    # The sync's rows of a child kind with their parent's foreign key set (only rows it mirrored from the
    # hub are parents); kinds without a parent keep their rows as they are.
    link_parents: Callable[[Hub, list[Row]], list[Row]] = _without_parents
    # Whether an update that changed the fields named (stored values, new values, now) is one no
    # scheduler notices, told from the row's fields alone: such an update is stored without being logged
    # as a change (`inventory.relevance`). None: every update is logged and judged on scheduler inputs.
    noise: Callable[[Collection[str], Mapping[str, Any], Mapping[str, Any], datetime], bool] | None = None

    @property
    def has_parents(self) -> bool:
        """Whether the kind's rows point at a parent row."""
        return self.link_parents is not _without_parents


HANDLERS: dict[tuple[str, str], KindHandler] = {
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
        member_cluster_row,
        ManagedCluster,
        scope={"kind": ManagedCluster.Kind.MEMBER_CLUSTER},
        noise=relevance.heartbeat_only,
    ),
}


def register(group: str, kind: str, handler: KindHandler) -> None:
    """The handler of a kind of an app above inventory, registered when that app is ready."""
    HANDLERS[(group, kind)] = handler
