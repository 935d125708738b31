"""ClusterApprovalRequest helpers: state from conditions, and the conditions approval and acceptance write."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from placement.scheduler.rollout.approval import (
    ACCEPTED,
    APPROVED,
    PENDING,
    accepted_condition,
    approval_state,
    approved_condition,
)

NOW = datetime(2025, 3, 1, 9, 30, 15, 500_000, tzinfo=UTC)


def request(generation: int, *conditions: tuple[str, str, int]) -> dict[str, Any]:
    return {
        "metadata": {"name": "rel-1-after-canary", "generation": generation},
        "status": {
            "conditions": [
                {"type": kind, "status": status, "observedGeneration": observed}
                for kind, status, observed in conditions
            ]
        },
    }


@pytest.mark.parametrize(
    ("doc", "state"),
    [
        ({"metadata": {"generation": 1}}, PENDING),
        (request(1), PENDING),
        (request(1, ("Approved", "True", 1)), APPROVED),
        (request(2, ("Approved", "True", 1)), PENDING),  # stale: the hub ignores it
        (request(1, ("Approved", "False", 1)), PENDING),
        (request(1, ("Approved", "True", 1), ("ApprovalAccepted", "True", 1)), ACCEPTED),
        (request(1, ("Approved", "False", 1), ("ApprovalAccepted", "True", 1)), ACCEPTED),
        (request(2, ("Approved", "True", 2), ("ApprovalAccepted", "True", 1)), APPROVED),
    ],
)
def test_approval_state(doc: dict[str, Any], state: str) -> None:
    assert approval_state(doc) == state


def test_approved_condition_is_what_kubectl_fleet_approve_writes() -> None:
    assert approved_condition(3, NOW, "alice") == {
        "type": "Approved",
        "status": "True",
        "observedGeneration": 3,
        "lastTransitionTime": "2025-03-01T09:30:15Z",
        "reason": "ClusterApprovalRequestApproved",
        "message": "ClusterApprovalRequest has been approved by alice",
    }
    assert approved_condition(3, NOW, "")["message"] == "ClusterApprovalRequest has been approved"


def test_accepted_condition_is_what_the_run_writes() -> None:
    assert accepted_condition(2, NOW) == {
        "type": "ApprovalAccepted",
        "status": "True",
        "observedGeneration": 2,
        "lastTransitionTime": "2025-03-01T09:30:15Z",
        "reason": "ApprovalRequestApprovalAccepted",
        "message": "The approval request has been approved and cannot be reverted",
    }
