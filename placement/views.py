"""Placement pages: the list, the detail page (score table, chart, what-if, timeline) and the forms.

The score table is computed from the stored explanation (never by re-running the scheduler); the
what-if form talks to the API (`/api/placements/<id>/whatif/`). The forms (new placement, edit spec,
upload manifests) write only on POST, through `placement.service` and `placement.importing`.
"""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from fleetui import listing
from placement import importing, queries, service, tables, whatif
from placement.filtersets import PlacementFilterSet
from placement.forms import PlacementForm, SpecForm, UploadForm, as_yaml
from placement.models import Placement

SCORE_COLUMNS = (
    listing.Column("Rank", "rank"),
    listing.Column("Cluster", "name"),
    listing.Column("Total", "total"),
)
TIMELINE_LENGTH = 50


@login_required
@require_GET
def placement_list(request: HttpRequest) -> HttpResponse:
    filterset = PlacementFilterSet(request.GET, queryset=queries.for_list(Placement.objects.for_listing()))
    page = listing.filtered_page(request, filterset)
    for placement in listing.materialise(page):
        placement.condition = queries.condition(placement)
        placement.selected_count = queries.selected_count(placement)
        placement.requested = queries.requested(placement)
    context = {
        "filterset": filterset,
        "hidden_filters": ["hub_id"],
        "page": page,
        "columns": listing.sort_links(tables.PLACEMENT_COLUMNS, request.GET),
        "page_queries": listing.page_queries(request, page),
        "placement_url": reverse("placement:placement-list"),
        "can_add": service.can_change(request.user, adding=True),
    }
    return listing.render_list(
        request, "placement/placement_list.html", "placement/_placement_table.html", context
    )


def _score_context(request: HttpRequest, placement: Placement) -> dict:
    """The score table's page (sorted, filtered, paged server-side) and the chart of the top ranks."""
    explanation = placement.explanation or {}
    prioritizers = tables.prioritizer_columns(placement.kind, explanation)
    names = [name for name, _ in prioritizers]
    table = tables.ScoreTable.of(placement.kind, explanation)
    keys = table.keys()
    sort = request.GET.get("sort", "rank")
    if sort.lstrip("-") not in tables.SCORE_COLUMNS_SORTS:
        sort = "rank"
    shown = tables.filter_rows(
        tables.sort_rows(keys, sort), name=request.GET.get("cluster", ""), show=request.GET.get("show", "")
    )
    # sorted and filtered on the key columns; ScoreRows are built for the shown page only
    rows = tables.ScoreRows(table, shown)
    page = Paginator(rows, listing.per_page(request.GET)).get_page(request.GET.get("page"))
    return {
        "placement": placement,
        "prioritizers": prioritizers,
        "score_rows": [(row, row.cells(names)) for row in page.object_list],
        "page": page,
        "page_queries": listing.page_queries(request, page),
        "columns": listing.sort_links(SCORE_COLUMNS, request.GET),
        "cluster_count": len(table),
        "scored_count": sum(1 for key in keys if key.rank is not None),
        "chart": tables.chart_figure(placement.kind, table.top(tables.CHART_TOP), names),
        # OCM reports summarise the clusters outside the eligible sets instead of listing 10k of them
        "outside": explanation.get("outside") or {},
        "explanation_error": explanation.get("error", ""),
        "show": request.GET.get("show", ""),
        "cluster_filter": request.GET.get("cluster", ""),
    }


@login_required
@require_GET
def placement_detail(request: HttpRequest, pk: int) -> HttpResponse:
    placement = get_object_or_404(Placement.objects.select_related("hub"), pk=pk)
    context = _score_context(request, placement)
    if listing.is_htmx(request):
        return render(request, "placement/_score_table.html", context)
    context |= {
        "condition": queries.condition(placement),
        "conditions": (placement.status or {}).get("conditions") or [],
        "decision_groups": (placement.status or {}).get("decisionGroups") or [],
        "decision_pages": queries.decision_pages(placement),
        "bindings": queries.bindings(placement),
        "events": placement.events.all()[:TIMELINE_LENGTH],
        "history": placement.history.select_related("actor")[:TIMELINE_LENGTH],
        "requested": queries.requested(placement),
        "controls": whatif.controls(placement),
        "can_apply": not placement.read_only and service.can_change(request.user),
        "weights": dict(context["prioritizers"]),
    }
    return render(request, "placement/placement_detail.html", context)


ADD_DENIED = "Adding placements needs staff or the placement.add_placement permission."
CHANGE_DENIED = "Changing placements needs staff or the placement.change_placement permission."


def _forbidden(request: HttpRequest, reason: str) -> HttpResponse:
    return render(request, "placement/forbidden.html", {"reason": reason}, status=403)


@login_required
@require_http_methods(["GET", "POST"])
def placement_create(request: HttpRequest) -> HttpResponse:
    if not service.can_change(request.user, adding=True):
        return _forbidden(request, ADD_DENIED)
    if request.method == "GET":
        form = PlacementForm(initial=PlacementForm.initial_for(request.GET.get("kind")))
    else:
        form = PlacementForm(request.POST)
        if form.is_valid():
            try:
                placement = service.create_placement(**form.placement_fields(), actor=request.user)
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_form.html", {"form": form, "kinds": Placement.Kind.choices})


@login_required
@require_http_methods(["GET", "POST"])
def placement_edit(request: HttpRequest, pk: int) -> HttpResponse:
    placement = get_object_or_404(Placement.objects.select_related("hub"), pk=pk)
    if placement.read_only:
        hub = placement.hub.name
        return _forbidden(request, f"{placement} is a read-only mirror of hub {hub}; change it on the hub.")
    if not service.can_change(request.user):
        return _forbidden(request, CHANGE_DENIED)
    if request.method == "GET":
        form = SpecForm(initial={"spec": as_yaml(placement.spec)})
    else:
        form = SpecForm(request.POST)
        if form.is_valid():
            try:
                service.apply_spec(placement, form.cleaned_data["spec"], actor=request.user)
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_edit.html", {"form": form, "placement": placement})


@login_required
@require_http_methods(["GET", "POST"])
def placement_upload(request: HttpRequest) -> HttpResponse:
    if not service.can_change(request.user, adding=True):
        return _forbidden(request, ADD_DENIED)
    report = None
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_valid():
        loaded = importing.load_text(*form.cleaned_data["manifests"])
        report = importing.apply_manifests(loaded, form.cleaned_data["hub"], request.user)
    status = 400 if report is not None and report.problems else 200
    return render(request, "placement/placement_upload.html", {"form": form, "report": report}, status=status)
