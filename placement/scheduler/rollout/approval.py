"""ClusterApprovalRequest conditions: what a user's approval and the run's acceptance write.

upstream: kubefleet `tools/fleet/cmd/approve` (what `kubectl fleet approve clusterapprovalrequest`
writes) and `pkg/controllers/updaterun/execution.go` (`updateApprovalRequestAccepted`). Conditions are
plain dicts shaped like `metav1.Condition` JSON; merge them with `ocm.status.set_condition`, which
behaves like `meta.SetStatusCondition`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from placement.scheduler.timeutil import format_time

PENDING, APPROVED, ACCEPTED = "pending", "approved", "accepted"

APPROVED_CONDITION = "Approved"
APPROVAL_ACCEPTED_CONDITION = "ApprovalAccepted"
# upstream kubectl-fleet approve: reason and message of the Approved condition
APPROVED_REASON = "ClusterApprovalRequestApproved"
APPROVED_MESSAGE = "ClusterApprovalRequest has been approved"
ACCEPTED_REASON = "ApprovalRequestApprovalAccepted"
ACCEPTED_MESSAGE = "The approval request has been approved and cannot be reverted"


def approval_state(request: Mapping[str, Any]) -> str:
    """ "pending", "approved" (Approved=True at the current generation, not accepted yet) or "accepted".

    Like upstream `condition.IsConditionStatusTrue`, a condition only counts when its
    observedGeneration equals the request's `metadata.generation`: a stale approval is pending.
    Acceptance wins over a later un-approval because the run never looks back once it accepted.
    """
    if is_condition_true(request, APPROVAL_ACCEPTED_CONDITION):
        return ACCEPTED
    if is_condition_true(request, APPROVED_CONDITION):
        return APPROVED
    return PENDING


def is_condition_true(request: Mapping[str, Any], condition_type: str) -> bool:
    """The request's `condition_type` is True for its current generation (absent generations are 0)."""
    generation = (request.get("metadata") or {}).get("generation") or 0
    for condition in (request.get("status") or {}).get("conditions") or ():
        if condition.get("type") == condition_type:
            return (
                condition.get("status") == "True" and (condition.get("observedGeneration") or 0) == generation
            )
    return False


def approved_condition(generation: int, now: datetime, actor: str) -> dict[str, Any]:
    """The Approved=True condition `kubectl fleet approve` writes, its message naming who approved."""
    message = f"{APPROVED_MESSAGE} by {actor}" if actor else APPROVED_MESSAGE
    return _condition(APPROVED_CONDITION, APPROVED_REASON, message, generation, now)


def accepted_condition(generation: int, now: datetime) -> dict[str, Any]:
    """The ApprovalAccepted=True condition the run writes once it acts on an approval."""
    return _condition(APPROVAL_ACCEPTED_CONDITION, ACCEPTED_REASON, ACCEPTED_MESSAGE, generation, now)


def _condition(
    condition_type: str, reason: str, message: str, generation: int, now: datetime
) -> dict[str, Any]:
    return {
        "type": condition_type,
        "status": "True",
        "observedGeneration": generation,
        "lastTransitionTime": format_time(now),
        "reason": reason,
        "message": message,
    }
