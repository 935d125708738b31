"""Scheduling status and the Placement conditions built from it.

upstream: ocm `pkg/placement/controllers/framework/status.go` (codes), and `scheduling_controller.go`
(`newMisconfiguredCondition`, `newSatisfiedCondition`, `meta.SetStatusCondition` in `updateStatus`).
Conditions are plain dicts shaped like `metav1.Condition` JSON, so they can be written back as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from placement.scheduler.timeutil import format_time

SUCCESS, WARNING, ERROR, MISCONFIGURED = "Success", "Warning", "Error", "Misconfigured"

PLACEMENT_SATISFIED = "PlacementSatisfied"
PLACEMENT_MISCONFIGURED = "PlacementMisconfigured"

TRUE, FALSE = "True", "False"


@dataclass(frozen=True, slots=True)
class ScheduleStatus:
    """The outcome of one scheduling pass: a code, the plugin that set it and its message."""

    code: str = SUCCESS
    plugin: str = ""
    message: str = ""

    @property
    def is_error(self) -> bool:
        """Error and Misconfigured make the reconcile fail (upstream `Status.IsError`)."""
        return self.code in (ERROR, MISCONFIGURED)


def _condition(condition_type: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": condition_type, "status": status, "reason": reason, "message": message}


def misconfigured_condition(status: ScheduleStatus) -> dict[str, str]:
    """The `PlacementMisconfigured` condition: True only for the Misconfigured code."""
    if status.code == MISCONFIGURED:
        # upstream: "%s:%s" even when the plugin is empty (weights, mode, group strategy)
        return _condition(PLACEMENT_MISCONFIGURED, TRUE, "Misconfigured", f"{status.plugin}:{status.message}")
    # upstream spells the reason "Succeedconfigured"
    return _condition(
        PLACEMENT_MISCONFIGURED, FALSE, "Succeedconfigured", "Placement configurations check pass"
    )


def satisfied_condition(
    *,
    cluster_sets_in_spec: Sequence[str],
    eligible_cluster_sets: Sequence[str],
    num_bindings: int,
    num_available_clusters: int,
    num_feasible_clusters: int,
    num_unscheduled: int,
    status: ScheduleStatus,
) -> dict[str, str]:
    """The `PlacementSatisfied` condition: the first matching case of upstream `newSatisfiedCondition`.

    `num_feasible_clusters` is the number of SELECTED clusters (upstream passes the decisions), so
    `numberOfClusters: 0` and Misconfigured both end at `NoManagedClusterMatched`.
    """
    if num_bindings == 0:
        return _condition(
            PLACEMENT_SATISFIED,
            FALSE,
            "NoManagedClusterSetBindings",
            "No valid ManagedClusterSetBindings found in placement namespace",
        )
    if not eligible_cluster_sets:
        return _condition(
            PLACEMENT_SATISFIED,
            FALSE,
            "NoIntersection",
            f"None of ManagedClusterSets [{','.join(cluster_sets_in_spec)}] is bound to placement namespace",
        )
    if num_available_clusters == 0:
        return _condition(
            PLACEMENT_SATISFIED,
            FALSE,
            "AllManagedClusterSetsEmpty",
            f"All ManagedClusterSets [{','.join(eligible_cluster_sets)}] have no member ManagedCluster",
        )
    # upstream: only Error lands here; Misconfigured falls through to the selected-count rows
    if status.code == ERROR:
        return _condition(PLACEMENT_SATISFIED, FALSE, "NotAllDecisionsScheduled", status.message)
    if num_feasible_clusters == 0:
        return _condition(
            PLACEMENT_SATISFIED,
            FALSE,
            "NoManagedClusterMatched",
            "No ManagedCluster matches any of the cluster predicate",
        )
    if num_unscheduled == 0:
        return _condition(
            PLACEMENT_SATISFIED, TRUE, "AllDecisionsScheduled", "All cluster decisions scheduled"
        )
    return _condition(
        PLACEMENT_SATISFIED,
        FALSE,
        "NotAllDecisionsScheduled",
        f"{num_unscheduled} cluster decisions unscheduled",
    )


def set_condition(
    existing: list[dict[str, Any]], new: Mapping[str, Any], now: datetime
) -> list[dict[str, Any]]:
    """`meta.SetStatusCondition` without mutating `existing`: a new list with `new` merged in by type.

    `lastTransitionTime` is set when the condition is added and changes only when `status` flips
    (to `new`'s own time when it carries one, else `now`); reason, message and observedGeneration
    are overwritten when they differ.
    """
    conditions = [dict(condition) for condition in existing]
    stamp = new.get("lastTransitionTime") or format_time(now)
    for condition in conditions:
        if condition.get("type") != new["type"]:
            continue
        if condition.get("status") != new["status"]:
            condition["status"] = new["status"]
            condition["lastTransitionTime"] = stamp
        condition["reason"] = new.get("reason", "")
        condition["message"] = new.get("message", "")
        # upstream: ObservedGeneration is an int64 with omitempty, so absent means 0
        generation = new.get("observedGeneration", 0)
        if generation:
            condition["observedGeneration"] = generation
        else:
            condition.pop("observedGeneration", None)
        return conditions
    conditions.append({**new, "lastTransitionTime": stamp})
    return conditions
