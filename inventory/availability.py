"""Availability as the hub reports it; heartbeat age depends on `now`, so the scheduler judges that."""

from collections.abc import Iterable, Mapping
from typing import Any

AVAILABLE = "Available"
UNAVAILABLE = "Unavailable"
UNKNOWN = "Unknown"

OCM_AVAILABLE_CONDITION = "ManagedClusterConditionAvailable"
FLEET_MEMBER_AGENT = "MemberAgent"


def _condition_status(conditions: Iterable[Mapping[str, Any]], condition_type: str) -> str | None:
    for condition in conditions:
        if condition.get("type") == condition_type:
            return str(condition.get("status"))
    return None


def managed_cluster_availability(conditions: Iterable[Mapping[str, Any]]) -> str:
    """OCM: the same three states that drive the built-in unavailable/unreachable taints."""
    status = _condition_status(conditions, OCM_AVAILABLE_CONDITION)
    if status == "True":
        return AVAILABLE
    if status == "False":
        return UNAVAILABLE
    return UNKNOWN


def member_cluster_availability(agent_status: Iterable[Mapping[str, Any]]) -> str:
    """Fleet: the member agent must have joined and report healthy."""
    agent = next((a for a in agent_status if a.get("type") == FLEET_MEMBER_AGENT), None)
    if agent is None:
        return UNKNOWN
    conditions = agent.get("conditions") or []
    joined = _condition_status(conditions, "Joined")
    healthy = _condition_status(conditions, "Healthy")
    if joined == "True" and healthy == "True":
        return AVAILABLE
    if joined is None and healthy is None:
        return UNKNOWN
    return UNAVAILABLE
