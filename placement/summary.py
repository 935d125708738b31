"""One-line descriptions of a placement's policy for lists."""

from collections.abc import Mapping
from typing import Any

OCM_PLACEMENT = "Placement"
FLEET_CRP = "ClusterResourcePlacement"


def policy_summary(kind: str, spec: Mapping[str, Any]) -> str:
    """PickAll / PickN (n) / PickFixed (n) for a CRP; numberOfClusters or "all" for an OCM Placement."""
    if kind == FLEET_CRP:
        # A missing policy defaults to PickAll upstream.
        policy = spec.get("policy") or {}
        placement_type = policy.get("placementType") or "PickAll"
        if placement_type == "PickN":
            return f"PickN ({policy.get('numberOfClusters', 0)})"
        if placement_type == "PickFixed":
            return f"PickFixed ({len(policy.get('clusterNames') or [])})"
        return placement_type
    number = spec.get("numberOfClusters")
    return "all clusters" if number is None else f"numberOfClusters: {number}"
