"""Placement pages: the list, the placement page in tabs (decisions, scores, what-if, rollout, tolerations,
history, YAML; each computes only what it shows) and the forms.

The score table is computed from the stored explanation (never by re-running the scheduler); the
what-if form evaluates through the API (`/api/placements/<id>/whatif/`) and applies through
`placement_whatif_apply`, which answers with the new score table. The forms (new placement, edit spec,
upload manifests) write only on POST, through `placement.service` and `placement.importing`.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import listing
from core.editors import ListEditor, edit_rows
from core.hooks import Hook
from core.requests import SignedInRequest
from core.views import table_page
from inventory import tables as inventory_tables
from placement import (
    access,
    explanations,
    history,
    importing,
    publishing,
    queries,
    service,
    tables,
    tolerations,
)
from placement.filtersets import PlacementFilterSet
from placement.forms import PlacementForm, SpecForm, TolerationFormSet, UploadForm, as_yaml
from placement.models import Placement
from placement.scheduler.untrusted import InputError, load_json

TIMELINE_LENGTH = 50
SCORE_TABLE = "placement/_score_table.html"
TOLERATION_EDITOR = "placement/_toleration_editor.html"


@dataclass(frozen=True)
class PageSections:
    """Sections of the placement page that a layer above shows after its bindings: their templates, in
    order, and the context they read, given the page's own (whose rows they may reuse and replace)."""

    templates: tuple[str, ...]
    context: Callable[[HttpRequest, Placement, dict[str, Any]], dict[str, Any]]


# filled by the rollouts (their Rollout section and the placement's staged update runs)
sections: Hook[PageSections] = Hook("the placement page's rollout sections")


@login_required
@require_GET
def placement_list(request: SignedInRequest) -> HttpResponse:
    placements = access.visible(queries.for_list(Placement.objects.for_listing()), request.user)
    filterset = PlacementFilterSet(request.GET, queryset=placements, request=request)
    return table_page(
        request,
        filterset,
        tables.PlacementTable,
        "placement/placement_list.html",
        "placement/_placement_table.html",
        extra={"can_add": access.administers_any(request.user)},
    )


def visible_placement(request: HttpRequest, pk: int, *, record: bool = True) -> Placement:
    """The placement if the user's roles show it, with its selected count; 404 otherwise, as if it did not
    exist. Without `record`, its per-cluster record is not read: the record grows with the fleet (a few
    hundred kB at 50,000 clusters) and only the score table reads it."""
    placements = Placement.objects.select_related("hub")
    if not record:
        placements = placements.defer("cluster_record")
    return access.visible_one(
        placements.annotate(**{"selected_count": queries.selected_count()}), request.user, pk
    )


def _score_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    """The score table's page (sorted, filtered, paged server-side) and the chart of the selected clusters
    and the best of the rest; for a PickFixed placement, its listed clusters with their status instead of
    every member."""
    explanation = placement.explanation or {}
    family = placement.family
    prioritizers = family.prioritizer_columns(explanation)
    names = [name for name, _ in prioritizers]
    context: dict[str, Any] = {
        "placement": placement,
        # the filters' target: the tab shown, also when an Apply answers with this table
        "score_url": request.path if request.method == "GET" else _tab_url("whatif", placement),
        "prioritizers": prioritizers,
        "weights": dict(prioritizers),
        # OCM reports summarise the clusters outside the eligible sets instead of listing 10k of them
        "outside": explanation.get("outside") or {},
        "explanation_error": explanation.get("error", ""),
        "show": request.GET.get("show", ""),
        "cluster_filter": request.GET.get("cluster", ""),
    }
    record = explanations.record(placement)
    fixed = family.fixed_clusters(explanation, record)
    if fixed is not None:
        return context | {"fixed_table": tables.FixedClusterTable(fixed, placement).configure(request)}
    table = family.score_table(explanation, record)
    sort = request.GET.get("sort", "rank")
    if sort.lstrip("-") not in tables.SCORE_COLUMNS_SORTS:
        sort = "rank"
    shown = table.shown(
        table.order(sort), name=request.GET.get("cluster", ""), show=request.GET.get("show", "")
    )
    # sorted and filtered on the record's arrays; ScoreRows are built for the shown page only
    rows = tables.ScoreRows(table, shown)
    return context | {
        "table": tables.ScoreRowTable(rows, prioritizers, placement).configure(request),
        "cluster_count": len(table),
        "scored_count": table.scored_count,
        "chart": tables.chart_figure(family.chart_title, family.chart_axis, table.chart_pick(), names),
    }


def _history_chart(placement: Placement) -> dict[str, Any]:
    """The figure of the selected count over time, from the decision history."""
    return tables.history_figure(history.selection_over_time(placement), timezone.now())


def _decisions_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    status = placement.status or {}
    return {
        "conditions": status.get("conditions") or [],
        "decision_groups": status.get("decisionGroups") or [],
        # querysets: the family's results template reads the one it shows
        "decision_pages": queries.decision_pages(placement),
        "bindings": queries.bindings(placement),
    }


def _whatif_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    return _score_context(request, placement) | {"controls": placement.family.whatif_controls(placement)}


def _rollout_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    page_sections = sections.get()
    context = page_sections.context(request, placement, {})
    return context | {"extra_sections": page_sections.templates}


def _history_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    return {
        "events": placement.events.all()[:TIMELINE_LENGTH],
        "history": placement.history.select_related("actor")[:TIMELINE_LENGTH],
        "history_chart": _history_chart(placement),
        **inventory_tables.recent_changes(placement),
    }


def kubernetes_object(placement: Placement) -> dict[str, Any]:
    """The placement as its hub serves it: the manifest and, once scheduled, its status."""
    document = service.manifest(placement)
    if placement.status:
        document["status"] = placement.status
    return document


def _yaml_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
    return {"yaml": as_yaml(kubernetes_object(placement))}


@dataclass(frozen=True)
class Tab:
    """One tab of the placement page: its URL, the context only its body reads, what htmx gets instead of
    the whole page (the part it swaps there; by default the body), the body (by default
    `placement/tabs/_<slug>.html`), whether it draws charts, whether it reads the per-cluster record,
    and the anchors its body holds that the page had before it had tabs (static/js/tabs.js sends an old
    link to one of them to this tab)."""

    slug: str
    label: str
    url_name: str
    context: Callable[[HttpRequest, Placement], dict[str, Any]]
    fragment: str = ""
    body: str = ""
    charts: bool = False
    record: bool = False
    anchors: tuple[str, ...] = ()

    @property
    def template(self) -> str:
        return self.body or f"placement/tabs/_{self.slug}.html"


TABS = (
    Tab("decisions", "Decisions", "placement:placement-detail", _decisions_context),
    Tab(
        "scores",
        "Scores",
        "placement:placement-scores",
        _score_context,
        SCORE_TABLE,
        charts=True,
        record=True,
        anchors=("scores-heading", "score-table", "scores", "chart-heading", "score-chart"),
    ),
    Tab(
        "whatif",
        "What-if",
        "placement:placement-whatif",
        _whatif_context,
        SCORE_TABLE,
        charts=True,
        record=True,
        anchors=("whatif-heading", "whatif-form"),
    ),
    Tab(
        "rollout",
        "Rollout",
        "placement:placement-rollout",
        _rollout_context,
        anchors=("rollout", "rollout-heading"),
    ),
    Tab(
        "tolerations",
        "Tolerations",
        "placement:placement-tolerations",
        lambda request, placement: _toleration_context(request, placement),
        body=TOLERATION_EDITOR,
        anchors=("tolerations-section", "tolerations-heading"),
    ),
    Tab(
        "history",
        "History",
        "placement:placement-history",
        _history_context,
        anchors=("timeline-heading", "history", "events", "recent-changes-heading", "recent-changes"),
    ),
    Tab("yaml", "YAML", "placement:placement-yaml", _yaml_context),
)
TABS_BY_SLUG = {tab.slug: tab for tab in TABS}


def _tab_url(slug: str, placement: Placement) -> str:
    return reverse(TABS_BY_SLUG[slug].url_name, args=[placement.pk])


def _render_tab(
    request: SignedInRequest,
    placement: Placement,
    slug: str,
    context: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """A tab of the placement page: the whole page (header card, tab bar, the tab's body), or for htmx
    only the part the tab swaps. `context` replaces what the tab would compute (an editor's answer)."""
    tab = TABS_BY_SLUG[slug]
    context = {"placement": placement, **(tab.context(request, placement) if context is None else context)}
    if listing.wants_fragment(request):
        response = render(request, tab.fragment or tab.template, context, status=status)
    else:
        context |= {
            "tab": tab,
            "tabs": [(each, reverse(each.url_name, args=[placement.pk])) for each in TABS],
            "condition": queries.condition(placement),
            "publishes": publishing.publishes(placement),
            "published": publishing.last_outcome(placement),
            "requested": placement.family.requested(placement),
            "can_apply": not placement.read_only and access.can_change(request.user, placement),
        }
        response = render(request, "placement/placement_detail.html", context, status=status)
    patch_vary_headers(response, listing.HTMX_HEADERS)
    return response


@login_required
@require_GET
def placement_tab(request: SignedInRequest, pk: int, tab: str) -> HttpResponse:
    """A tab of the placement page that only shows (`TABS`, named by the URL): Decisions, Scores (htmx swaps
    the score table alone on filter, sort and page), What-if, Rollout, History and YAML. Tolerations is the
    editor's own view."""
    return _render_tab(request, visible_placement(request, pk, record=TABS_BY_SLUG[tab].record), tab)


@login_required
@require_GET
def placement_yaml_download(request: SignedInRequest, pk: int) -> HttpResponse:
    """The YAML tab's text as a file."""
    placement = visible_placement(request, pk)
    text = as_yaml(kubernetes_object(placement))
    response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{placement.name}.yaml"'
    return response


def forbidden(request: HttpRequest, reason: str) -> HttpResponse:
    return render(request, "placement/forbidden.html", {"reason": reason}, status=403)


# the history's trigger for a what-if Apply
WHATIF_TRIGGER = "what-if applied"


@login_required
@require_POST
@listing.varies_with_htmx
def placement_whatif_apply(request: SignedInRequest, pk: int) -> HttpResponse:
    """What-if Apply (POST + CSRF; `spec`: the evaluated spec as JSON), saved by `service.apply_spec`:
    validated, rescheduled, audited and recorded once in the history (a double submit adds nothing).
    htmx gets the new score table with the chart's figure, and the selected count swapped out of band; a
    refusal goes to the what-if errors. A plain form post is redirected to the Scores tab."""
    placement = visible_placement(request, pk)
    try:
        spec = load_json(request.POST.get("spec", ""))
        service.apply_spec(placement, spec, actor=request.user, trigger=WHATIF_TRIGGER, request=request)
    except PermissionDenied as exc:
        return _whatif_refused(request, str(exc), 403)
    except InputError as exc:  # not JSON, or too large or deep to read
        return _whatif_refused(request, f"spec: {exc}", 400)
    except ValidationError as exc:
        return _whatif_refused(request, "; ".join(" ".join(m) for m in exc.message_dict.values()), 400)
    messages.success(request, f"{placement}: the what-if spec is applied.")
    if not listing.wants_fragment(request):
        return redirect("placement:placement-scores", pk=placement.pk)
    placement = visible_placement(request, pk)  # read again: the spec, explanation and count it stored
    context = _score_context(request, placement) | {"requested": placement.family.requested(placement)}
    return render(request, "placement/_whatif_applied.html", context)


def _whatif_refused(request: SignedInRequest, reason: str, status: int) -> HttpResponse:
    if not listing.wants_fragment(request):
        return render(request, "placement/forbidden.html", {"reason": reason}, status=status)
    response = HttpResponse(reason, status=status, content_type="text/plain; charset=utf-8")
    response["HX-Retarget"], response["HX-Reswap"] = "#whatif-errors", "innerHTML"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def placement_create(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return forbidden(request, access.ADMIN_NEEDED)
    if request.method == "GET":
        form = PlacementForm(initial=PlacementForm.initial_for(request.GET.get("kind")))
    else:
        form = PlacementForm(request.POST)
        if form.is_valid():
            try:
                fields = form.placement_fields()
                placement = service.create_placement(**fields, actor=request.user, request=request)
            except PermissionDenied as exc:
                return forbidden(request, str(exc))
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                messages.success(request, f"{placement.get_kind_display()} {placement} created.")
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_form.html", {"form": form, "kinds": Placement.Kind.choices})


@login_required
@require_http_methods(["GET", "POST"])
def placement_edit(request: SignedInRequest, pk: int) -> HttpResponse:
    placement = visible_placement(request, pk)
    try:
        access.authorise_change(request.user, placement, service.SPEC_ACTION, request=request)
    except PermissionDenied as exc:
        return forbidden(request, str(exc))
    if request.method == "GET":
        form = SpecForm(initial={"spec": as_yaml(placement.spec)})
    else:
        form = SpecForm(request.POST)
        if form.is_valid():
            try:
                service.apply_spec(placement, form.cleaned_data["spec"], actor=request.user, request=request)
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                messages.success(request, f"{placement}: spec saved.")
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_edit.html", {"form": form, "placement": placement})


@login_required
@require_http_methods(["GET", "POST"])
def placement_upload(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return forbidden(request, access.ADMIN_NEEDED)
    report = None
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_valid():
        loaded = importing.load_text(*form.cleaned_data["manifests"])
        report = importing.apply_manifests(loaded, form.cleaned_data["hub"], request.user)
        count = len(report.problems or report.applied)
        if report.problems:
            messages.error(request, f"Nothing was applied: {count} problem{pluralize(count)}, listed below.")
        else:
            messages.success(request, f"{count} placement{pluralize(count)} applied.")
    status = 200 if report is None or not report.problems else 403 if report.refused else 400
    if form.errors:  # a file too large or not UTF-8
        status = 400
    return render(request, "placement/placement_upload.html", {"form": form, "report": report}, status=status)


# --- the toleration editor (placement.tolerations validates, previews and saves; hub-owned: read-only)

TOLERATIONS_DENIED = f"Editing tolerations needs a dashboard-owned placement. {access.CHANGE_DENIED}"


def _toleration_context(request: HttpRequest, placement: Placement, **context: Any) -> dict[str, Any]:
    formset = context.pop("formset", None)
    return context | {
        "toleration_formset": TolerationFormSet(placement=placement) if formset is None else formset,
        "can_edit_tolerations": tolerations.can_edit(request.user, placement),
        "current_tolerations": tolerations.current(placement),
    }


def _toleration_response(
    request: SignedInRequest, placement: Placement, status: int = 200, error: str = "", **context: Any
) -> HttpResponse:
    """The editor's section for htmx, the placement page's Tolerations tab otherwise."""
    context = _toleration_context(request, placement, toleration_error=error, **context)
    return _render_tab(request, placement, "tolerations", context, status)


def _toleration_preview(placement: Placement, rows: list[dict[str, Any]]) -> dict[str, Any]:
    answer = tolerations.preview(placement, rows)
    return {"whatif": answer, "removed": tolerations.removed_with_reasons(answer)}


def _tolerations_saved(request: SignedInRequest, placement: Placement) -> HttpResponse:
    messages.success(request, f"Tolerations of {placement} saved; the placement was rescheduled.")
    if not listing.wants_fragment(request):
        return redirect("placement:placement-tolerations", pk=placement.pk)
    return _toleration_response(request, placement)


@login_required
@require_http_methods(["GET", "POST"])
@listing.varies_with_htmx
def placement_tolerations(request: SignedInRequest, pk: int) -> HttpResponse:
    """GET: the Tolerations tab; POST: `add` a row, `preview` the diff, `save`."""
    placement = visible_placement(request, pk)
    if request.method == "GET":
        return _toleration_response(request, placement)
    editor = ListEditor(
        prefix="tolerations",
        formset=lambda data: TolerationFormSet(data, placement=placement),
        may_edit=tolerations.can_edit(request.user, placement),
        denied=TOLERATIONS_DENIED,
        preview=lambda rows: _toleration_preview(placement, rows),
        save=lambda rows: tolerations.save(placement, rows, actor=request.user, request=request),
        respond=lambda status, **context: _toleration_response(request, placement, status, **context),
        saved=lambda: _tolerations_saved(request, placement),
    )
    return edit_rows(request, editor)
