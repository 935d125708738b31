"""Read-side placement queries shared by the pages and the API: list annotations, current decisions.

Like `inventory.queries`, every function answers for a whole page with a fixed number of queries.
"""

from typing import Any

from django.db import NotSupportedError, connection
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

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


def for_list(placements: QuerySet[Placement]) -> QuerySet[Placement]:
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
    for item in (placement.status or {}).get("conditions") or []:
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


def selected_count(placement: Placement) -> int:
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
