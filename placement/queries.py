"""Read-side placement queries shared by the pages and the API: list annotations, current decisions,
and the placements that select clusters, which the inventory's pages show too (through the hook
`inventory.queries.placements`, filled by `register` when the app is ready).

Like `inventory.queries`, every function answers for a whole page with a fixed number of queries.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import NotSupportedError, connection
from django.db.models import Case, IntegerField, OuterRef, QuerySet, Subquery, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django_stubs_ext import WithAnnotations

from inventory import queries as inventory_queries
from inventory.models import Hub, ManagedCluster
from placement import families
from placement.models import ClusterResourceBinding, DecisionChange, Placement, PlacementDecision

# The condition a list shows per kind: OCM's PlacementSatisfied, Fleet's scheduled condition.
SATISFIED_TYPES = ("PlacementSatisfied", "ClusterResourcePlacementScheduled", "Scheduled")
# List rows never read the explanation: at 10k clusters it is megabytes per placement.
LIST_DEFERRED = ("explanation", "annotations", "labels")

# Is one of SATISFIED_TYPES True in status.conditions, per database.
_SATISFIED_SQL = {
    "postgresql": (
        "EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE({table}.status -> 'conditions', '[]'::jsonb)) c "
        "WHERE c ->> 'type' IN ({types}) AND c ->> 'status' = 'True')"
    ),
    "sqlite": (
        "EXISTS (SELECT 1 FROM json_each({table}.status, '$.conditions') c "
        "WHERE json_extract(c.value, '$.type') IN ({types}) AND json_extract(c.value, '$.status') = 'True')"
    ),
}


def _satisfied_sql() -> RawSQL:
    if connection.vendor not in _SATISFIED_SQL:
        raise NotSupportedError(f"the satisfied filter needs PostgreSQL or SQLite, not {connection.vendor}")
    table = connection.ops.quote_name(Placement._meta.db_table)
    types = ", ".join(["%s"] * len(SATISFIED_TYPES))
    sql = _SATISFIED_SQL[connection.vendor].format(table=table, types=types)
    return RawSQL(sql, SATISFIED_TYPES)


def filter_satisfied(placements: QuerySet[Placement], satisfied: bool) -> QuerySet[Placement]:
    """Placements whose satisfied/scheduled condition is (not) True, evaluated in SQL on the JSON status."""
    return placements.alias(is_satisfied=_satisfied_sql()).filter(is_satisfied=satisfied)


class ListAnnotations(TypedDict):
    """What `for_list` adds to each placement."""

    last_change: datetime | None


if TYPE_CHECKING:  # WithAnnotations takes a TypedDict only in annotations, not at run time
    PlacementForList = WithAnnotations[Placement, ListAnnotations]


def selected_count() -> Coalesce:
    """SQL: how many clusters a placement selects, read from the rows it owns like itself (a hub's
    PlacementDecisions or bindings of a hub-owned placement, the dashboard's of a dashboard-owned one).
    Every page and the API count this, never the explanation: a hub-owned placement's explanation is what
    the dashboard's scheduler would select, not what its hub selected."""
    sizes = [When(kind=family.kind, then=family.selection_size()) for family in families.all_families()]
    return Coalesce(Case(*sizes, output_field=IntegerField()), 0)


def for_list(placements: QuerySet[Placement]) -> QuerySet["PlacementForList"]:
    """Placements with their hub, last decision change and selected count, in one query."""
    last_change = DecisionChange.objects.filter(placement=OuterRef("pk")).order_by("-at").values("at")[:1]
    return (
        placements.select_related("hub")
        .defer(*LIST_DEFERRED)
        .annotate(last_change=Subquery(last_change))
        # sets what `Placement.selected_count` would otherwise ask for, row by row
        .annotate(**{"selected_count": selected_count()})
    )


def condition(placement: Placement) -> dict[str, Any] | None:
    """The PlacementSatisfied (OCM) or scheduled (Fleet) condition from the stored status."""
    conditions: list[dict[str, Any]] = (placement.status or {}).get("conditions") or []
    for item in conditions:
        if item.get("type") in SATISFIED_TYPES:
            return item
    return None


def decision_pages(placement: Placement) -> QuerySet[PlacementDecision]:
    return placement.decisions.filter(owner=placement.owner).order_by("name")


def bindings(placement: Placement) -> QuerySet[ClusterResourceBinding]:
    return placement.bindings.filter(owner=placement.owner).order_by("name")


# --- the placements that select clusters


def placement_counts(clusters: Sequence[ManagedCluster]) -> dict[int, int]:
    """Cluster pk -> how many placements select it (each family counts its own: OCM PlacementDecisions,
    Fleet bindings). A query per family of the clusters."""
    if not clusters:
        return {}
    hub_ids = sorted({c.hub_id for c in clusters})
    by_kind: dict[str, list[ManagedCluster]] = {}
    for cluster in clusters:
        by_kind.setdefault(cluster.kind, []).append(cluster)
    counts: dict[int, int] = {}
    for kind, group in by_kind.items():
        selected = families.of_cluster(kind).selection_counts(hub_ids, [c.name for c in group])
        counts.update((c.pk, selected.get((c.hub_id, c.name), 0)) for c in group)
    return {c.pk: counts[c.pk] for c in clusters}


def placements_selecting(cluster: ManagedCluster) -> QuerySet["PlacementForList"]:
    """The placements whose decisions (OCM) or live bindings (Fleet) hold `cluster`, with their selected
    counts as the placement list shows them."""
    selecting = families.of_cluster(cluster.kind).placements_selecting(cluster)
    return for_list(Placement.objects.filter(pk__in=selecting).for_listing())


def namespaced(hub: Hub) -> QuerySet[Placement]:
    """The hub's placements that live in a namespace (OCM Placements), counted per namespace."""
    return Placement.objects.filter(
        hub=hub, kind__in=[f.kind for f in families.all_families() if f.namespaced]
    )


def register() -> None:
    """Answer the inventory pages' and API's questions about placements."""
    inventory_queries.placements.fill(
        inventory_queries.Placements(Placement, namespaced, placement_counts, placements_selecting)
    )
