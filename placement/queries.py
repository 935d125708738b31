"""Read-side placement queries shared by the pages and the API: list annotations, current decisions,
and the placements that select clusters, which the inventory's pages show too (through the hook
`inventory.queries.placements`, filled by `register` when the app is ready).

Like `inventory.queries`, every function answers for a whole page with a fixed number of queries.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import NotSupportedError, connection
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce
from django_stubs_ext import WithAnnotations

from inventory import queries as inventory_queries
from inventory.models import Hub, ManagedCluster
from placement.models import ClusterResourceBinding, DecisionChange, Placement, PlacementDecision
from placement.scheduler.fleet.types import STATE_UNSCHEDULED
from placement.summary import FLEET_CRP

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
    binding_count: int


if TYPE_CHECKING:  # WithAnnotations takes a TypedDict only in annotations, not at run time
    PlacementForList = WithAnnotations[Placement, ListAnnotations]


def for_list(placements: QuerySet[Placement]) -> QuerySet["PlacementForList"]:
    """Placements with their hub, last decision change and live Fleet binding count, in one query."""
    last_change = DecisionChange.objects.filter(placement=OuterRef("pk")).order_by("-at").values("at")[:1]
    live = (
        ClusterResourceBinding.objects.filter(placement=OuterRef("pk"), owner=OuterRef("owner"))
        .exclude(spec__state=STATE_UNSCHEDULED)
        .order_by()
        .values("placement")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    return (
        placements.select_related("hub")
        .defer(*LIST_DEFERRED)
        .annotate(last_change=Subquery(last_change), binding_count=Coalesce(Subquery(live), 0))
    )


def condition(placement: Placement) -> dict[str, Any] | None:
    """The PlacementSatisfied (OCM) or scheduled (Fleet) condition from the stored status."""
    conditions: list[dict[str, Any]] = (placement.status or {}).get("conditions") or []
    for item in conditions:
        if item.get("type") in SATISFIED_TYPES:
            return item
    return None


def requested(placement: Placement) -> str:
    """How many clusters the placement asks for: a number, or "all"."""
    spec = placement.spec or {}
    if placement.kind == FLEET_CRP:
        policy = spec.get("policy") or {}
        if policy.get("placementType") == "PickN":
            return str(policy.get("numberOfClusters", 0))
        if policy.get("placementType") == "PickFixed":
            return str(len(policy.get("clusterNames") or []))
        return "all"
    number = spec.get("numberOfClusters")
    return "all" if number is None else str(number)


def selected_count(placement: "PlacementForList") -> int:
    """Selected clusters: OCM's status.numberOfSelectedClusters, Fleet's live bindings (from `for_list`)."""
    if placement.kind == FLEET_CRP:
        return placement.binding_count
    return int((placement.status or {}).get("numberOfSelectedClusters") or 0)


def current_selection(placement: Placement) -> list[str]:
    """The clusters the placement holds now: its PlacementDecisions (OCM) or live bindings (Fleet)."""
    if placement.kind == FLEET_CRP:
        live = placement.bindings.filter(owner=placement.owner).exclude(spec__state=STATE_UNSCHEDULED)
        bindings = live.values_list("spec", flat=True)
        return sorted(spec.get("targetCluster", "") for spec in bindings)
    # a dashboard placement's published copies mirrored back from the hub are not its decisions
    pages = placement.decisions.filter(owner=placement.owner).values_list("decisions", flat=True)
    return sorted(item["clusterName"] for page in pages for item in page or [])


def decision_pages(placement: Placement) -> QuerySet[PlacementDecision]:
    return placement.decisions.filter(owner=placement.owner).order_by("name")


def bindings(placement: Placement) -> QuerySet[ClusterResourceBinding]:
    return placement.bindings.filter(owner=placement.owner).order_by("name")


# --- the placements that select clusters


# Each element of PlacementDecision.status.decisions, with its clusterName, per database.
_DECISION_ELEMENTS = {
    "postgresql": ("jsonb_array_elements(d.decisions) AS e(value)", "e.value ->> 'clusterName'"),
    "sqlite": ("json_each(d.decisions) AS e", "json_extract(e.value, '$.clusterName')"),
}


def _decision_sql(
    select: str, hub_ids: Sequence[int], names: Sequence[str], tail: str = ""
) -> tuple[str, list[int | str]]:
    """SQL over every (decision row, clusterName) of `hub_ids` naming one of `names`."""
    if connection.vendor not in _DECISION_ELEMENTS:
        raise NotSupportedError(f"placement counts need PostgreSQL or SQLite, not {connection.vendor}")
    elements, cluster_name = _DECISION_ELEMENTS[connection.vendor]
    table = connection.ops.quote_name(PlacementDecision._meta.db_table)
    sql = (
        f"SELECT {select.format(cluster_name=cluster_name)} FROM {table} d, {elements} "
        f"WHERE d.placement_id IS NOT NULL AND d.hub_id IN ({', '.join(['%s'] * len(hub_ids))}) "
        f"AND {cluster_name} IN ({', '.join(['%s'] * len(names))}) {tail}"
    )
    return sql, [*hub_ids, *names]


def _decision_counts(hub_ids: Sequence[int], names: Sequence[str]) -> dict[tuple[int, str], int]:
    # A cluster appears at most once per placement across its PlacementDecision pages.
    sql, params = _decision_sql("d.hub_id, {cluster_name}, COUNT(*)", hub_ids, names, "GROUP BY 1, 2")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(hub_id, name): count for hub_id, name, count in cursor.fetchall()}


def _live_bindings(hub_ids: Iterable[int], names: Iterable[str]) -> QuerySet[ClusterResourceBinding]:
    """Fleet bindings targeting `names` on `hub_ids` that still place their CRP there."""
    return (
        ClusterResourceBinding.objects.filter(hub_id__in=hub_ids, placement__isnull=False)
        .filter(spec__targetCluster__in=list(names))
        .filter(Q(spec__state__isnull=True) | ~Q(spec__state=STATE_UNSCHEDULED))
    )


def _binding_counts(hub_ids: Sequence[int], names: Sequence[str]) -> dict[tuple[int, str], int]:
    live = _live_bindings(hub_ids, names).annotate(target=KeyTextTransform("targetCluster", "spec"))
    rows = live.values("hub_id", "target").annotate(count=Count("pk"))
    return {(row["hub_id"], row["target"]): row["count"] for row in rows}


def placement_counts(clusters: Sequence[ManagedCluster]) -> dict[int, int]:
    """Cluster pk -> how many placements select it: OCM PlacementDecisions, Fleet bindings. Two queries."""
    if not clusters:
        return {}
    hub_ids = sorted({c.hub_id for c in clusters})
    ocm = [c.name for c in clusters if c.kind == ManagedCluster.Kind.MANAGED_CLUSTER]
    fleet = [c.name for c in clusters if c.kind == ManagedCluster.Kind.MEMBER_CLUSTER]
    decided = _decision_counts(hub_ids, ocm) if ocm else {}
    bound = _binding_counts(hub_ids, fleet) if fleet else {}
    return {
        c.pk: (decided if c.kind == ManagedCluster.Kind.MANAGED_CLUSTER else bound).get((c.hub_id, c.name), 0)
        for c in clusters
    }


def placements_selecting(cluster: ManagedCluster) -> QuerySet[Placement]:
    """The placements whose decisions (OCM) or live bindings (Fleet) hold `cluster`."""
    if cluster.kind == ManagedCluster.Kind.MEMBER_CLUSTER:
        bound = _live_bindings([cluster.hub_id], [cluster.name]).values("placement_id")
        return Placement.objects.filter(pk__in=bound).for_listing()
    sql, params = _decision_sql("DISTINCT d.placement_id", [cluster.hub_id], [cluster.name])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        placement_ids = [row[0] for row in cursor.fetchall()]
    return Placement.objects.filter(pk__in=placement_ids).for_listing()


def namespaced(hub: Hub) -> QuerySet[Placement]:
    """The hub's placements that live in a namespace (OCM Placements), counted per namespace."""
    return Placement.objects.filter(hub=hub, kind=Placement.Kind.PLACEMENT)


def register() -> None:
    """Answer the inventory pages' and API's questions about placements."""
    inventory_queries.placements.fill(
        inventory_queries.Placements(Placement, namespaced, placement_counts, placements_selecting)
    )
