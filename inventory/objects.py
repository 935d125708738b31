"""Hub objects (Kubernetes dicts) to inventory rows: the field mapping shared by every importer.

Each function returns the lookup that identifies the row and the values to store, and raises
InvalidManifest when a field has the wrong type, before anything is written.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from inventory import availability, relevance
from inventory.models import AddOnPlacementScore, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding
from placement.scheduler.documents import Document
from placement.scheduler.quantity import QuantityError, approx_float

OCM_GROUP = "cluster.open-cluster-management.io"
FLEET_CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
# Old v1beta1 sets used this name for what v1beta2 calls ExclusiveClusterSetLabel.
LEGACY_CLUSTER_SET_LABEL = "LegacyClusterSetLabel"
# Objects the dashboard writes to a hub carry this label: they are stored already, as its own rows, so
# the sync does not mirror them back.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "fleet-placement-dashboard"


def is_managed(labels: Mapping[str, Any] | None) -> bool:
    """Written by this dashboard (the sync skips such objects: they are stored as dashboard rows)."""
    return labels is not None and labels.get(MANAGED_BY_LABEL) == MANAGED_BY


class InvalidManifest(ValueError):
    """A document that cannot be stored; the message names the field."""


@dataclass(frozen=True)
class Row:
    model: type[models.Model]
    lookup: dict[str, Any]
    values: dict[str, Any]


# Written on every write of a row but not a difference between the hub and the row.
UNCOMPARED = frozenset({"synced_at", "stale"})


def _common(manifest: Document) -> dict[str, Any]:
    metadata = manifest.body["metadata"]
    return {
        "uid": metadata.get("uid") or "",
        "resource_version": metadata.get("resourceVersion") or "",
        "synced_at": timezone.now(),
    }


def managed_cluster_row(manifest: Document) -> Row:
    obj = manifest.body
    conditions = field_value(obj, "status.conditions", list, [])
    taints = field_value(obj, "spec.taints", list, [])
    allocatable = field_value(obj, "status.allocatable", dict, {})
    return Row(
        ManagedCluster,
        {"kind": ManagedCluster.Kind.MANAGED_CLUSTER, "name": manifest.name},
        _common(manifest)
        | {
            "labels": field_value(obj, "metadata.labels", dict, {}),
            "claims": field_value(obj, "status.clusterClaims", list, []),
            "taints": taints,
            "allocatable": allocatable,
            "capacity": field_value(obj, "status.capacity", dict, {}),
            "conditions": conditions,
            "availability": availability.managed_cluster_availability(
                _mappings(conditions, "status.conditions")
            ),
            "deletion_timestamp": field_time(obj, "metadata.deletionTimestamp"),
            "stale": False,
        }
        | filter_columns(taints, allocatable, "spec.taints", "status.allocatable"),
    )


def member_cluster_row(manifest: Document) -> Row:
    obj = manifest.body
    agent_status = field_value(obj, "status.agentStatus", list, [])
    taints = field_value(obj, "spec.taints", list, [])
    allocatable = field_value(obj, "status.resourceUsage.allocatable", dict, {})
    values = (
        _common(manifest)
        | {
            "labels": field_value(obj, "metadata.labels", dict, {}),
            "taints": taints,
            # Mirrored into the OCM columns so lists show cpu/memory the same way for both kinds.
            "allocatable": allocatable,
            "capacity": field_value(obj, "status.resourceUsage.capacity", dict, {}),
            "conditions": field_value(obj, "status.conditions", list, []),
            "properties": field_value(obj, "status.properties", dict, {}),
            "resource_usage": field_value(obj, "status.resourceUsage", dict, {}),
            "agent_status": agent_status,
            "availability": availability.member_cluster_availability(
                _mappings(agent_status, "status.agentStatus")
            ),
            "deletion_timestamp": field_time(obj, "metadata.deletionTimestamp"),
            "stale": False,
        }
        | filter_columns(taints, allocatable, "spec.taints", "status.resourceUsage.allocatable")
    )
    # every writer of a member row writes its digest with it, or a heartbeat would be told from a stale one
    values[relevance.DIGEST_FIELD] = relevance.fields_digest(values, UNCOMPARED)
    return Row(ManagedCluster, {"kind": ManagedCluster.Kind.MEMBER_CLUSTER, "name": manifest.name}, values)


def filter_columns(
    taints: list[Any], allocatable: dict[str, Any], taints_path: str, allocatable_path: str
) -> dict[str, Any]:
    """The denormalised columns lists filter and sort on: taint keys and cpu/memory as floats."""
    keys = [field_value(taint, "key", str, "") for taint in _mappings(taints, taints_path)]
    return {
        "taint_keys": f",{','.join(keys)}," if keys else "",
        "cpu_allocatable": _approx_quantity(allocatable, "cpu", allocatable_path),
        "memory_allocatable": _approx_quantity(allocatable, "memory", allocatable_path),
    }


def _approx_quantity(resources: dict[str, Any], name: str, path: str) -> float | None:
    """Go's AsApproximateFloat64 of a Kubernetes quantity, the scheduler's own conversion."""
    value = resources.get(name)
    if value is None:
        return None
    try:
        return approx_float(value)
    except (QuantityError, TypeError):
        raise InvalidManifest(f"{path}.{name}: {value!r} is not a quantity") from None


def managed_cluster_set_row(manifest: Document) -> Row:
    obj = manifest.body
    selector_type = field_value(obj, "spec.clusterSelector.selectorType", str, "") or (
        ManagedClusterSet.SelectorType.EXCLUSIVE_CLUSTER_SET_LABEL
    )
    if selector_type == LEGACY_CLUSTER_SET_LABEL:
        selector_type = ManagedClusterSet.SelectorType.EXCLUSIVE_CLUSTER_SET_LABEL
    label_selector = None
    if selector_type == ManagedClusterSet.SelectorType.LABEL_SELECTOR:
        label_selector = field_value(obj, "spec.clusterSelector.labelSelector", dict, None)
    return Row(
        ManagedClusterSet,
        {"name": manifest.name},
        _common(manifest) | {"selector_type": selector_type, "label_selector": label_selector},
    )


def managed_cluster_set_binding_row(manifest: Document) -> Row:
    return Row(
        ManagedClusterSetBinding,
        {"namespace": manifest.namespace, "name": manifest.name},
        _common(manifest) | {"cluster_set": field_value(manifest.body, "spec.clusterSet", str, "")},
    )


def addon_placement_score_row(manifest: Document) -> Row:
    obj = manifest.body
    return Row(
        AddOnPlacementScore,
        {"namespace": manifest.namespace, "name": manifest.name},
        _common(manifest)
        | {
            "scores": _mappings(field_value(obj, "status.scores", list, []), "status.scores"),
            "valid_until": field_time(obj, "status.validUntil"),
        },
    )


def _mappings(items: list[Any], path: str) -> list[Mapping[str, Any]]:
    for number, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidManifest(f"{path}[{number}]: expected a mapping, got {type(item).__name__}")
    return items


@functools.cache
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def field_value(obj: Mapping[str, Any], path: str, expected: type, default: Any) -> Any:
    """obj at a dotted path, `default` when absent or null; InvalidManifest when of another type."""
    value: Any = obj
    for part in _parts(path):
        # dict is tested first: the Mapping check (an abstract class) costs several times more
        value = value.get(part) if isinstance(value, (dict, Mapping)) else None
        if value is None:
            return default
    if not isinstance(value, expected):
        raise InvalidManifest(f"{path}: expected a {_type_word(expected)}, got {type(value).__name__}")
    return value


def field_time(obj: Mapping[str, Any], path: str) -> datetime | None:
    raw = field_value(obj, path, str, None)
    if raw is None:
        return None
    try:
        parsed = parse_datetime(raw)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise InvalidManifest(f"{path}: {raw!r} is not an RFC 3339 time")
    return parsed


def _type_word(expected: type) -> str:
    words: dict[type, str] = {dict: "mapping", list: "list", str: "string"}
    return words.get(expected, expected.__name__)
