"""Placement-side hub objects (Kubernetes dicts) to rows; see inventory.objects for the contract."""

from inventory.objects import Row, field_value
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.scheduler.documents import Document
from placement.scheduler.rollout.approval import approval_state

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
            "annotations": field_value(obj, "metadata.annotations", dict, {}),
            "spec": field_value(obj, "spec", dict, {}),
            "status": field_value(obj, "status", dict, {}),
        },
    )


def _rollout_values(manifest: Document) -> dict[str, object]:
    obj = manifest.body
    return {
        "uid": obj["metadata"].get("uid") or "",
        "resource_version": obj["metadata"].get("resourceVersion") or "",
        "labels": field_value(obj, "metadata.labels", dict, {}),
        "spec": field_value(obj, "spec", dict, {}),
        "status": field_value(obj, "status", dict, {}),
    }


def _generation(manifest: Document) -> int:
    generation: int = field_value(manifest.body, "metadata.generation", int, 1)
    return generation


def staged_update_strategy_row(manifest: Document) -> Row:
    return Row(StagedUpdateStrategy, {"name": manifest.name}, _rollout_values(manifest))


def staged_update_run_row(manifest: Document) -> Row:
    values = _rollout_values(manifest) | {"generation": _generation(manifest)}
    return Row(StagedUpdateRun, {"name": manifest.name}, values)


def approval_request_row(manifest: Document) -> Row:
    values = _rollout_values(manifest) | {
        "generation": _generation(manifest),
        "state": approval_state(manifest.body),
    }
    return Row(ApprovalRequest, {"name": manifest.name}, values)
