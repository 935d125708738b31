"""Hubs, clusters and cluster sets pages: parse with the FilterSet, query in inventory.queries, render.

htmx requests (filter, sort, page, progress polling) get only the fragment they swap.
"""

import time

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_filters import FilterSet

from fleetui import listing
from inventory import queries, tables
from inventory.filtersets import ClusterFilterSet, ClusterSetFilterSet
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    SyncRun,
)
from inventory.tasks import request_sync

# A requested sync that has not started within this long is shown as not queued any more.
QUEUED_FOR_SECONDS = 30
POLL_SECONDS = 1
LIST_DEFERRED = (
    "claims",
    "allocatable",
    "capacity",
    "conditions",
    "properties",
    "resource_usage",
    "agent_status",
)


def _listing(request: HttpRequest, filterset: FilterSet, columns: tuple[listing.Column, ...]) -> dict:
    page = listing.filtered_page(request, filterset)
    return {
        "filterset": filterset,
        "hidden_filters": ["hub_id"],
        "page": page,
        "columns": listing.sort_links(columns, request.GET),
        "page_queries": listing.page_queries(request, page),
    }


def _cluster_rows(page: Page | None) -> None:
    """Attach what the cluster table shows beyond the row itself: placements and human quantities."""
    clusters = listing.materialise(page)
    counts = queries.placement_counts(clusters)
    for cluster in clusters:
        cluster.placement_count = counts[cluster.pk]
        cluster.cpu_display = tables.human_cpu(cluster.cpu_allocatable)
        cluster.memory_display = tables.human_bytes(cluster.memory_allocatable)


def _clusters_context(request: HttpRequest, clusters: QuerySet[ManagedCluster]) -> dict:
    # The table shows none of the wide JSON columns; not reading them halves the page query.
    listing = clusters.for_listing().defer(*LIST_DEFERRED)
    filterset = ClusterFilterSet(request.GET, queryset=queries.with_cluster_sets(listing))
    context = _listing(request, filterset, tables.CLUSTER_COLUMNS)
    _cluster_rows(context["page"])
    # Ids are for links and the API; the form offers names.
    context["hidden_filters"] = ["hub_id", "cluster_set_id"]
    # Row links are built from these prefixes: one reverse() per page instead of one per row.
    context["cluster_url"] = reverse("inventory:cluster-list")
    context["clusterset_url"] = reverse("inventory:clusterset-list")
    return context


# --- hubs


def _hub_context(request: HttpRequest, hub: Hub, run: SyncRun | None, requested_at: float | None) -> dict:
    queued = (
        requested_at is not None
        and (run is None or run.started_at.timestamp() < requested_at)
        and time.time() - requested_at < QUEUED_FOR_SECONDS
    )
    return {
        "hub": hub,
        "run": run,
        "queued": queued,
        "requested_at": requested_at,
        "polling": queued or (run is not None and run.state == SyncRun.State.RUNNING),
        "poll_seconds": POLL_SECONDS,
    }


def _annotated_hub(pk: int) -> tuple[Hub, SyncRun | None]:
    hub = get_object_or_404(queries.with_hub_counts(Hub.objects.all()), pk=pk)
    return hub, queries.latest_runs([hub]).get(hub.pk)


@login_required
@require_GET
def hub_list(request: HttpRequest) -> HttpResponse:
    hubs = list(queries.with_hub_counts(Hub.objects.all()))
    runs = queries.latest_runs(hubs)
    rows = [_hub_context(request, hub, runs.get(hub.pk), None) for hub in hubs]
    return render(request, "inventory/hub_list.html", {"rows": rows})


@login_required
@require_GET
def hub_row(request: HttpRequest, pk: int) -> HttpResponse:
    """One hub's table row; the page polls it while a sync runs or is queued."""
    hub, run = _annotated_hub(pk)
    try:
        requested_at = float(request.GET["requested"])
    except (KeyError, ValueError):
        requested_at = None
    return render(request, "inventory/_hub_row.html", _hub_context(request, hub, run, requested_at))


@login_required
@require_POST
def hub_sync(request: HttpRequest, pk: int) -> HttpResponse:
    """Sync now (staff only): enqueue the hub's sync (in-process when no broker is configured)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff users can start a sync.")
    hub = get_object_or_404(Hub, pk=pk)
    requested_at = timezone.now().timestamp()
    request_sync(hub, actor=request.user.get_username())
    if not listing.is_htmx(request):
        return redirect("inventory:hub-list")
    hub, run = _annotated_hub(pk)
    return render(request, "inventory/_hub_row.html", _hub_context(request, hub, run, requested_at))


# --- clusters


@login_required
@require_GET
def cluster_list(request: HttpRequest) -> HttpResponse:
    context = _clusters_context(request, ManagedCluster.objects.all())
    return listing.render_list(
        request, "inventory/cluster_list.html", "inventory/_cluster_table.html", context
    )


@login_required
@require_GET
def cluster_detail(request: HttpRequest, pk: int) -> HttpResponse:
    cluster = get_object_or_404(queries.with_cluster_sets(ManagedCluster.objects.all()), pk=pk)
    now = timezone.now()
    scores = AddOnPlacementScore.objects.filter(hub=cluster.hub, namespace=cluster.name).order_by("name")
    context = {
        "cluster": cluster,
        "cpu_display": tables.human_cpu(cluster.cpu_allocatable),
        "memory_display": tables.human_bytes(cluster.memory_allocatable),
        "resources": [
            (name, cluster.allocatable.get(name, ""), cluster.capacity.get(name, ""))
            for name in sorted(cluster.allocatable.keys() | cluster.capacity.keys())
        ],
        "scores": [(score, score.valid_until is not None and score.valid_until < now) for score in scores],
        "placements": queries.placements_selecting(cluster),
    }
    return render(request, "inventory/cluster_detail.html", context)


# --- cluster sets


@login_required
@require_GET
def clusterset_list(request: HttpRequest) -> HttpResponse:
    queryset = queries.with_member_rollup(ManagedClusterSet.objects.order_by("name", "hub__name", "pk"))
    filterset = ClusterSetFilterSet(request.GET, queryset=queryset)
    context = _listing(request, filterset, tables.CLUSTER_SET_COLUMNS)
    cluster_sets = listing.materialise(context["page"])
    namespaces = queries.bound_namespaces(cluster_sets)
    for cluster_set in cluster_sets:
        cluster_set.namespaces = namespaces.get(cluster_set.pk, [])
        cluster_set.selector_display = queries.selector_text(cluster_set)
    return listing.render_list(
        request, "inventory/clusterset_list.html", "inventory/_clusterset_table.html", context
    )


@login_required
@require_GET
def clusterset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    cluster_set = get_object_or_404(queries.with_member_rollup(ManagedClusterSet.objects.all()), pk=pk)
    context = _clusters_context(request, ManagedCluster.objects.filter(memberships__cluster_set=cluster_set))
    context |= {
        "cluster_set": cluster_set,
        "selector_display": queries.selector_text(cluster_set),
        "bindings": ManagedClusterSetBinding.objects.filter(
            hub=cluster_set.hub, cluster_set=cluster_set.name
        ).order_by("namespace", "name"),
        # The set and the hub are fixed here; the other cluster filters apply to its members.
        "hidden_filters": ["hub", "hub_id", "cluster_set", "cluster_set_id"],
    }
    return listing.render_list(
        request, "inventory/clusterset_detail.html", "inventory/_cluster_table.html", context
    )
