"""`python manage.py describe placement NAME -n NS [--hub NAME]` / `describe crp NAME [--hub NAME]`.

Prints what `oc describe placement` prints, from the stored placement: metadata, spec, status
(conditions, number of selected clusters, decision groups, decisions or bindings) and events.
"""

from datetime import datetime, timedelta
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from placement import families, service
from placement.models import Placement
from placement.scheduler.render import (
    aligned,
    conditions_table,
    section,
)

BAD_INPUT = 2
KINDS = {
    "placement": Placement.Kind.PLACEMENT,
    "placements": Placement.Kind.PLACEMENT,
    "crp": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
    "clusterresourceplacement": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
}


class Command(BaseCommand):
    help = "Describe a stored Placement or ClusterResourcePlacement as `oc describe` does."

    def add_arguments(self, parser: CommandParser) -> None:
        add_placement_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        kind = KINDS.get(options["kind"].lower())
        if kind is None:
            raise CommandError(f"kind: must be one of {', '.join(KINDS)}", returncode=BAD_INPUT)
        placement = find_placement(kind, options["name"], options["namespace"], options["hub"])
        self.stdout.write(describe(placement))


def add_placement_arguments(parser: CommandParser) -> None:
    """The arguments naming one stored placement, shared by the commands that show or drive one."""
    parser.add_argument("kind", metavar="placement|crp")
    parser.add_argument("name")
    parser.add_argument("-n", "--namespace", default="default", help="namespace of a Placement")
    parser.add_argument("--hub", metavar="NAME", help="the hub (needed when several hold the name)")


def find_placement(kind: str, name: str, namespace: str, hub: str | None) -> Placement:
    found = Placement.objects.filter(kind=kind, name=name).select_related("hub")
    namespaced = families.family(kind).namespaced
    if namespaced:
        found = found.filter(namespace=namespace)
    if hub:
        found = found.filter(hub__name=hub)
    placements = list(found[:2])
    where = f" in namespace {namespace}" if namespaced else ""
    if not placements:
        raise CommandError(f'{kind} "{name}" not found{where}', returncode=BAD_INPUT)
    if len(placements) > 1:
        raise CommandError(f"{kind} {name}{where} exists on several hubs; give --hub", returncode=BAD_INPUT)
    return placements[0]


def _age(at: datetime, now: datetime) -> str:
    """kubectl's short age: 45s, 12m, 5h, 3d."""
    seconds = max(int((now - at) / timedelta(seconds=1)), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _map(values: dict[str, str]) -> list[str]:
    return [f"{key}={value}" for key, value in sorted(values.items())] or ["<none>"]


def _report(placement: Placement) -> dict[str, Any]:
    """The stored state in the shape of a scheduling report, for the shared table renderers."""
    status = placement.status or {}
    return {
        "conditions": status.get("conditions") or [],
        "decisionGroups": status.get("decisionGroups") or [],
        "decisions": [
            {"metadata": {"name": row.name}, "status": {"decisions": row.decisions}}
            for row in placement.decisions.order_by("name")
        ],
        "bindings": [
            {"metadata": {"name": row.name}, "spec": row.spec} for row in placement.bindings.order_by("name")
        ],
    }


def describe(placement: Placement, now: datetime | None = None) -> str:
    """The `oc describe` text of a stored placement."""
    now = now or timezone.now()
    report = _report(placement)
    labels, annotations = _map(placement.labels), _map(placement.annotations)
    manifest = service.manifest(placement)
    lines = [
        f"Name:         {placement.name}",
        f"Namespace:    {placement.namespace}",
        f"Labels:       {labels[0]}",
        *(f"              {label}" for label in labels[1:]),
        f"Annotations:  {annotations[0]}",
        *(f"              {annotation}" for annotation in annotations[1:]),
        f"API Version:  {manifest['apiVersion']}",
        f"Kind:         {placement.kind}",
        f"Hub:          {placement.hub.name} ({placement.get_owner_display()})",
        "Spec:",
        *(
            "  " + line
            for line in yaml.safe_dump(placement.spec, sort_keys=False).splitlines()
            if placement.spec
        ),
        "Status:",
    ]
    status = [*section("Conditions", conditions_table(report))]
    status += placement.family.describe_status(placement, report)
    lines += ["  " + line for line in status]
    events = [
        [e.type, e.reason, _age(e.at, now), placement.family.event_source, e.message]
        for e in reversed(list(placement.events.all()[:50]))
    ]
    if events:
        lines += ["Events:", *aligned(["Type", "Reason", "Age", "From", "Message"], events, underline=True)]
    else:
        lines.append("Events:  <none>")
    return "\n".join(lines) + "\n"
