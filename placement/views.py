"""Placement pages: the list, the detail page (score table, chart, what-if, timeline) and the forms.

The score table is computed from the stored explanation (never by re-running the scheduler); the
what-if form evaluates through the API (`/api/placements/<id>/whatif/`) and applies through
`placement_whatif_apply`, which answers with the new score table. The forms (new placement, edit spec,
upload manifests) write only on POST, through `placement.service` and `placement.importing`.
"""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import listing
from core.editors import EditorPage, ListEditor, edit_rows, respond
from core.requests import SignedInRequest
from core.views import render_table, table_context, table_page
from inventory import audit
from inventory import tables as inventory_tables
from placement import (
    access,
    approvals,
    importing,
    queries,
    rolling,
    rollout_preview,
    rollouts,
    service,
    tables,
    tolerations,
    whatif,
)
from placement.filtersets import (
    ApprovalRequestFilterSet,
    PlacementFilterSet,
    StagedUpdateRunFilterSet,
    StagedUpdateStrategyFilterSet,
)
from placement.forms import (
    EXAMPLE_STRATEGY,
    PlacementForm,
    RunForm,
    SpecForm,
    StrategyForm,
    TolerationFormSet,
    UploadForm,
    as_yaml,
)
from placement.models import Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.scheduler.errors import ManifestError
from placement.scheduler.untrusted import InputError, load_json

TIMELINE_LENGTH = 50


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


def _visible_placement(request: HttpRequest, pk: int) -> Placement:
    """The placement if the user's roles show it; 404 otherwise, as if it did not exist."""
    return get_object_or_404(access.visible(Placement.objects.select_related("hub"), request.user), pk=pk)


def _visible_run(request: HttpRequest, pk: int, *related: str) -> StagedUpdateRun:
    runs = access.visible(StagedUpdateRun.objects.select_related(*related), request.user)
    return get_object_or_404(runs, pk=pk)


def _score_context(request: HttpRequest, placement: Placement) -> dict[str, Any]:
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
    return {
        "placement": placement,
        # the filters' target: the placement page, also when an Apply answers with this table
        "score_url": reverse("placement:placement-detail", args=[placement.pk]),
        "prioritizers": prioritizers,
        "table": tables.ScoreRowTable(rows, prioritizers).configure(request),
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
def placement_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    placement = _visible_placement(request, pk)
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
        "can_apply": not placement.read_only and access.can_change(request.user, placement),
        "weights": dict(context["prioritizers"]),
        **inventory_tables.recent_changes(placement),
    }
    context |= _rollout_context(request, placement, context)
    return render(request, "placement/placement_detail.html", context)


def _forbidden(request: HttpRequest, reason: str) -> HttpResponse:
    return render(request, "placement/forbidden.html", {"reason": reason}, status=403)


# the history's trigger for a what-if Apply
WHATIF_TRIGGER = "what-if applied"


@login_required
@require_POST
def placement_whatif_apply(request: SignedInRequest, pk: int) -> HttpResponse:
    """What-if Apply (POST + CSRF; `spec`: the evaluated spec as JSON), saved by `service.apply_spec`:
    validated, rescheduled, audited and recorded once in the history (a double submit adds nothing).
    htmx gets the new score table with the chart's figure, and the selected count and the history
    swapped out of band; a refusal goes to the what-if errors. A plain form post is redirected."""
    placement = _visible_placement(request, pk)
    try:
        spec = load_json(request.POST.get("spec", ""))
        service.apply_spec(placement, spec, actor=request.user, trigger=WHATIF_TRIGGER, request=request)
    except PermissionDenied as exc:
        return _whatif_refused(request, str(exc), 403)
    except InputError as exc:  # not JSON, or too large or deep to read
        return _whatif_refused(request, f"spec: {exc}", 400)
    except ValidationError as exc:
        return _whatif_refused(request, "; ".join(" ".join(m) for m in exc.message_dict.values()), 400)
    if not listing.is_htmx(request):
        messages.success(request, f"{placement}: the what-if spec is applied.")
        return redirect("placement:placement-detail", pk=placement.pk)
    placement.refresh_from_db()
    context = _score_context(request, placement) | {
        "history": placement.history.select_related("actor")[:TIMELINE_LENGTH],
        "requested": queries.requested(placement),
    }
    return render(request, "placement/_whatif_applied.html", context)


def _whatif_refused(request: HttpRequest, reason: str, status: int) -> HttpResponse:
    if not listing.is_htmx(request):
        return render(request, "placement/forbidden.html", {"reason": reason}, status=status)
    response = HttpResponse(reason, status=status, content_type="text/plain; charset=utf-8")
    response["HX-Retarget"], response["HX-Reswap"] = "#whatif-errors", "innerHTML"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def placement_create(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return _forbidden(request, access.ADMIN_NEEDED)
    if request.method == "GET":
        form = PlacementForm(initial=PlacementForm.initial_for(request.GET.get("kind")))
    else:
        form = PlacementForm(request.POST)
        if form.is_valid():
            try:
                fields = form.placement_fields()
                placement = service.create_placement(**fields, actor=request.user, request=request)
            except PermissionDenied as exc:
                return _forbidden(request, str(exc))
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_form.html", {"form": form, "kinds": Placement.Kind.choices})


@login_required
@require_http_methods(["GET", "POST"])
def placement_edit(request: SignedInRequest, pk: int) -> HttpResponse:
    placement = _visible_placement(request, pk)
    if placement.read_only:
        hub = placement.hub.name
        return _forbidden(request, f"{placement} is a read-only mirror of hub {hub}; change it on the hub.")
    if not access.can_change(request.user, placement):
        if request.method == "POST":  # an attempted change is audited; opening the form is not
            audit.record_refusal(request.user, service.SPEC_ACTION, placement, request=request)
        return _forbidden(request, access.CHANGE_DENIED)
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
                return redirect("placement:placement-detail", pk=placement.pk)
    return render(request, "placement/placement_edit.html", {"form": form, "placement": placement})


@login_required
@require_http_methods(["GET", "POST"])
def placement_upload(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return _forbidden(request, access.ADMIN_NEEDED)
    report = None
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_valid():
        loaded = importing.load_text(*form.cleaned_data["manifests"])
        report = importing.apply_manifests(loaded, form.cleaned_data["hub"], request.user)
    status = 200 if report is None or not report.problems else 403 if report.refused else 400
    if form.errors:  # a file too large or not UTF-8
        status = 400
    return render(request, "placement/placement_upload.html", {"form": form, "report": report}, status=status)


# --- the approvals inbox (placement.approvals) ---------------------------------------------------------


def _approvals_context(request: HttpRequest, error: str = "") -> dict[str, Any]:
    """The filtered page of requests; those approved but not accepted yet are re-read from their hub."""
    visible = approvals.visible_requests(request.user)
    filterset = ApprovalRequestFilterSet(request.GET, queryset=visible, request=request)
    context = table_context(request, filterset, tables.ApprovalTable, extra={"error": error})
    table = context["table"]
    if table is not None:
        rows = table.page_records()
        context["refresh_errors"] = approvals.refresh_waiting(rows)
        table.entries = approvals.inbox_entries(rows, request.user)
        table.denied = approvals.DENIED
    return context


@login_required
@require_GET
def approval_list(request: SignedInRequest) -> HttpResponse:
    return render_table(
        request, "placement/approval_list.html", "placement/_approval_table.html", _approvals_context(request)
    )


@login_required
@require_GET
def approval_row(request: SignedInRequest, pk: int) -> HttpResponse:
    """One inbox row, re-read from the hub while approved; the page polls it until accepted."""
    row = get_object_or_404(approvals.visible_requests(request.user), pk=pk)
    approvals.refresh_waiting([row])  # a failed re-read keeps the stored state; the next poll tries again
    entry = approvals.inbox_entries([row], request.user)[0]
    context = {"entry": entry, "denied": approvals.DENIED, "oob": True}
    return render(request, "placement/_approval_row.html", context)


@login_required
@require_POST
def approval_approve(request: SignedInRequest, pk: int) -> HttpResponse:
    """Approve (POST + CSRF), then back to the inbox with the filters kept (the query string of the form)."""
    row = get_object_or_404(approvals.visible_requests(request.user), pk=pk)
    try:
        result = approvals.approve(row, request.user, http_request=request)
    except PermissionDenied as exc:
        return _forbidden(request, str(exc))
    except approvals.ApprovalFailed as exc:
        context = _approvals_context(request, error=str(exc))
        return render(request, "placement/approval_list.html", context, status=502)
    messages.success(request, result.message)
    query = request.GET.urlencode()
    return redirect(f"{reverse('placement:approval-list')}{'?' if query else ''}{query}")


# --- staged update runs and strategies (placement.rollouts) ---------------------------------------------

# a run page refreshes itself this often while its run is moving
RUN_POLL_SECONDS = 5


@login_required
@require_GET
def run_list(request: SignedInRequest) -> HttpResponse:
    runs = access.visible(StagedUpdateRun.objects.order_by("hub__name", "name", "pk"), request.user)
    runs = rollouts.with_pending_approvals(runs)
    filterset = StagedUpdateRunFilterSet(request.GET, queryset=runs, request=request)
    return table_page(
        request,
        filterset,
        tables.RunTable,
        "placement/run_list.html",
        "placement/_run_table.html",
        extra={"hidden_filters": ["hub_id", "placement_id"], "can_add": access.administers_any(request.user)},
    )


def _run_context(request: HttpRequest, run: StagedUpdateRun) -> dict[str, Any]:
    """Stages (the run's own once it started, else the preview), timeline, tasks, conditions, events."""
    now = timezone.now()
    summary = tables.RunSummary.of(run.status or {})
    requests = list(run.approval_requests.order_by("name"))
    preview = None if summary.started else rollouts.preview(run, now)
    status = run.status if preview is None else preview.status
    stages = tables.stage_rows(status or {}, {r.name: r.get_state_display() for r in requests}, now)
    return {
        "run": run,
        "summary": summary,
        "preview": preview,
        "stages": stages,
        "chart": tables.timeline_figure(stages, now) if summary.started else None,
        "conditions": (run.status or {}).get("conditions") or [],
        "requests": requests,
        "events": rollouts.run_events(run),
        "audit": audit.entries_for(run),
        "next_states": rollouts.next_states(run),
        "needs_resume": rollouts.needs_resume(run, now),
        "can_change": access.can_change_run(request.user, run),
        "denied_reason": rollouts.RUN_DENIED,
        "poll": not summary.finished and run.spec.get("state") in (rollouts.RUN, rollouts.STOP),
        "poll_seconds": RUN_POLL_SECONDS,
        "spec_yaml": as_yaml(run.spec),
    }


@login_required
@require_GET
def run_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    run = _visible_run(request, pk, "hub", "placement")
    context = _run_context(request, run)
    template = "placement/_run_body.html" if listing.is_htmx(request) else "placement/run_detail.html"
    return render(request, template, context)


@login_required
@require_POST
def run_state(request: SignedInRequest, pk: int) -> HttpResponse:
    """Initialize / Run / Stop (POST + CSRF): permission-checked and audited by `rollouts.set_run_state`."""
    run = _visible_run(request, pk, "hub")
    state = request.POST.get("state", "")
    try:
        rollouts.set_run_state(run, state, request.user, request=request)
    except PermissionDenied as exc:
        return _forbidden(request, str(exc))
    except ValidationError as exc:
        messages.error(request, "; ".join(f"{path}: {', '.join(m)}" for path, m in exc.message_dict.items()))
    else:
        messages.success(request, f"{run.name}: state set to {state}.")
    return redirect("placement:run-detail", pk=run.pk)


@login_required
@require_POST
def run_resume(request: SignedInRequest, pk: int) -> HttpResponse:
    """Resume (POST + CSRF): the run's step now; permission-checked and audited by `rollouts.resume_run`."""
    run = _visible_run(request, pk, "hub")
    try:
        rollouts.resume_run(run, request.user, request=request)
    except PermissionDenied as exc:
        return _forbidden(request, str(exc))
    messages.success(request, f"{run.name}: resumed; its next step runs now.")
    return redirect("placement:run-detail", pk=run.pk)


def _names(request: HttpRequest, rows: QuerySet[Placement] | QuerySet[StagedUpdateStrategy]) -> list[str]:
    """The names the user's roles show, for the form's suggestions."""
    return sorted(set(access.visible(rows, request.user).values_list("name", flat=True)))


@login_required
@require_http_methods(["GET", "POST"])
def run_create(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return _forbidden(request, access.ADMIN_NEEDED)
    initial = {"placement_name": request.GET.get("placement", ""), "hub": request.GET.get("hub")}
    form = RunForm(request.POST) if request.method == "POST" else RunForm(initial=initial)
    if form.is_valid():
        try:
            run = rollouts.create_run(**form.run_fields(), actor=request.user, request=request)
        except PermissionDenied as exc:
            return _forbidden(request, str(exc))
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            return redirect("placement:run-detail", pk=run.pk)
    external = {"kind": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "owner": Placement.Owner.DASHBOARD}
    external_crps = Placement.objects.filter(spec__strategy__type=rollouts.EXTERNAL, **external)
    context = {
        "form": form,
        "placements": _names(request, external_crps),
        "strategies": _names(request, StagedUpdateStrategy.objects.all()),
    }
    return render(request, "placement/run_form.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def strategy_list(request: SignedInRequest) -> HttpResponse:
    strategies = StagedUpdateStrategy.objects.select_related("hub").order_by("hub__name", "name", "pk")
    strategies = access.visible(strategies, request.user)
    filterset = StagedUpdateStrategyFilterSet(request.GET, queryset=strategies, request=request)
    return table_page(
        request,
        filterset,
        tables.StrategyTable,
        "placement/strategy_list.html",
        "placement/_strategy_table.html",
        rows=_strategy_rows,
        extra={"can_add": access.administers_any(request.user)},
    )


def _strategy_rows(strategies: list[StagedUpdateStrategy]) -> None:
    """Attach the shown strategies' run counts (one query) and their specs as YAML."""
    runs = rollouts.run_counts(strategies)
    for strategy in strategies:
        strategy.run_count = runs.get((strategy.hub_id, strategy.name), 0)
        strategy.spec_yaml = as_yaml(strategy.spec)


@login_required
@require_http_methods(["GET", "POST"])
def strategy_create(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return _forbidden(request, access.ADMIN_NEEDED)
    if request.method == "GET":
        form = StrategyForm(initial={"spec": as_yaml(EXAMPLE_STRATEGY)})
    else:
        form = StrategyForm(request.POST)
        if form.is_valid():
            try:
                rollouts.create_strategy(**form.strategy_fields(), actor=request.user, request=request)
            except PermissionDenied as exc:
                return _forbidden(request, str(exc))
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                messages.success(request, f"Strategy {form.cleaned_data['name']} created.")
                return redirect("placement:strategy-list")
    status = 400 if form.errors else 200
    return render(request, "placement/strategy_form.html", {"form": form}, status=status)


# --- the toleration editor (placement.tolerations validates, previews and saves; hub-owned: read-only)

TOLERATIONS_DENIED = f"Editing tolerations needs a dashboard-owned placement. {access.CHANGE_DENIED}"


def _toleration_response(
    request: HttpRequest, placement: Placement, status: int = 200, error: str = "", **context: object
) -> HttpResponse:
    """The editor's section for htmx (the placement page loads it so), its own page otherwise."""
    formset = context.pop("formset", None)
    context |= {
        "placement": placement,
        "toleration_formset": TolerationFormSet(placement=placement) if formset is None else formset,
        "can_edit_tolerations": tolerations.can_edit(request.user, placement),
        "current_tolerations": tolerations.current(placement),
        "toleration_error": error,
    }
    crumbs = (
        ("Placements", reverse("placement:placement-list")),
        (placement.hub.name, ""),
        (str(placement), reverse("placement:placement-detail", args=[placement.pk])),
    )
    page = EditorPage(f"Tolerations · {placement}", str(placement), placement.get_kind_display(), crumbs)
    return respond(request, "placement/_toleration_editor.html", context, status, page)


def _toleration_preview(placement: Placement, rows: list[dict[str, Any]]) -> dict[str, Any]:
    answer = tolerations.preview(placement, rows)
    return {"whatif": answer, "removed": tolerations.removed_with_reasons(answer)}


def _tolerations_saved(request: HttpRequest, placement: Placement) -> HttpResponse:
    if not listing.is_htmx(request):
        return redirect(reverse("placement:placement-detail", args=[placement.pk]) + "#tolerations-section")
    saved = "Saved; the placement was rescheduled."
    return _toleration_response(request, placement, toleration_message=saved)


@login_required
@require_http_methods(["GET", "POST"])
def placement_tolerations(request: SignedInRequest, pk: int) -> HttpResponse:
    """GET: the editor (the placement page loads it); POST: `add` a row, `preview` the diff, `save`."""
    placement = _visible_placement(request, pk)
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


# --- rolling updates and OCM rollout previews (placement.rolling, placement.rollout_preview) ---------------

# the Rollout section refreshes itself this often while a rolling update moves
ROLLOUT_POLL_SECONDS = 5


def _rollout_context(
    request: HttpRequest, placement: Placement, page: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The Rollout section; it reuses the page's bindings or decision pages, read once for both."""
    page = page or {}
    if placement.is_ocm:
        pages = list(page.get("decision_pages", queries.decision_pages(placement)))
        preview = rollout_preview.preview(placement, pages, timezone.now())
        return {
            "decision_pages": pages,
            "ocm_rollout": preview,
            "strategy_annotation": rollout_preview.STRATEGY_ANNOTATION,
        }
    rows = list(queries.bindings(placement))
    summary = (placement.status or {}).get("rollout") or {}
    rollout = {
        "summary": summary,
        "strategy": _strategy(placement),
        "rolling": rolling.rolling_crp(placement) is not None,
        "snapshot": rolling.latest_snapshot_name(placement),
        "snapshot_info": (placement.status or {}).get("resourceSnapshot") or {},
        "clusters": rolling.cluster_states(placement, rows),
        "condition_columns": rolling.CONDITION_COLUMNS,
        "can_roll": not placement.read_only and access.can_change(request.user, placement),
        "polling": bool(summary.get("requeueAt")),
        "poll_seconds": ROLLOUT_POLL_SECONDS,
    }
    return {"bindings": rows, "rollout": rollout}


def _strategy(placement: Placement) -> dict[str, Any] | None:
    """The CRP's rollout strategy with upstream's defaults filled in (None: a spec the parser rejects)."""
    try:
        strategy = service.parse_crp(placement).strategy
    except ManifestError:
        return None
    config = strategy.rolling_update
    if config is None:
        return {"type": strategy.type, "rolling": False}
    return {
        "type": strategy.type,
        "rolling": True,
        "max_unavailable": config.max_unavailable,
        "max_surge": config.max_surge,
        "unavailable_period_seconds": config.unavailable_period_seconds,
    }


@login_required
@require_GET
def rollout_section(request: SignedInRequest, pk: int) -> HttpResponse:
    """The Rollout section alone (htmx polls it while a rolling update moves)."""
    placement = _visible_placement(request, pk)
    context = {"placement": placement, **_rollout_context(request, placement)}
    return render(request, "placement/_rollout_section.html", context)


@login_required
@require_POST
def placement_rollout(request: SignedInRequest, pk: int) -> HttpResponse:
    """Roll out a new resource snapshot (POST + CSRF; permission-checked and audited)."""
    placement = _visible_placement(request, pk)
    try:
        index = rolling.roll_out_new_snapshot(placement, actor=request.user, request=request)
    except PermissionDenied as exc:
        return _forbidden(request, str(exc))
    except ValidationError as exc:
        return render(request, "placement/forbidden.html", {"reason": " ".join(exc.messages)}, status=400)
    messages.success(request, f"Rolling out {placement.name}-{index}-snapshot.")
    return redirect(reverse("placement:placement-detail", args=[placement.pk]) + "#rollout")
