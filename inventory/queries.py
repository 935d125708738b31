"""Read-side inventory queries shared by the pages and the API: selectors as SQL, counts, roll-ups.

Every function here answers for a whole page of rows with a fixed number of queries, so a list costs
the same at 10 rows and at 500.
"""

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import models
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce
from django.db.models.lookups import In
from django_stubs_ext import WithAnnotations

from core.hooks import Hook
from inventory import roles, scheduler_inputs
from inventory.models import (
    ClusterSetMembership,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
    SyncRun,
)
from inventory.roles import User
from placement.scheduler.errors import ManifestError
from placement.scheduler.labels import DOES_NOT_EXIST, EXISTS, IN, LabelSelector, Requirement
from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, cluster_set_selector

Availability = ManagedCluster.Availability

# Clusters whose hub reports no heartbeat (availability unknown: OCM's lease lapsed, a Fleet agent that
# reports nothing) or whose row is out of date (stale: the hub's last sync failed).
NOT_REPORTING = Q(availability=Availability.UNKNOWN) | Q(stale=True)

# Hub.state in SQL, for the hub list's filter and the home page's counts.
HUB_NEVER, HUB_FAILING, HUB_OK = "never", "failing", "ok"
HUB_SYNC_STATES = ((HUB_NEVER, "never synced"), (HUB_FAILING, "last sync failed"), (HUB_OK, "ok"))
_HUB_SYNC_STATE_Q = {
    HUB_NEVER: Q(last_synced_at__isnull=True),
    HUB_FAILING: Q(last_synced_at__isnull=False) & ~Q(last_sync_error=""),
    HUB_OK: Q(last_synced_at__isnull=False, last_sync_error=""),
}


def hub_sync_state(state: str) -> Q:
    """The hubs whose `Hub.state` is `state`."""
    return _HUB_SYNC_STATE_Q[state]


# --- label selectors on the JSON `labels` column


def _requirement_q(requirement: Requirement) -> Q:
    # has_key takes the key as a value and KeyTextTransform as a name, so `/`, `.` and `__` in keys are safe.
    present = Q(labels__has_key=requirement.key)
    if requirement.operator == EXISTS:
        return present
    if requirement.operator == DOES_NOT_EXIST:
        return ~present
    value_in = Q(In(KeyTextTransform(requirement.key, "labels"), list(requirement.values)))
    if requirement.operator == IN:
        return present & value_in
    # NotIn passes when the key is absent, as in apimachinery.
    return ~present | (present & ~value_in)


def selector_q(selector: LabelSelector) -> Q:
    """A Q on ManagedCluster.labels that selects exactly what `selector.matches` selects."""
    query = Q()
    for key, value in selector.match_labels:
        query &= _requirement_q(Requirement(key, IN, (value,)))
    for requirement in selector.match_expressions:
        query &= _requirement_q(requirement)
    return query


# --- clusters


def with_cluster_sets(
    clusters: QuerySet[ManagedCluster], cluster_sets: QuerySet[ManagedClusterSet] | None = None
) -> QuerySet[ManagedCluster]:
    """Clusters with their hub and set memberships loaded in two queries, whatever the page size.

    With `cluster_sets` (the sets the reader may see), only the memberships of those sets.
    """
    memberships = ClusterSetMembership.objects.select_related("cluster_set").only(
        "cluster_id", "cluster_set__name", "cluster_set__hub_id"
    )
    if cluster_sets is not None:
        memberships = memberships.filter(cluster_set__in=cluster_sets.values("pk"))
    return clusters.select_related("hub").prefetch_related(
        Prefetch("memberships", queryset=memberships.order_by("cluster_set__name"))
    )


# --- placements, as the inventory pages and API count and list them


@dataclass(frozen=True)
class Placements:
    """The placement app's answers (`placement.queries.register`): the inventory knows no placement model."""

    # every placement, counted per hub (each has a `hub`)
    model: type[models.Model]
    # a hub's placements that live in a namespace, counted per namespace
    namespaced: Callable[[Hub], QuerySet[Any]]
    # cluster pk -> how many placements select it, for a page of clusters in a fixed number of queries
    counts: Callable[[Sequence[ManagedCluster]], dict[int, int]]
    # the placements that select one cluster
    selecting: Callable[[ManagedCluster], QuerySet[Any]]


placements: Hook[Placements] = Hook("the placements of the inventory pages")


def placement_counts(clusters: Sequence[ManagedCluster]) -> dict[int, int]:
    """Cluster pk -> how many placements select it."""
    return placements.get().counts(clusters)


def placements_selecting(cluster: ManagedCluster) -> QuerySet[Any]:
    """The placements that select `cluster`."""
    return placements.get().selecting(cluster)


# --- cluster sets


def with_member_rollup(cluster_sets: QuerySet[ManagedClusterSet]) -> QuerySet[ManagedClusterSet]:
    """Sets annotated with member counts per availability (and stale), in the same query."""

    def members(condition: Q | None = None) -> Count:
        return Count("memberships", filter=condition)

    cluster = "memberships__cluster__"
    return cluster_sets.select_related("hub").annotate(
        member_count=members(),
        available_count=members(Q(**{f"{cluster}availability": Availability.AVAILABLE})),
        unavailable_count=members(Q(**{f"{cluster}availability": Availability.UNAVAILABLE})),
        unknown_count=members(Q(**{f"{cluster}availability": Availability.UNKNOWN})),
        stale_count=members(Q(**{f"{cluster}stale": True})),
    )


def bound_namespaces(cluster_sets: Sequence[ManagedClusterSet]) -> dict[int, list[str]]:
    """Set pk -> namespaces holding a ManagedClusterSetBinding for it, in one query."""
    keys = {(s.hub_id, s.name): s.pk for s in cluster_sets}
    found: dict[int, list[str]] = defaultdict(list)
    bindings = (
        ManagedClusterSetBinding.objects.filter(
            hub_id__in={hub_id for hub_id, _ in keys}, cluster_set__in={name for _, name in keys}
        )
        .order_by("namespace")
        .values_list("hub_id", "cluster_set", "namespace")
    )
    for hub_id, set_name, namespace in bindings:
        if (set_pk := keys.get((hub_id, set_name))) is not None:
            found[set_pk].append(namespace)
    return dict(found)


# --- hubs


class HubCounts(TypedDict):
    """What `with_hub_counts` adds to each hub."""

    cluster_count: int
    stale_count: int
    set_count: int
    placement_count: int
    latest_run_id: int | None


if TYPE_CHECKING:  # WithAnnotations takes a TypedDict only in annotations, not at run time
    HubWithCounts = WithAnnotations[Hub, HubCounts]


def with_hub_counts(hubs: QuerySet[Hub], user: User) -> QuerySet["HubWithCounts"]:
    """The hubs `user` may see with the counts of the clusters, sets and placements they may see, and the
    latest SyncRun id (superusers only), by subqueries (no row multiplication)."""

    def count_of(model: type[models.Model], **conditions: object) -> Coalesce:
        rows = model._default_manager.filter(hub=OuterRef("pk"), **conditions)
        counted = roles.restrict(rows, user).order_by()
        return Coalesce(Subquery(counted.values("hub").annotate(n=Count("pk")).values("n")[:1]), 0)

    runs = roles.restrict(SyncRun.objects.filter(hub=OuterRef("pk")), user)
    latest = runs.order_by("-started_at", "-pk").values("pk")[:1]
    return roles.restrict(hubs, user).annotate(
        cluster_count=count_of(ManagedCluster),
        stale_count=count_of(ManagedCluster, stale=True),
        set_count=count_of(ManagedClusterSet),
        placement_count=count_of(placements.get().model),
        latest_run_id=Subquery(latest),
    )


def namespaces(hub: Hub, user: User) -> list[dict[str, Any]]:
    """The hub's namespaces that hold OCM Placements, ManagedClusterSetBindings or namespace roles `user`
    may see, by name, with those counts: `{"name", "placements", "bindings", "roles"}`. Three queries."""
    counted = {
        "placements": placements.get().namespaced(hub),
        "bindings": ManagedClusterSetBinding.objects.filter(hub=hub),
        "roles": NamespaceRole.objects.filter(hub=hub),
    }
    found: dict[str, dict[str, Any]] = {}
    for what, rows in counted.items():
        visible = roles.restrict(rows, user).order_by().values("namespace").annotate(n=Count("pk"))
        for row in visible:
            name = row["namespace"]
            found.setdefault(name, {"name": name, **dict.fromkeys(counted, 0)})[what] = row["n"]
    return [found[name] for name in sorted(found)]


def latest_runs(hubs: Sequence["HubWithCounts"]) -> dict[int, SyncRun]:
    """Hub pk -> its latest SyncRun, for hubs annotated by `with_hub_counts`; one query."""
    runs = SyncRun.objects.in_bulk([h.latest_run_id for h in hubs if h.latest_run_id is not None])
    return {run.hub_id: run for run in runs.values()}


def selector_text(cluster_set: ManagedClusterSet) -> str:
    """The set's member selector in kubectl syntax, as the scheduler reads it."""
    try:
        selector = cluster_set_selector(scheduler_inputs.cluster_set(cluster_set))
    except (ManifestError, ClusterSetSelectorError) as exc:
        return f"invalid: {exc}"
    # A LabelSelector set without a selector selects no cluster at all.
    return "<nothing>" if selector is None else selector.describe()
