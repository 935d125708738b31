"""Rollout pages: the approvals inbox, staged update runs and strategies, and a placement's Rollout section.

The placement page shows the Rollout section and the placement's runs through `placement.views.sections`,
which this module fills (`placement_sections`); htmx polls the Rollout section alone while a rolling
update moves. Every write goes through the rollouts' services (`approvals`, `runs`, `rolling`), which
check the permission and audit it.
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
from core.requests import SignedInRequest
from core.views import render_table, table_context, table_page
from inventory import audit
from placement import access, queries
from placement.families import fleet
from placement.forms import as_yaml
from placement.models import Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import approvals, rolling, tables
from placement.rollouts import preview as rollout_preview
from placement.rollouts import runs as rollouts
from placement.rollouts.filtersets import (
    ApprovalRequestFilterSet,
    StagedUpdateRunFilterSet,
    StagedUpdateStrategyFilterSet,
)
from placement.rollouts.forms import EXAMPLE_STRATEGY, RunForm, StrategyForm
from placement.scheduler.errors import ManifestError
from placement.views import PageSections, forbidden, visible_placement


def _visible_run(request: HttpRequest, pk: int, *related: str) -> StagedUpdateRun:
    runs = access.visible(StagedUpdateRun.objects.select_related(*related), request.user)
    return get_object_or_404(runs, pk=pk)


# --- the approvals inbox (approvals) ---------------------------------------------------------------------


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
        request, "rollouts/approval_list.html", "rollouts/_approval_table.html", _approvals_context(request)
    )


@login_required
@require_GET
def approval_row(request: SignedInRequest, pk: int) -> HttpResponse:
    """One inbox row, re-read from the hub while approved; the page polls it until accepted."""
    row = get_object_or_404(approvals.visible_requests(request.user), pk=pk)
    approvals.refresh_waiting([row])  # a failed re-read keeps the stored state; the next poll tries again
    entry = approvals.inbox_entries([row], request.user)[0]
    context = {"entry": entry, "denied": approvals.DENIED, "oob": True}
    return render(request, "rollouts/_approval_row.html", context)


@login_required
@require_POST
def approval_approve(request: SignedInRequest, pk: int) -> HttpResponse:
    """Approve (POST + CSRF), then back to the inbox with the filters kept (the query string of the form)."""
    row = get_object_or_404(approvals.visible_requests(request.user), pk=pk)
    try:
        result = approvals.approve(row, request.user, http_request=request)
    except PermissionDenied as exc:
        return forbidden(request, str(exc))
    except approvals.ApprovalFailed as exc:
        context = _approvals_context(request, error=str(exc))
        return render(request, "rollouts/approval_list.html", context, status=502)
    messages.success(request, result.message)
    query = request.GET.urlencode()
    return redirect(f"{reverse('rollouts:approval-list')}{'?' if query else ''}{query}")


# --- staged update runs and strategies (runs) --------------------------------------------------------

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
        "rollouts/run_list.html",
        "rollouts/_run_table.html",
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
        "poll": not summary.finished and run.spec.get("state") in rollouts.MOVING_STATES,
        "poll_seconds": RUN_POLL_SECONDS,
        "spec_yaml": as_yaml(run.spec),
    }


@login_required
@require_GET
@listing.varies_with_htmx
def run_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    run = _visible_run(request, pk, "hub", "placement")
    context = _run_context(request, run)
    template = "rollouts/_run_body.html" if listing.wants_fragment(request) else "rollouts/run_detail.html"
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
        return forbidden(request, str(exc))
    except ValidationError as exc:
        messages.error(request, "; ".join(f"{path}: {', '.join(m)}" for path, m in exc.message_dict.items()))
    else:
        messages.success(request, f"{run.name}: state set to {state}.")
    return redirect("rollouts:run-detail", pk=run.pk)


@login_required
@require_POST
def run_resume(request: SignedInRequest, pk: int) -> HttpResponse:
    """Resume (POST + CSRF): the run's step now; permission-checked and audited by `rollouts.resume_run`."""
    run = _visible_run(request, pk, "hub")
    try:
        rollouts.resume_run(run, request.user, request=request)
    except PermissionDenied as exc:
        return forbidden(request, str(exc))
    messages.success(request, f"{run.name}: resumed; its next step runs now.")
    return redirect("rollouts:run-detail", pk=run.pk)


def _names(request: HttpRequest, rows: QuerySet[Placement] | QuerySet[StagedUpdateStrategy]) -> list[str]:
    """The names the user's roles show, for the form's suggestions."""
    return sorted(set(access.visible(rows, request.user).values_list("name", flat=True)))


@login_required
@require_http_methods(["GET", "POST"])
def run_create(request: SignedInRequest) -> HttpResponse:
    if not access.administers_any(request.user):
        return forbidden(request, access.ADMIN_NEEDED)
    initial = {"placement_name": request.GET.get("placement", ""), "hub": request.GET.get("hub")}
    form = RunForm(request.POST) if request.method == "POST" else RunForm(initial=initial)
    if form.is_valid():
        try:
            run = rollouts.create_run(**form.run_fields(), actor=request.user, request=request)
        except PermissionDenied as exc:
            return forbidden(request, str(exc))
        except ValidationError as exc:
            form.add_service_error(exc)
        else:
            messages.success(request, f"Run {run.name} created.")
            return redirect("rollouts:run-detail", pk=run.pk)
    external = {"kind": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "owner": Placement.Owner.DASHBOARD}
    external_crps = Placement.objects.filter(spec__strategy__type=rollouts.EXTERNAL, **external)
    context = {
        "form": form,
        "placements": _names(request, external_crps),
        "strategies": _names(request, StagedUpdateStrategy.objects.all()),
    }
    return render(request, "rollouts/run_form.html", context, status=400 if form.errors else 200)


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
        "rollouts/strategy_list.html",
        "rollouts/_strategy_table.html",
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
        return forbidden(request, access.ADMIN_NEEDED)
    if request.method == "GET":
        form = StrategyForm(initial={"spec": as_yaml(EXAMPLE_STRATEGY)})
    else:
        form = StrategyForm(request.POST)
        if form.is_valid():
            try:
                rollouts.create_strategy(**form.strategy_fields(), actor=request.user, request=request)
            except PermissionDenied as exc:
                return forbidden(request, str(exc))
            except ValidationError as exc:
                form.add_service_error(exc)
            else:
                messages.success(request, f"Strategy {form.cleaned_data['name']} created.")
                return redirect("rollouts:strategy-list")
    status = 400 if form.errors else 200
    return render(request, "rollouts/strategy_form.html", {"form": form}, status=status)


# --- rolling updates and OCM rollout previews (rolling, preview) ---------------------------------------

# the Rollout section refreshes itself this often while a rolling update moves
ROLLOUT_POLL_SECONDS = 5


def _rollout_context(
    request: HttpRequest, placement: Placement, page: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The Rollout section; it reuses the page's bindings or decision pages, read once for both."""
    page = page or {}
    if placement.family.previews_rollout:
        pages = list(page.get("decision_pages", queries.decision_pages(placement)))
        preview = rollout_preview.preview(placement, pages, timezone.now())
        return {
            "decision_pages": pages,
            "ocm_rollout": preview,
            "strategy_annotation": rollout_preview.STRATEGY_ANNOTATION,
        }
    rows = list(queries.bindings(placement))
    summary = (placement.status or {}).get("rollout") or {}
    clusters = rolling.cluster_states(placement, rows)
    latest = None if placement.read_only else rolling.latest_snapshot_name(placement)
    rollout = {
        "summary": summary,
        "strategy": _strategy(placement),
        "rolling": rolling.rolling_crp(placement) is not None,
        "snapshot": latest,
        "snapshot_info": (placement.status or {}).get("resourceSnapshot") or {},
        "clusters": clusters,
        "progress": tables.rollout_progress(clusters, latest),
        "condition_columns": rolling.CONDITION_COLUMNS,
        "can_roll": not placement.read_only and access.can_change(request.user, placement),
        "polling": bool(summary.get("requeueAt") or summary.get("applying")),
        "poll_seconds": ROLLOUT_POLL_SECONDS,
    }
    return {"bindings": rows, "rollout": rollout}


def _strategy(placement: Placement) -> dict[str, Any] | None:
    """The CRP's rollout strategy with upstream's defaults filled in (None: a spec the parser rejects)."""
    try:
        strategy = fleet.parse_stored(placement).strategy
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
    placement = visible_placement(request, pk)
    context = {"placement": placement, **_rollout_context(request, placement)}
    return render(request, "rollouts/_rollout_section.html", context)


@login_required
@require_POST
def placement_rollout(request: SignedInRequest, pk: int) -> HttpResponse:
    """Roll out a new resource snapshot (POST + CSRF; permission-checked and audited)."""
    placement = visible_placement(request, pk)
    try:
        index = rolling.roll_out_new_snapshot(placement, actor=request.user, request=request)
    except PermissionDenied as exc:
        return forbidden(request, str(exc))
    except ValidationError as exc:
        return render(request, "placement/forbidden.html", {"reason": " ".join(exc.messages)}, status=400)
    messages.success(request, f"Rolling out {placement.name}-{index}-snapshot.")
    return redirect("placement:placement-rollout", pk=placement.pk)


# the placement page's Rollout tab
placement_sections = PageSections(
    templates=("rollouts/_rollout_section.html", "rollouts/_runs_for_placement.html"),
    context=_rollout_context,
)
