"""Hubs, clusters, cluster sets, the audit log: parse with the FilterSet, query in inventory.queries, render.

htmx requests (filter, sort, page, progress polling) get only the fragment they swap.
"""

import time
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core import listing
from core.editors import EditFailed, EditorPage, ListEditor, edit_rows, respond
from core.requests import SignedInRequest
from core.views import table_page
from inventory import access, audit, editing, queries, roles, tables
from inventory.filtersets import (
    AuditEntryFilterSet,
    ClusterFilterSet,
    ClusterSetFilterSet,
    HubFilterSet,
    RejectedObjectFilterSet,
)
from inventory.forms import BaseTaintFormSet, BindingForm, TaintFormSet, add_errors
from inventory.hubclient import HubError
from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    Hub,
    ManagedCluster,
    ManagedClusterQuerySet,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    RejectedObject,
    SyncRun,
)
from inventory.tasks import request_sync

# A requested sync that has not started within this long is shown as not queued any more.
QUEUED_FOR_SECONDS = 30
POLL_SECONDS = 1
HUB_ROW = "inventory/_hub_row.html"
SYNC_PROGRESS = "inventory/_sync_progress.html"
LIST_DEFERRED = (
    "claims",
    "allocatable",
    "capacity",
    "conditions",
    "properties",
    "resource_usage",
    "agent_status",
)


def _cluster_rows(clusters: list[ManagedCluster]) -> None:
    """Attach the placement counts of the shown clusters, read in one query."""
    counts = queries.placement_counts(clusters)
    for cluster in clusters:
        cluster.placement_count = counts[cluster.pk]


def _cluster_filterset(request: SignedInRequest, clusters: ManagedClusterQuerySet) -> ClusterFilterSet:
    # The table shows none of the wide JSON columns; not reading them halves the page query.
    listed = clusters.for_listing().defer(*LIST_DEFERRED)
    sets = roles.sets_for(request.user)
    return ClusterFilterSet(request.GET, queryset=queries.with_cluster_sets(listed, sets), request=request)


# --- hubs


def _hub_context(
    request: SignedInRequest, hub: Hub, run: SyncRun | None, requested_at: float | None
) -> dict[str, Any]:
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


def _annotated_hub(request: SignedInRequest, pk: int) -> tuple[Hub, SyncRun | None]:
    """A hub the user may see with the counts of what they may see (a hidden hub is a 404); its latest
    run for superusers."""
    hub = get_object_or_404(queries.with_hub_counts(Hub.objects.all(), request.user), pk=pk)
    return hub, queries.latest_runs([hub]).get(hub.pk)


@login_required
@require_GET
def hub_list(request: SignedInRequest) -> HttpResponse:
    """The hubs the user sees, filtered by the query (e.g. `?state=failing`); 400 for a bad filter."""
    filterset = HubFilterSet(request.GET, queryset=Hub.objects.all(), request=request)
    valid = filterset.is_valid()
    hubs = list(queries.with_hub_counts(filterset.qs if valid else Hub.objects.none(), request.user))
    runs = queries.latest_runs(hubs)
    rows = [_hub_context(request, hub, runs.get(hub.pk), None) for hub in hubs]
    context = {"rows": rows, "filterset": filterset, "filtered": any(request.GET.values())}
    return render(request, "inventory/hub_list.html", context, status=200 if valid else 400)


@login_required
@require_GET
def hub_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    """A hub: the counts of what the user sees on it and its namespaces, each with its access tab."""
    hub, run = _annotated_hub(request, pk)
    context = _hub_context(request, hub, run, None)
    context["namespaces"] = queries.namespaces(hub, request.user)
    return render(request, "inventory/hub_detail.html", context)


def _polled(request: SignedInRequest, pk: int, template: str) -> HttpResponse:
    hub, run = _annotated_hub(request, pk)
    try:
        requested_at = float(request.GET["requested"])
    except (KeyError, ValueError):
        requested_at = None
    return render(request, template, _hub_context(request, hub, run, requested_at))


@login_required
@require_GET
def hub_row(request: SignedInRequest, pk: int) -> HttpResponse:
    """One hub's table row; the hub list polls it while a sync runs or is queued."""
    return _polled(request, pk, HUB_ROW)


@login_required
@require_GET
def hub_sync_progress(request: SignedInRequest, pk: int) -> HttpResponse:
    """The hub page's sync section; the page polls it while a sync runs or is queued."""
    return _polled(request, pk, SYNC_PROGRESS)


@login_required
@require_POST
@listing.varies_with_htmx
def hub_sync(request: SignedInRequest, pk: int) -> HttpResponse:
    """Sync now (staff only): enqueue the hub's sync (in-process when no broker is configured)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff users can start a sync.")
    hub = get_object_or_404(roles.restrict(Hub.objects.all(), request.user), pk=pk)
    requested_at = timezone.now().timestamp()
    request_sync(hub, actor=request.user.get_username())
    messages.info(request, f"Sync of {hub.name} requested.")
    if not listing.wants_fragment(request):
        return redirect("inventory:hub-list")
    hub, run = _annotated_hub(request, pk)
    # the hub page's Sync button swaps its sync section, the hub list's its row
    template = SYNC_PROGRESS if request.htmx.target == "sync-progress" else HUB_ROW
    return render(request, template, _hub_context(request, hub, run, requested_at))


# --- clusters


@login_required
@require_GET
def cluster_list(request: SignedInRequest) -> HttpResponse:
    filterset = _cluster_filterset(request, roles.restrict(ManagedCluster.objects.all(), request.user))
    return table_page(
        request,
        filterset,
        tables.ClusterTable,
        "inventory/cluster_list.html",
        "inventory/_cluster_table.html",
        rows=_cluster_rows,
        # Ids are for links and the API; the form offers names.
        extra={"hidden_filters": ["hub_id", "cluster_set_id"]},
    )


@login_required
@require_GET
def cluster_by_name(request: SignedInRequest, hub_pk: int, kind: str, name: str) -> HttpResponse:
    """The page of the cluster a placement, a stage or an approval names: they know its hub, kind and name,
    not its row, so their links come here (404 for a cluster the user's roles do not show, or gone)."""
    visible = roles.restrict(ManagedCluster.objects.all(), request.user)
    return redirect(get_object_or_404(visible, hub_id=hub_pk, kind=kind, name=name))


@login_required
@require_GET
def cluster_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    visible = roles.restrict(ManagedCluster.objects.all(), request.user)
    cluster = get_object_or_404(queries.with_cluster_sets(visible, roles.sets_for(request.user)), pk=pk)
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
        "placements": roles.restrict(queries.placements_selecting(cluster), request.user),
    }
    context |= tables.recent_changes(cluster)
    # The page's "Recent changes" card lists the cluster's entries, so the taint section does not repeat
    # them (nor read them again); it shows its own when it is swapped in alone after an edit.
    context |= _taint_context(request, cluster, taint_changes=())
    return render(request, "inventory/cluster_detail.html", context)


# --- cluster sets


@login_required
@require_GET
def clusterset_list(request: SignedInRequest) -> HttpResponse:
    visible = roles.sets_for(request.user).order_by("name", "hub__name", "pk")
    queryset = queries.with_member_rollup(visible)
    filterset = ClusterSetFilterSet(request.GET, queryset=queryset, request=request)
    return table_page(
        request,
        filterset,
        tables.ClusterSetTable,
        "inventory/clusterset_list.html",
        "inventory/_clusterset_table.html",
        rows=_set_rows,
    )


def _set_rows(cluster_sets: list[ManagedClusterSet]) -> None:
    """Attach the namespaces the shown sets are bound to, read in one query."""
    namespaces = queries.bound_namespaces(cluster_sets)
    for cluster_set in cluster_sets:
        cluster_set.namespaces = namespaces.get(cluster_set.pk, [])


@login_required
@require_GET
def clusterset_detail(request: SignedInRequest, pk: int) -> HttpResponse:
    cluster_set = get_object_or_404(queries.with_member_rollup(roles.sets_for(request.user)), pk=pk)
    members = ManagedCluster.objects.filter(memberships__cluster_set=cluster_set)
    filterset = _cluster_filterset(request, members)
    context = {
        "cluster_set": cluster_set,
        "selector_display": queries.selector_text(cluster_set),
        # The set and the hub are fixed here; the other cluster filters apply to its members.
        "hidden_filters": ["hub", "hub_id", "cluster_set", "cluster_set_id"],
    }
    if not listing.wants_fragment(request):
        context |= access.tab_context(request, cluster_set)
        context |= _binding_context(request, cluster_set)
        context |= tables.recent_changes(cluster_set)
    return table_page(
        request,
        filterset,
        tables.ClusterTable,
        "inventory/clusterset_detail.html",
        "inventory/_cluster_table.html",
        rows=_cluster_rows,
        extra=context,
    )


# --- the audit log


@login_required
@require_GET
def rejected_list(request: SignedInRequest) -> HttpResponse:
    """Hub objects the sync or the watcher refused (inventory.validation), with why, by hub and kind;
    superusers see them (inventory.roles), others an empty list."""
    rows = roles.restrict(RejectedObject.objects.select_related("hub"), request.user)
    filterset = RejectedObjectFilterSet(
        request.GET, queryset=rows.order_by("hub__name", "kind", "namespace", "name", "pk"), request=request
    )
    return table_page(
        request,
        filterset,
        tables.RejectedObjectTable,
        "inventory/rejected_list.html",
        "inventory/_rejected_table.html",
        extra={"hidden_filters": ["hub_id", "sync_run"]},
    )


@login_required
@require_GET
def audit_list(request: SignedInRequest) -> HttpResponse:
    """The entries the user may read (inventory.roles: superusers all, others their own), newest first,
    filtered and paged."""
    visible = roles.restrict(AuditEntry.objects.all(), request.user)
    filterset = AuditEntryFilterSet(request.GET, queryset=visible.select_related("hub"), request=request)
    # The actions logged so far, offered as the `action` field's suggestions.
    actions = visible.order_by("action").values_list("action", flat=True).distinct()
    return table_page(
        request,
        filterset,
        tables.AuditTable,
        "inventory/audit_list.html",
        "inventory/_audit_table.html",
        rows=tables.audit_rows,
        extra={"actions": actions},
    )


# --- access management (roles) of cluster sets and namespaces


def _visible_set(request: SignedInRequest, pk: int) -> ManagedClusterSet:
    """The set if the user may see it; a hidden set is a 404, as if it did not exist."""
    return get_object_or_404(roles.sets_for(request.user).select_related("hub"), pk=pk)


def _visible_namespace(request: SignedInRequest, pk: int, namespace: str) -> roles.Namespace:
    """The namespace if the user sees something in it (a placement, a binding or a role); superusers
    open any namespace of a hub, to name its first admin. Others are a 404, as if they did not exist."""
    hub = get_object_or_404(roles.restrict(Hub.objects.all(), request.user), pk=pk)
    if editing.namespace_error(namespace) is not None:
        raise Http404("not a namespace name")
    seen = roles.is_superuser(request.user) or any(
        entry["name"] == namespace for entry in queries.namespaces(hub, request.user)
    )
    if not seen:
        raise Http404("no such namespace")
    return roles.Namespace(hub, namespace)


def _access_response(
    request: SignedInRequest,
    scope: roles.Scope,
    status: int = 200,
    grant_form: access.GrantForm | None = None,
    errors: dict[int, list[str]] | None = None,
) -> HttpResponse:
    """The access section alone for htmx; the access page (the section under the scope's title) otherwise."""
    context = access.tab_context(request, scope, grant_form, errors)
    template = (
        "inventory/_access_section.html" if listing.wants_fragment(request) else "inventory/_access_page.html"
    )
    return render(request, template, context, status=status)


def _scope_label(scope: roles.Scope) -> str:
    if isinstance(scope, roles.Namespace):
        return f"namespace {scope}"
    return f"cluster set {scope.name}"


def _access_changed(request: SignedInRequest, scope: roles.Scope, done: str) -> HttpResponse:
    """`done` names what changed; the scope is added to it."""
    messages.success(request, f"{done} on {_scope_label(scope)}.")
    if listing.wants_fragment(request):
        return _access_response(request, scope)
    _, _, crumbs = access.urls(scope)
    return redirect(crumbs[-1][1] + "#access")


def _grant(request: SignedInRequest, scope: roles.Scope) -> HttpResponse:
    """The access tab; POST adds a user or a group with a role (the scope's admins only)."""
    if request.method == "GET":
        return _access_response(request, scope)
    roles.authorise(request.user, scope, "grant", request=request)
    form = access.GrantForm(request.POST, choices=access.role_choices(scope))
    if form.is_valid():
        data = form.cleaned_data
        try:
            roles.grant(request.user, scope, data["role"], data["principal"], request=request)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            name = f"{data['kind']}:{data['name'].strip()}"
            return _access_changed(request, scope, f"{name} now holds the {data['role']} role")
    return _access_response(request, scope, status=400, grant_form=form)


def _role_row(request: SignedInRequest, scope: roles.Scope, role_pk: int, verb: str) -> roles.RoleRow:
    """A role on the scope, after the check that the user administers it (403 otherwise)."""
    roles.authorise(request.user, scope, verb, request=request)
    return get_object_or_404(roles.holders(scope), pk=role_pk)


def _change(request: SignedInRequest, scope: roles.Scope, role_pk: int) -> HttpResponse:
    row = _role_row(request, scope, role_pk, "change")
    form = access.ChangeForm(request.POST, choices=access.role_choices(scope))
    if not form.is_valid():
        return _access_response(
            request, scope, status=400, errors={row.pk: [str(error) for error in form.errors["role"]]}
        )
    try:
        roles.change(request.user, row, form.cleaned_data["role"], request=request)
    except ValidationError as exc:
        return _access_response(request, scope, status=400, errors={row.pk: exc.messages})
    return _access_changed(request, scope, f"{row.principal} now holds the {form.cleaned_data['role']} role")


def _remove(request: SignedInRequest, scope: roles.Scope, role_pk: int) -> HttpResponse:
    row = _role_row(request, scope, role_pk, "revoke")
    try:
        roles.revoke(request.user, row, request=request)
    except ValidationError as exc:
        return _access_response(request, scope, status=400, errors={row.pk: exc.messages})
    return _access_changed(request, scope, f"{row.principal} no longer holds the {row.role} role")


@login_required
@require_http_methods(["GET", "POST"])
@listing.varies_with_htmx
def clusterset_access(request: SignedInRequest, pk: int) -> HttpResponse:
    return _grant(request, _visible_set(request, pk))


@login_required
@require_POST
@listing.varies_with_htmx
def clusterset_access_change(request: SignedInRequest, pk: int, role_pk: int) -> HttpResponse:
    return _change(request, _visible_set(request, pk), role_pk)


@login_required
@require_POST
@listing.varies_with_htmx
def clusterset_access_remove(request: SignedInRequest, pk: int, role_pk: int) -> HttpResponse:
    return _remove(request, _visible_set(request, pk), role_pk)


@login_required
@require_http_methods(["GET", "POST"])
@listing.varies_with_htmx
def namespace_access(request: SignedInRequest, pk: int, namespace: str) -> HttpResponse:
    """A namespace's access page: who holds which namespace role; its admins grant, change, revoke."""
    return _grant(request, _visible_namespace(request, pk, namespace))


@login_required
@require_POST
@listing.varies_with_htmx
def namespace_access_change(request: SignedInRequest, pk: int, namespace: str, role_pk: int) -> HttpResponse:
    return _change(request, _visible_namespace(request, pk, namespace), role_pk)


@login_required
@require_POST
@listing.varies_with_htmx
def namespace_access_remove(request: SignedInRequest, pk: int, namespace: str, role_pk: int) -> HttpResponse:
    return _remove(request, _visible_namespace(request, pk, namespace), role_pk)


# --- editors: cluster taints and set bindings (inventory.editing validates, authorises, writes, audits)
# Every form posts with CSRF and works without JavaScript (a page of its own); htmx swaps just the section.

TAINTS_DENIED = "Editing taints needs the admin role on a cluster set the cluster belongs to."
RECENT_CHANGES = 5


def _hub_failure(exc: HubError, what: str) -> EditFailed:
    """A write the hub refused, as the status and the sentence to show; nothing was changed here."""
    if exc.status == editing.CONFLICT:
        message = f"{what} changed on the hub since this page was read and was reloaded: review, edit again."
        return EditFailed(409, message, keep_rows=False)
    return EditFailed(502, f"The hub did not accept the change; nothing was changed. {exc}")


def _taint_context(
    request: SignedInRequest,
    cluster: ManagedCluster,
    formset: BaseTaintFormSet | None = None,
    **extra: object,
) -> dict[str, Any]:
    return {
        "cluster": cluster,
        "taint_formset": TaintFormSet(cluster=cluster) if formset is None else formset,
        "can_edit_taints": editing.can_edit_taints(request.user, cluster),
        "taint_changes": audit.entries_for(cluster, limit=RECENT_CHANGES),
        **extra,
    }


def _taint_response(
    request: SignedInRequest,
    cluster: ManagedCluster,
    status: int = 200,
    error: str = "",
    formset: BaseTaintFormSet | None = None,
    **context: object,
) -> HttpResponse:
    crumbs = (
        ("Clusters", reverse("inventory:cluster-list")),
        (cluster.hub.name, cluster.hub.get_absolute_url()),
        (cluster.name, cluster.get_absolute_url()),
        ("Taints", ""),
    )
    page = EditorPage(f"Taints · {cluster.name}", cluster.name, cluster.kind, crumbs)
    section = _taint_context(request, cluster, formset, **context, taint_error=error)
    return respond(request, "inventory/_taint_section.html", section, status, page)


def _save_taints(request: SignedInRequest, cluster: ManagedCluster, rows: list[dict[str, Any]]) -> None:
    try:
        editing.save_taints(cluster, rows, actor=request.user, request=request)
    except HubError as exc:
        cluster.refresh_from_db()  # reloaded from the hub after a Conflict
        raise _hub_failure(exc, f"Cluster {cluster.name}") from exc


def _taints_saved(request: SignedInRequest, cluster: ManagedCluster) -> HttpResponse:
    messages.success(
        request,
        f"Taints of {cluster.name} saved to hub {cluster.hub.name} "
        f"(resourceVersion {cluster.resource_version}).",
    )
    if not listing.wants_fragment(request):
        return redirect(reverse("inventory:cluster-detail", args=[cluster.pk]) + "#taints-section")
    return _taint_response(request, cluster)


@login_required
@require_POST
@listing.varies_with_htmx
def cluster_taints(request: SignedInRequest, pk: int) -> HttpResponse:
    """The taint editor's buttons: `add` a row, `preview` what the placements would do, `save` to the hub."""
    visible = roles.restrict(ManagedCluster.objects.select_related("hub"), request.user)
    cluster = get_object_or_404(visible, pk=pk)  # a hidden cluster is a 404, as on its page
    editor = ListEditor(
        prefix="taints",
        formset=lambda data: TaintFormSet(data, cluster=cluster),
        may_edit=editing.can_edit_taints(request.user, cluster),
        denied=TAINTS_DENIED,
        preview=lambda rows: {"impacts": editing.preview_taints(cluster, rows, actor=request.user)},
        save=lambda rows: _save_taints(request, cluster, rows),
        respond=lambda status, **context: _taint_response(request, cluster, status, **context),
        saved=lambda: _taints_saved(request, cluster),
    )
    return edit_rows(request, editor)


BIND_DENIED = (
    "Binding a cluster set to a namespace (or unbinding it) needs the admin role on the set "
    "and the admin role in the namespace."
)


def _binding_context(
    request: SignedInRequest, cluster_set: ManagedClusterSet, form: BindingForm | None = None, **extra: object
) -> dict[str, Any]:
    bindings = ManagedClusterSetBinding.objects.filter(
        hub_id=cluster_set.hub_id, cluster_set=cluster_set.name
    )
    return {
        "cluster_set": cluster_set,
        "bindings": bindings.order_by("namespace", "name"),
        "binding_form": BindingForm() if form is None else form,
        # the form is for the set's admins; each namespace's own admin role is checked when binding
        "can_bind": roles.can_administer_set(request.user, cluster_set),
        **extra,
    }


def _binding_response(
    request: SignedInRequest,
    cluster_set: ManagedClusterSet,
    status: int = 200,
    form: BindingForm | None = None,
    **context: object,
) -> HttpResponse:
    crumbs = (
        ("Cluster sets", reverse("inventory:clusterset-list")),
        (cluster_set.hub.name, cluster_set.hub.get_absolute_url()),
        (cluster_set.name, cluster_set.get_absolute_url()),
        ("Bindings", ""),
    )
    page = EditorPage(f"Bindings · {cluster_set.name}", cluster_set.name, "ManagedClusterSet", crumbs)
    section = _binding_context(request, cluster_set, form, **context)
    return respond(request, "inventory/_binding_section.html", section, status, page)


def _binding_edit(
    request: SignedInRequest, cluster_set: ManagedClusterSet, edit: Callable[[], object], done: str
) -> HttpResponse:
    """Run a bind or unbind and answer the bindings section (a redirect to the set without htmx)."""
    form = BindingForm(request.POST)
    try:
        edit()
    except PermissionDenied:
        return _binding_response(request, cluster_set, 403, binding_error=BIND_DENIED)
    except ValidationError as exc:
        form.is_valid()
        add_errors(form, exc)
        return _binding_response(request, cluster_set, 400, form=form)
    except HubError as exc:
        failed = _hub_failure(exc, f"Cluster set {cluster_set.name}")
        return _binding_response(request, cluster_set, failed.status, form=form, binding_error=failed.message)
    messages.success(request, done)
    if not listing.wants_fragment(request):
        return redirect(reverse("inventory:clusterset-detail", args=[cluster_set.pk]) + "#bindings-section")
    return _binding_response(request, cluster_set)


@login_required
@require_POST
@listing.varies_with_htmx
def clusterset_bind(request: SignedInRequest, pk: int) -> HttpResponse:
    """Bind the set to a namespace: a ManagedClusterSetBinding created on the hub."""
    cluster_set = _visible_set(request, pk)
    namespace = request.POST.get("namespace", "").strip()
    return _binding_edit(
        request,
        cluster_set,
        lambda: editing.bind(cluster_set, namespace, actor=request.user, request=request),
        f"Cluster set {cluster_set.name} bound to namespace {namespace}.",
    )


@login_required
@require_POST
@listing.varies_with_htmx
def clusterset_unbind(request: SignedInRequest, pk: int, binding_pk: int) -> HttpResponse:
    """Unbind the set from a namespace: its ManagedClusterSetBinding deleted on the hub."""
    cluster_set = _visible_set(request, pk)
    binding = get_object_or_404(
        ManagedClusterSetBinding, pk=binding_pk, hub_id=cluster_set.hub_id, cluster_set=cluster_set.name
    )
    return _binding_edit(
        request,
        cluster_set,
        lambda: editing.unbind(binding, actor=request.user, request=request),
        f"Cluster set {cluster_set.name} unbound from namespace {binding.namespace}.",
    )
