"""Read-side placement queries shared by the pages and the API: list annotations, current decisions,
and the placements that select clusters, which the inventory's pages show too (through the hook
`inventory.queries.placements`, filled by `register` when the app is ready).

Like `inventory.queries`, every function answers for a whole page with a fixed number of queries.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import NotSupportedError, connection
from django.db.models import (
    BooleanField,
    Case,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django_stubs_ext import WithAnnotations

from inventory import queries as inventory_queries
from inventory.models import Hub, ManagedCluster
from placement import families
from placement.models import ClusterResourceBinding, DecisionChange, Owner, Placement, PlacementDecision

# The condition a list shows per kind: OCM's PlacementSatisfied, Fleet's scheduled condition.
SATISFIED_TYPES = ("PlacementSatisfied", "ClusterResourcePlacementScheduled", "Scheduled")
# List rows never read the explanation: at 10k clusters it is megabytes per placement.
LIST_DEFERRED = ("explanation", "cluster_record", "annotations", "labels")

# The PlacementMisconfigured condition OCM writes when a spec parses but cannot be scheduled.
MISCONFIGURED_TYPE = "PlacementMisconfigured"

# A condition of `{table}.status.conditions` matching the clauses, per database; a clause is
# `{field} IN (...)`, with `{field}` a condition's field read as text.
_CONDITION_SQL = {
    "postgresql": (
        "EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE({table}.status -> 'conditions', '[]'::jsonb)) c "
        "WHERE {clauses})",
        "c ->> '{field}'",
    ),
    "sqlite": (
        "EXISTS (SELECT 1 FROM json_each({table}.status, '$.conditions') c WHERE {clauses})",
        "json_extract(c.value, '$.{field}')",
    ),
}


def has_condition(
    model: type[Model], types: Sequence[str], *, statuses: Sequence[str] = (), reasons: Sequence[str] = ()
) -> RawSQL:
    """Whether a row of `model` (a JSON `status` carrying Kubernetes conditions) has a condition of one
    of `types`, with one of `statuses` and of `reasons` when given: a boolean SQL expression."""
    if connection.vendor not in _CONDITION_SQL:
        raise NotSupportedError(f"condition filters need PostgreSQL or SQLite, not {connection.vendor}")
    template, field = _CONDITION_SQL[connection.vendor]
    clauses: list[str] = []
    params: list[str] = []
    for name, values in (("type", types), ("status", statuses), ("reason", reasons)):
        if values:
            clauses.append(f"{field.format(field=name)} IN ({', '.join(['%s'] * len(values))})")
            params.extend(values)
    table = connection.ops.quote_name(model._meta.db_table)
    sql = template.format(table=table, clauses=" AND ".join(clauses))
    return RawSQL(sql, params, output_field=BooleanField())


def filter_satisfied(placements: QuerySet[Placement], satisfied: bool) -> QuerySet[Placement]:
    """Placements whose satisfied/scheduled condition is (not) True, evaluated in SQL on the JSON status."""
    is_satisfied = has_condition(Placement, SATISFIED_TYPES, statuses=("True",))
    return placements.alias(is_satisfied=is_satisfied).filter(is_satisfied=satisfied)


def filter_reported(placements: QuerySet[Placement], reported: bool) -> QuerySet[Placement]:
    """Placements that carry (or not) a satisfied/scheduled condition at all, whatever its status: one
    without it is new, or its hub has not scheduled it yet, so whether it is short is not known."""
    is_reported = has_condition(Placement, SATISFIED_TYPES)
    return placements.alias(is_reported=is_reported).filter(is_reported=reported)


def filter_misconfigured(placements: QuerySet[Placement], misconfigured: bool) -> QuerySet[Placement]:
    """Placements whose PlacementMisconfigured condition is (not) True: a spec the scheduler refuses."""
    is_misconfigured = has_condition(Placement, (MISCONFIGURED_TYPE,), statuses=("True",))
    return placements.alias(is_misconfigured=is_misconfigured).filter(is_misconfigured=misconfigured)


# --- rolling updates, as the rollout rounds of dashboard-owned CRPs store them in status["rollout"]

ROLLOUT_ACTIVE, ROLLOUT_STUCK = "active", "stuck"
ROLLOUT_STATES = ((ROLLOUT_ACTIVE, "in progress"), (ROLLOUT_STUCK, "stuck"))


def _rollout_stuck() -> Q:
    # The last round failed (its error is kept until a round succeeds), or bindings failed to apply.
    return ~Q(rollout_error="") | ~Q(rollout_failed="[]")


def filter_rollout(placements: QuerySet[Placement], state: str) -> QuerySet[Placement]:
    """Dashboard-owned CRPs whose rolling update is in progress (more rounds to come, or bindings still
    applying) or stuck (the last round failed, or some bindings did), from the summary the last round
    stored."""
    rolling = placements.filter(owner=Owner.DASHBOARD, status__rollout__has_key="at").alias(
        rollout_error=Coalesce(KT("status__rollout__error"), Value(""), output_field=TextField()),
        rollout_failed=Coalesce(KT("status__rollout__failed"), Value("[]"), output_field=TextField()),
        # a JSON null reads as NULL on PostgreSQL, as "null" on SQLite (Django's KT); a lookup on KT
        # itself would ask whether the key exists, which it does
        rollout_requeue=Coalesce(KT("status__rollout__requeueAt"), Value(""), output_field=TextField()),
        rollout_applying=Coalesce(KT("status__rollout__applying"), Value("[]"), output_field=TextField()),
    )
    if state == ROLLOUT_STUCK:
        return rolling.filter(_rollout_stuck())
    moving = (
        Q(status__rollout__needRoll=True)
        | ~Q(rollout_requeue__in=("", "null"))
        | ~Q(rollout_applying__in=("[]", "null"))
    )
    return rolling.filter(moving).exclude(_rollout_stuck())


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
