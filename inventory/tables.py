"""How inventory lists are shown: the list tables, quantities in human units, audit rows."""

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import django_tables2 as tables
from django.db import models
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from core.tables import ListTable, chips, name_column, time_html
from inventory import audit, queries
from inventory.models import AuditEntry, ManagedCluster, ManagedClusterSet, RejectedObject

_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


# The targets that have a page, by the list page its detail pages sit under (`<list>/<pk>/`).
TARGET_PAGES = {
    "inventory.managedcluster": "inventory:cluster-list",
    "inventory.managedclusterset": "inventory:clusterset-list",
    "placement.placement": "placement:placement-list",
    "placement.stagedupdaterun": "rollouts:run-list",
}
RECENT_CHANGES = 10


def human_cpu(cores: float | None) -> str:
    """Cores as `8`, `1.5` or `250m`."""
    if cores is None:
        return ""
    if cores < 1:
        return f"{round(cores * 1000)}m"
    return f"{cores:.2f}".rstrip("0").rstrip(".")


def human_bytes(amount: float | None) -> str:
    """Bytes in binary units as Kubernetes writes them: `31.4Gi`, `512Mi`."""
    if amount is None:
        return ""
    unit = 0
    while amount >= 1024 and unit < len(_BINARY_UNITS) - 1:
        amount /= 1024
        unit += 1
    return f"{amount:.1f}".rstrip("0").rstrip(".") + _BINARY_UNITS[unit]


def _as_json(value: Any) -> str:
    return "" if value is None else json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def audit_rows(entries: Iterable[AuditEntry]) -> None:
    """Attach each row's link to its target's page (where there is one) and its before/after as JSON."""
    prefixes = {target_type: reverse(name) for target_type, name in TARGET_PAGES.items()}
    for entry in entries:
        prefix = prefixes.get(entry.target_type)
        entry.target_url = f"{prefix}{entry.target_id}/" if prefix and entry.target_id.isdigit() else ""
        entry.before_json = _as_json(entry.before)
        entry.after_json = _as_json(entry.after)


def recent_changes(target: models.Model) -> dict[str, Any]:
    """An object page's "Recent changes": its latest entries (one query) and the link to all of them."""
    query = urlencode(audit.target_filter(target))
    return {
        "recent_changes": audit.entries_for(target, limit=RECENT_CHANGES),
        "audit_log_url": f"{reverse('inventory:audit-list')}?{query}",
    }


def hub_column(**kwargs: Any) -> tables.Column:
    """The hub a row belongs to, by name, linking to the hub's page."""
    return name_column("Hub", "inventory:hub-list", key="hub_id", css="hub", accessor="hub__name", **kwargs)


def cluster_link(hub_id: int, kind: str, name: object, text: object = None) -> SafeString:
    """A cluster as a placement, a stage or an approval names it (hub, kind, name), linked to its page
    through `cluster-by-name`, which finds the row; `text` shows instead of the name. A hub writes these
    names, so an empty one stays plain text rather than failing the page."""
    shown = name if text is None else text
    if not name:
        return format_html("{}", shown)
    return format_html(
        '<a href="{}">{}</a>', reverse("inventory:cluster-by-name", args=[hub_id, kind, str(name)]), shown
    )


def _number(header: str, accessor: str | None = None, *, css: str = "number", **kwargs: Any) -> tables.Column:
    return tables.Column(header, accessor=accessor, attrs={"td": {"class": css}}, **kwargs)


def labels_html(cluster: ManagedCluster) -> SafeString:
    """The cluster's first label chips and how many more it has."""
    hidden = cluster.hidden_label_count()
    more = format_html('<span class="more">+{}</span>', hidden) if hidden else ""
    return format_html("{}{}", chips(cluster.label_chips()), more)


def availability_html(cluster: ManagedCluster) -> SafeString:
    stale = SafeString(' <span class="status status-stale">stale</span>') if cluster.stale else ""
    status = cluster.availability.lower()
    return format_html(
        '<span class="status status-{}">{}</span>{}', status, cluster.get_availability_display(), stale
    )


class ClusterTable(ListTable):
    """Clusters; `placement_count` is set on each shown row by the view (one query per page)."""

    name = name_column("Name", "inventory:cluster-list", orderable=True)
    hub = hub_column(orderable=True)
    sets = tables.Column("Sets", accessor="pk")
    labels = tables.Column("Labels", accessor="pk")
    availability = tables.Column("Availability", orderable=True)
    cpu = _number("CPU", "cpu_allocatable", orderable=True)
    memory = _number("Memory", "memory_allocatable", orderable=True)
    taints = tables.Column("Taints", empty_values=())
    placements = _number("Placements", "placement_count", css="number placements")
    pager_label = "Clusters"
    # fleets reach hundreds of thousands of rows; counting them all would cost more than the page
    count_cap = 10_000

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "clusters"}

    def render_name(self, record: ManagedCluster) -> SafeString:
        badge = record.cluster_kind.badge
        return format_html(
            "{}{}", record.name, format_html(' <span class="kind">{}</span>', badge) if badge else ""
        )

    def render_sets(self, record: ManagedCluster) -> SafeString:
        prefix = self.url("inventory:clusterset-list")
        memberships = record.memberships.all()
        return format_html_join(
            "",
            '<a class="chip set" href="{}{}/">{}</a>',
            ((prefix, m.cluster_set_id, m.cluster_set.name) for m in memberships),
        )

    def render_labels(self, record: ManagedCluster) -> SafeString:
        return labels_html(record)

    def render_availability(self, record: ManagedCluster) -> SafeString:
        return availability_html(record)

    def render_cpu(self, value: float) -> str:
        return human_cpu(value)

    def render_memory(self, value: float) -> str:
        return human_bytes(value)

    def render_taints(self, value: list[dict[str, str]]) -> SafeString:
        shown = (
            (t.get("effect", ""), t.get("key", ""), f"={t['value']}" if t.get("value") else "") for t in value
        )
        return format_html_join("", '<span class="chip taint" title="{}">{}{}</span>', shown)


class ClusterSetTable(ListTable):
    """Cluster sets; `namespaces` (the bound namespaces) is set on each shown row by the view."""

    name = name_column("Name", "inventory:clusterset-list", orderable=True)
    hub = hub_column(orderable=True)
    selector = tables.Column("Selector", accessor="pk")
    members = _number("Members", "member_count", css="members number", orderable=True)
    availability = tables.Column("Availability", accessor="pk")
    namespaces = tables.Column("Bound namespaces", empty_values=())
    pager_label = "Cluster sets"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "clustersets"}

    def render_selector(self, record: ManagedClusterSet) -> SafeString:
        selector = queries.selector_text(record)
        return format_html('<span class="kind">{}</span> <code>{}</code>', record.selector_type, selector)

    def render_availability(self, record: ManagedClusterSet) -> SafeString:
        return SafeString(render_to_string("inventory/_rollup.html", {"rollup": record}))

    def render_namespaces(self, record: ManagedClusterSet, value: list[str]) -> SafeString:
        if not value:
            return SafeString('<span class="empty">unbound</span>')
        pages = ((reverse("inventory:namespace-access", args=[record.hub_id, name]), name) for name in value)
        return format_html_join("", '<a class="chip" href="{}">{}</a>', pages)


class RejectedObjectTable(ListTable):
    hub = hub_column()
    kind = tables.Column("Kind", attrs={"td": {"class": "kind"}})
    object = tables.Column("Object", accessor="name", attrs={"td": {"class": "name"}})
    reason = tables.Column("Reason", attrs={"td": {"class": "reason"}})
    first_seen = tables.Column("First seen")
    last_seen = tables.Column("Last seen")
    pager_label = "Rejected objects"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "rejected-objects"}
        row_attrs = {"data-rejected": lambda record: record.pk}

    def render_object(self, record: RejectedObject) -> SafeString:
        name = Truncator(record.name).chars(80)
        return format_html("<code>{}{}</code>", f"{record.namespace}/" if record.namespace else "", name)

    def render_first_seen(self, value: datetime) -> SafeString:
        return time_html(value)

    def render_last_seen(self, record: RejectedObject) -> SafeString:
        watch = SafeString(' <span class="more">(watch)</span>') if not record.sync_run_id else ""
        return format_html("{}{}", time_html(record.last_seen), watch)


_OUTCOME_TONES = {"ok": "ok", "no-op": "never"}


class AuditTable(ListTable):
    """Audit entries; `target_url`, `before_json` and `after_json` are set by `audit_rows`."""

    at = tables.Column("Time")
    actor = tables.Column("Actor", accessor="actor_name", attrs={"td": {"class": "actor"}})
    action = tables.Column("Action", attrs={"td": {"class": "action"}})
    target = tables.Column("Target", attrs={"td": {"class": "target"}}, empty_values=())
    outcome = tables.Column("Outcome")
    hub = hub_column()
    request_id = tables.Column("Request id", empty_values=())
    source = tables.Column("Source", accessor="source_address")
    details = tables.Column("Details", accessor="pk")
    pager_label = "Audit log"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "audit-entries"}
        row_attrs = {"data-entry": lambda record: record.pk}

    def render_at(self, value: datetime) -> SafeString:
        return time_html(value)

    def render_action(self, value: str) -> SafeString:
        return format_html("<code>{}</code>", value)

    def render_target(self, record: AuditEntry) -> SafeString:
        target = record.target
        if record.target_url:
            target = format_html('<a href="{}">{}</a>', record.target_url, record.target)
        return format_html('<span class="kind">{}</span> {}', record.target_type, target)

    def render_outcome(self, record: AuditEntry) -> SafeString:
        # the stored value, not the display text tables2 would hand as `value`
        tone = _OUTCOME_TONES.get(record.outcome, "failing")
        return format_html('<span class="status status-{} outcome">{}</span>', tone, record.outcome)

    def render_request_id(self, value: str) -> SafeString:
        return format_html("<code>{}</code>", value)

    def render_details(self, record: AuditEntry) -> SafeString:
        if not (record.before_json or record.after_json or record.hub_answer):
            return SafeString("")
        return SafeString(render_to_string("inventory/_audit_details.html", {"entry": record}))
