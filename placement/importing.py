"""Manifests imported as dashboard-owned placements: the one path of `manage.py apply` and the upload page.

`apply_manifests` reads and validates exactly as `schedule` does; any problem (or a name owned by the
hub) is reported as `FILE: document N: FIELD: message` and nothing is written. Placements and
ClusterResourcePlacements are created or updated as dashboard-owned placements of the hub and
rescheduled; other kinds are ignored with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.models import Hub
from placement import access, history, service
from placement.manifests import LoadedManifests, read_text
from placement.models import Placement
from placement.scheduler.documents import Document, Family, Problem
from placement.scheduler.offline import CLUSTER_RESOURCE_PLACEMENT, PLACEMENT, ParsedObject, parse_documents

APPLIED_KINDS = {(Family.OCM, PLACEMENT), (Family.FLEET, CLUSTER_RESOURCE_PLACEMENT)}
CREATED, CONFIGURED, UNCHANGED = "created", "configured", "unchanged"


@dataclass(frozen=True, slots=True)
class Applied:
    """One placement the import created, configured (changed) or left unchanged."""

    placement: Placement
    verb: str

    @property
    def selected(self) -> int:
        return len(self.placement.explanation.get("selected") or [])

    def __str__(self) -> str:
        placement = self.placement
        where = f"on hub {placement.hub.name} ({self.selected} selected)"
        return f"{placement.kind} {placement} {self.verb} {where}"


@dataclass(slots=True)
class ApplyReport:
    """What an import did: the placements applied, or every problem (then nothing was written)."""

    applied: list[Applied] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # some problems are the user's roles refusing a placement (the page answers 403, not 400)
    refused: bool = False


def load_text(source: str, text: str) -> LoadedManifests:
    """Documents of one uploaded file (multi-document YAML, or JSON when the name ends in `.json`)."""
    loaded = LoadedManifests()
    # the file readers of `manage.py apply`, fed from memory so problems name the uploaded file
    read_text(source, text, as_json=source.endswith(".json"), loaded=loaded)
    return loaded


def apply_manifests(loaded: LoadedManifests, hub: Hub, actor: service.Actor) -> ApplyReport:
    """Create or update the dashboard-owned placements of `loaded` on `hub`, all or nothing."""
    report = ApplyReport()
    parsed = parse_documents(loaded.documents, report.warnings.append)
    items = [item for item in parsed.objects if _applied(item, report.warnings)]
    mirrors, denied = _refusals(hub, items, actor)
    problems = [*loaded.problems, *parsed.problems, *mirrors, *denied]
    report.refused = bool(denied)
    if problems:
        report.problems = [str(problem) for problem in loaded.ordered(problems)]
        return report
    try:
        with transaction.atomic():
            for item in items:
                report.applied.append(_apply(hub, item, actor))
    except ValidationError as exc:
        # a check only the database can make (a name taken meanwhile): the transaction wrote nothing
        report.applied, report.problems = [], _validation_problems(item.document, exc)
    return report


def _applied(item: ParsedObject, warnings: list[str]) -> bool:
    if (item.family, item.document.kind) in APPLIED_KINDS:
        return True
    warnings.append(f"{item.document.where}: {item.document.kind} is not a placement; ignored")
    return False


def _validation_problems(document: Document, exc: ValidationError) -> list[str]:
    fields: Mapping[str, list[str]] = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
    return [str(document.problem(name, message)) for name, messages in fields.items() for message in messages]


def _identity(item: ParsedObject) -> tuple[str, str, str]:
    # the applied kinds (APPLIED_KINDS) are the Placement.Kind values
    kind = item.document.kind
    # the parser applied kubectl's "default" namespace to OCM Placements
    return kind, getattr(item.value, "namespace", "") or "", item.document.name


def _refusals(
    hub: Hub, items: list[ParsedObject], actor: service.Actor
) -> tuple[list[Problem], list[Problem]]:
    """Placements that cannot be applied, found before anything is written: hub-owned mirrors, and those
    a user's roles do not let them create or change (placement.access; commands act for the shell)."""
    mirrors: list[Problem] = []
    denied: list[Problem] = []
    for item in items:
        kind, namespace, name = _identity(item)
        placement = Placement.objects.filter(hub=hub, kind=kind, namespace=namespace, name=name).first()
        if placement is not None and placement.read_only:
            message = f"{kind} {name} is a read-only mirror of hub {hub.name}; change it on the hub"
            mirrors.append(item.document.problem("metadata.name", message))
        elif not isinstance(actor, AbstractBaseUser) or (placement and access.can_change(actor, placement)):
            continue
        elif placement and access.can_view(actor, placement):
            denied.append(item.document.problem("metadata.name", access.CHANGE_DENIED))
        elif not access.can_add(actor, hub, kind, namespace):  # new, or hidden: as if it did not exist
            denied.append(item.document.problem("metadata.namespace", access.ADD_DENIED))
    return mirrors, denied


def _apply(hub: Hub, item: ParsedObject, actor: service.Actor) -> Applied:
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
        return Applied(placement, CREATED)
    changed = (placement.spec, placement.labels, placement.annotations) != (spec, labels, annotations)
    # annotations steer the scheduler (scheduling-disable), so they are saved before it runs
    placement.labels, placement.annotations = labels, annotations
    placement.save(update_fields=["labels", "annotations", "updated"])
    service.apply_spec(placement, spec, actor=actor, trigger=f"applied by {history.actor_label(actor)}")
    return Applied(placement, CONFIGURED if changed else UNCHANGED)
