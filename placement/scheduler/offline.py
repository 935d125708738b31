"""The offline run behind `manage.py schedule`: manifests in, one scheduling report per placement out.

Every Placement and ClusterResourcePlacement of the input is scheduled once, in input order, against
inventories built once from the same input; the given PlacementDecisions and ClusterResourceBindings
are the existing state. Nothing is written anywhere: the reports say what the schedulers would write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from placement.scheduler.documents import Document, Family, ManifestProblems, Problem
from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import parse_fleet_object
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import ClusterResourcePlacement, SchedulingError
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.manifests import parse_ocm_object
from placement.scheduler.ocm.schedule import schedule_placement

Warn = Callable[[str], None]

PLACEMENT = "Placement"
CLUSTER_RESOURCE_PLACEMENT = "ClusterResourcePlacement"

_PARSERS: dict[Family, Callable[[dict[str, Any], Warn], Any]] = {
    Family.OCM: parse_ocm_object,
    Family.FLEET: parse_fleet_object,
}


@dataclass(frozen=True, slots=True)
class ParsedObject:
    """A document of a scheduler kind and the object its family's parser built from it."""

    document: Document
    family: Family
    value: Any


@dataclass(slots=True)
class ParsedManifests:
    """The scheduler objects of the input, in input order, and every problem the parsers found."""

    objects: list[ParsedObject] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def of_kind(self, family: Family, kind: str) -> list[Any]:
        """The parsed objects of one kind, in input order."""
        return [item.value for item in self.objects if item.family is family and item.document.kind == kind]


@dataclass(frozen=True, slots=True)
class OfflineRun:
    """One report per Placement / CRP of the input (input order) and the warnings met on the way."""

    reports: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]


def parse_documents(documents: Iterable[Document], warn: Warn) -> ParsedManifests:
    """Parse every document of a scheduler kind with its family's parser, collecting every problem.

    Unknown kinds are reported through `warn` and ignored. Two objects of one kind with the same
    namespace and name are a problem: an API server holds one object per name.
    """
    parsed = ParsedManifests()
    first_seen: dict[tuple[str, str, str, str], Document] = {}
    for document in documents:
        family = document.family
        if family is None:
            warn(
                f"{document.where}: kind {document.kind} (apiVersion {document.api_version}) "
                "is not used by the scheduler; ignored"
            )
            continue
        try:
            value = _PARSERS[family](dict(document.body), _prefixed(warn, document.where))
        except ManifestError as exc:
            parsed.problems.append(document.problem(exc.field, exc.message))
            continue
        # the parsers apply kubectl's "default" namespace, so compare what they read
        identity = (document.group, document.kind, getattr(value, "namespace", None) or "", document.name)
        if identity in first_seen:
            earlier = first_seen[identity].where
            message = f'Duplicate value: "{document.name}": {document.kind} already defined in {earlier}'
            parsed.problems.append(document.problem("metadata.name", message))
            continue
        first_seen[identity] = document
        parsed.objects.append(ParsedObject(document, family, value))
    return parsed


def _prefixed(warn: Warn, where: str) -> Warn:
    return lambda message: warn(f"{where}: {message}")


def run_offline(documents: Sequence[Document], now: datetime) -> OfflineRun:
    """Schedule every Placement and CRP of `documents` once, at `now`.

    Raises `ManifestProblems` (all of them, not the first) when a document is rejected by its parser.
    Placements that upstream would report as Misconfigured or unsatisfied are reports, not errors.
    """
    warnings: list[str] = []
    parsed = parse_documents(documents, warnings.append)
    if parsed.problems:
        raise ManifestProblems(parsed.problems)
    ocm_inventory = _ocm_inventory(parsed) if parsed.of_kind(Family.OCM, PLACEMENT) else None
    fleet_inventory = (
        _fleet_inventory(parsed) if parsed.of_kind(Family.FLEET, CLUSTER_RESOURCE_PLACEMENT) else None
    )
    bindings = parsed.of_kind(Family.FLEET, "ClusterResourceBinding")
    reports = []
    # each inventory exists exactly when there is a Placement or a CRP to schedule against it
    for item in parsed.objects:
        if item.family is Family.OCM and item.document.kind == PLACEMENT and ocm_inventory is not None:
            reports.append(schedule_placement(item.value, ocm_inventory, now).to_report())
        elif (
            item.family is Family.FLEET
            and item.document.kind == CLUSTER_RESOURCE_PLACEMENT
            and fleet_inventory is not None
        ):
            reports.append(_crp_report(item.value, fleet_inventory, bindings, now))
    return OfflineRun(tuple(reports), tuple(warnings))


def _crp_report(
    crp: ClusterResourcePlacement, inventory: FleetInventory, bindings: Sequence[Any], now: datetime
) -> dict[str, Any]:
    try:
        return schedule_crp(crp, inventory, bindings, now).to_report()
    except SchedulingError as exc:
        # upstream aborts the cycle (e.g. a malformed resource property name) and writes no status; the
        # bindings written before the failing step stay; the error is requeued with backoff, not after a
        # delay the cycle asked for
        lists = ("selected", "clusters", "conditions", "decisions", "events")
        report: dict[str, Any] = {"kind": CLUSTER_RESOURCE_PLACEMENT, "namespace": None, "name": crp.name}
        report.update({key: [] for key in lists})
        report["bindings"] = [binding.to_manifest() for binding in exc.written]
        return {**report, "error": str(exc), "requeueAfterSeconds": None}


def _ocm_inventory(parsed: ParsedManifests) -> OcmInventory:
    return OcmInventory(
        clusters=parsed.of_kind(Family.OCM, "ManagedCluster"),
        cluster_sets=parsed.of_kind(Family.OCM, "ManagedClusterSet"),
        bindings=parsed.of_kind(Family.OCM, "ManagedClusterSetBinding"),
        add_on_scores=parsed.of_kind(Family.OCM, "AddOnPlacementScore"),
        decisions=parsed.of_kind(Family.OCM, "PlacementDecision"),
    )


def _fleet_inventory(parsed: ParsedManifests) -> FleetInventory:
    return FleetInventory(parsed.of_kind(Family.FLEET, "MemberCluster"))
