"""How inventory lists are shown: sortable columns, page sizes, quantities in human units, audit rows."""

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.db import models
from django.urls import reverse

from core.listing import Column
from inventory import audit
from inventory.models import AuditEntry

_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


CLUSTER_COLUMNS = (
    Column("Name", "name"),
    Column("Hub", "hub"),
    Column("Sets"),
    Column("Labels"),
    Column("Availability", "availability"),
    Column("CPU", "cpu"),
    Column("Memory", "memory"),
    Column("Taints"),
    Column("Placements"),
)

CLUSTER_SET_COLUMNS = (
    Column("Name", "name"),
    Column("Hub", "hub"),
    Column("Selector"),
    Column("Members", "members"),
    Column("Availability"),
    Column("Bound namespaces"),
)

REJECTED_COLUMNS = tuple(
    Column(header) for header in ("Hub", "Kind", "Object", "Reason", "First seen", "Last seen")
)
AUDIT_COLUMNS = tuple(
    Column(header)
    for header in ("Time", "Actor", "Action", "Target", "Outcome", "Hub", "Request id", "Source", "Details")
)
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
