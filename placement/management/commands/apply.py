"""`python manage.py apply -f FILE [-f FILE ...] [--hub NAME]`: create or update dashboard-owned placements.

Reads and validates exactly as `schedule` does; any problem (or a name owned by the hub) is reported as
`FILE: document N: FIELD: message`, nothing is written and the exit code is 2. Placements and
ClusterResourcePlacements are created or updated as dashboard-owned placements of the hub and
rescheduled; other kinds are ignored with a warning.
"""

import getpass
import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from inventory.models import Hub
from placement import service
from placement.manifests import STDIN_PATH, load_manifests
from placement.models import Placement
from placement.scheduler.documents import Family, Problem
from placement.scheduler.offline import CLUSTER_RESOURCE_PLACEMENT, PLACEMENT, ParsedObject, parse_documents

BAD_INPUT = 2
APPLIED_KINDS = {(Family.OCM, PLACEMENT), (Family.FLEET, CLUSTER_RESOURCE_PLACEMENT)}


class Command(BaseCommand):
    help = "Create or update dashboard-owned Placements / ClusterResourcePlacements from manifests."
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "-f",
            "--filename",
            action="append",
            required=True,
            dest="filenames",
            metavar="PATH",
            help=f"YAML/JSON file, folder or {STDIN_PATH} for stdin; repeatable",
        )
        parser.add_argument("--hub", metavar="NAME", help="the hub they belong to (default: the only hub)")

    def handle(self, *args: Any, **options: Any) -> None:
        hub = _hub(options["hub"])
        loaded = load_manifests(options["filenames"], options.get("stdin") or sys.stdin)
        parsed = parse_documents(loaded.documents, self._warn)
        items = [item for item in parsed.objects if self._applied(item)]
        problems = [*loaded.problems, *parsed.problems, *_ownership_problems(hub, items)]
        if problems:
            lines = [str(problem) for problem in loaded.ordered(problems)]
            raise CommandError("\n".join([*lines, "nothing was applied"]), returncode=BAD_INPUT)
        actor = f"{getpass.getuser()} (manage.py apply)"
        try:
            with transaction.atomic():
                for item in items:
                    self.stdout.write(_apply(hub, item, actor))
        except ValidationError as exc:
            raise CommandError(f"{exc}; nothing was applied", returncode=BAD_INPUT) from exc

    def _applied(self, item: ParsedObject) -> bool:
        if (item.family, item.document.kind) in APPLIED_KINDS:
            return True
        self._warn(f"{item.document.where}: {item.document.kind} is not a placement; ignored")
        return False

    def _warn(self, message: str) -> None:
        self.stderr.write(f"warning: {message}", self.style.WARNING)


def _hub(name: str | None) -> Hub:
    hubs = Hub.objects.filter(name=name) if name else Hub.objects.all()
    found = list(hubs[:2])
    if len(found) == 1:
        return found[0]
    if name:
        raise CommandError(f"--hub: no hub named {name!r}", returncode=BAD_INPUT)
    raise CommandError("--hub: required (there is not exactly one hub)", returncode=BAD_INPUT)


def _identity(item: ParsedObject) -> tuple[str, str, str]:
    kind = (
        Placement.Kind.PLACEMENT
        if item.document.kind == PLACEMENT
        else Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
    )
    # the parser applied kubectl's "default" namespace to OCM Placements
    return kind, getattr(item.value, "namespace", "") or "", item.document.name


def _ownership_problems(hub: Hub, items: list[ParsedObject]) -> list[Problem]:
    problems = []
    for item in items:
        kind, namespace, name = _identity(item)
        if Placement.objects.filter(hub=hub, kind=kind, namespace=namespace, name=name, owner="hub").exists():
            message = f"{kind} {name} is a read-only mirror of hub {hub.name}; change it on the hub"
            problems.append(item.document.problem("metadata.name", message))
    return problems


def _apply(hub: Hub, item: ParsedObject, actor: str) -> str:
    kind, namespace, name = _identity(item)
    body = item.document.body
    spec = body.get("spec") or {}
    metadata = body["metadata"]
    placement = Placement.objects.filter(hub=hub, kind=kind, namespace=namespace, name=name).first()
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    if placement is None:
        placement = service.create_placement(
            kind=kind,
            hub=hub,
            namespace=namespace,
            name=name,
            spec=spec,
            actor=actor,
            labels=labels,
            annotations=annotations,
        )
        verb = "created"
    else:
        verb = (
            "configured"
            if (placement.spec, placement.labels, placement.annotations)
            != (
                spec,
                labels,
                annotations,
            )
            else "unchanged"
        )
        # annotations steer the scheduler (scheduling-disable), so they are saved before it runs
        placement.labels, placement.annotations = labels, annotations
        placement.save(update_fields=["labels", "annotations", "updated"])
        service.apply_spec(placement, spec, actor=actor, trigger=f"applied by {actor}")
    selected = len(placement.explanation.get("selected") or [])
    return f"{kind} {placement} {verb} on hub {hub.name} ({selected} selected)"
