"""Placement-side hub objects (Kubernetes dicts) to rows; see inventory.objects for the contract."""

from inventory.objects import Row, field_value
from placement.models import ClusterResourceBinding, Placement, PlacementDecision
from placement.scheduler.documents import Document

FLEET_PLACEMENT_GROUP = "placement.kubernetes-fleet.io"


def _metadata_values(manifest: Document) -> dict[str, object]:
    obj = manifest.body
    return {
        "uid": obj["metadata"].get("uid") or "",
        "resource_version": obj["metadata"].get("resourceVersion") or "",
        "labels": field_value(obj, "metadata.labels", dict, {}),
        "annotations": field_value(obj, "metadata.annotations", dict, {}),
        "spec": field_value(obj, "spec", dict, {}),
        "status": field_value(obj, "status", dict, {}),
    }


def placement_row(manifest: Document) -> Row:
    return Row(
        Placement,
        {"kind": Placement.Kind.PLACEMENT, "namespace": manifest.namespace, "name": manifest.name},
        _metadata_values(manifest),
    )


def cluster_resource_placement_row(manifest: Document) -> Row:
    return Row(
        Placement,
        {"kind": Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, "namespace": "", "name": manifest.name},
        _metadata_values(manifest),
    )


def placement_decision_row(manifest: Document) -> Row:
    obj = manifest.body
    return Row(
        PlacementDecision,
        {"namespace": manifest.namespace, "name": manifest.name},
        {
            "labels": field_value(obj, "metadata.labels", dict, {}),
            "decisions": field_value(obj, "status.decisions", list, []),
        },
    )


def cluster_resource_binding_row(manifest: Document) -> Row:
    obj = manifest.body
    return Row(
        ClusterResourceBinding,
        {"name": manifest.name},
        {
            "labels": field_value(obj, "metadata.labels", dict, {}),
            "spec": field_value(obj, "spec", dict, {}),
            "status": field_value(obj, "status", dict, {}),
        },
    )
