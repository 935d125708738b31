"""Kubernetes objects as the scheduler's offline inputs: where each came from, and what is wrong with it.

A `Document` is one object tagged with its source and its number in that source (from 1), so a
problem can be reported as `FILE: document N: FIELD: message`. Reading files is not done here (the
scheduler does no I/O): `placement.manifests` reads files, folders and stdin into Documents.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from placement.scheduler.errors import json_type

OCM_GROUP = "cluster.open-cluster-management.io"
FLEET_CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT_GROUP = "placement.kubernetes-fleet.io"


class Family(enum.Enum):
    """Which scheduler an object feeds."""

    OCM = "ocm"
    FLEET = "fleet"


# (API group, kind) -> scheduler family; versions are the parsers' business.
SCHEDULER_KINDS: dict[tuple[str, str], Family] = {
    (OCM_GROUP, "ManagedCluster"): Family.OCM,
    (OCM_GROUP, "ManagedClusterSet"): Family.OCM,
    (OCM_GROUP, "ManagedClusterSetBinding"): Family.OCM,
    (OCM_GROUP, "Placement"): Family.OCM,
    (OCM_GROUP, "PlacementDecision"): Family.OCM,
    (OCM_GROUP, "AddOnPlacementScore"): Family.OCM,
    (FLEET_CLUSTER_GROUP, "MemberCluster"): Family.FLEET,
    (FLEET_PLACEMENT_GROUP, "ClusterResourcePlacement"): Family.FLEET,
    (FLEET_PLACEMENT_GROUP, "ClusterResourceBinding"): Family.FLEET,
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason the input cannot be used, printed as `FILE: document N: FIELD: message`."""

    source: str
    document: int | None
    field: str
    message: str

    def __str__(self) -> str:
        parts = [self.source]
        if self.document is not None:
            parts.append(f"document {self.document}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


class ManifestProblems(ValueError):
    """The input holds documents the scheduler cannot use; `problems` lists every one of them."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = tuple(problems)


@dataclass(frozen=True, slots=True)
class Document:
    """One Kubernetes object read from a source, with its 1-based number in that source."""

    source: str
    number: int
    body: Mapping[str, Any]

    @property
    def where(self) -> str:
        return f"{self.source}: document {self.number}"

    # The body is decoded JSON, so its values are Any: these read the fields `shape_problems` checks.
    @property
    def api_version(self) -> str:
        api_version: str = self.body["apiVersion"]
        return api_version

    @property
    def group(self) -> str:
        # core objects have no group: "v1".rpartition("/") -> ("", "", "v1")
        return self.api_version.rpartition("/")[0]

    @property
    def kind(self) -> str:
        kind: str = self.body["kind"]
        return kind

    @property
    def name(self) -> str:
        name: str = self.body["metadata"]["name"]
        return name

    @property
    def namespace(self) -> str:
        return self.body["metadata"].get("namespace") or ""

    @property
    def family(self) -> Family | None:
        return SCHEDULER_KINDS.get((self.group, self.kind))

    def problem(self, field: str, message: str) -> Problem:
        return Problem(self.source, self.number, field, message)


def shape_problems(document: Document) -> list[Problem]:
    """What makes a document unusable as a Kubernetes object at all (before any kind's schema)."""
    body = document.body
    if not isinstance(body, dict):
        return [document.problem("", f"expected a Kubernetes object (a mapping), got {json_type(body)}")]
    problems = [problem for key in ("apiVersion", "kind") if (problem := _type_field_problem(document, key))]
    metadata = body.get("metadata")
    if not isinstance(metadata, dict):
        return [*problems, _metadata_problem(document, metadata)]
    return problems + _metadata_problems(document, metadata)


def _type_field_problem(document: Document, key: str) -> Problem | None:
    value = document.body.get(key)
    if value in (None, ""):
        return document.problem(key, "Required value")
    if not isinstance(value, str):
        return _wrong_type(document, key, "string", value)
    return None


def _metadata_problem(document: Document, metadata: Any) -> Problem:
    if metadata is None:
        return document.problem("metadata.name", "Required value: name is required")
    return _wrong_type(document, "metadata", "object", metadata)


def _metadata_problems(document: Document, metadata: Mapping[str, Any]) -> list[Problem]:
    problems = []
    name = metadata.get("name")
    if name in (None, ""):
        problems.append(document.problem("metadata.name", "Required value: name is required"))
    elif not isinstance(name, str):
        problems.append(_wrong_type(document, "metadata.name", "string", name))
    namespace = metadata.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        problems.append(_wrong_type(document, "metadata.namespace", "string", namespace))
    for key in ("labels", "annotations"):
        problems.extend(_string_map_problems(document, f"metadata.{key}", metadata.get(key)))
    return problems


def _string_map_problems(document: Document, path: str, value: Any) -> list[Problem]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [_wrong_type(document, path, "object", value)]
    return [
        _wrong_type(document, f"{path}.{key}", "string", item)
        for key, item in value.items()
        if not isinstance(item, str)
    ]


def _wrong_type(document: Document, path: str, expected: str, value: Any) -> Problem:
    return document.problem(path, f"Invalid type: expected {expected}, got {json_type(value)}")
