"""Small builders for Fleet scheduler and rollout tests: healthy member clusters, CRPs and bindings."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from placement.scheduler.fleet.types import (
    AgentCondition,
    AgentStatus,
    ClusterDecision,
    ClusterResourceBinding,
    ClusterResourcePlacement,
    ClusterScore,
    MemberCluster,
    PlacementPolicy,
    PropertyValue,
    Taint,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def member(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    properties: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    heartbeat: datetime = NOW,
    healthy: str = "True",
    healthy_since: datetime = NOW,
    **usage: Any,
) -> MemberCluster:
    """A joined, healthy member cluster with a fresh heartbeat unless told otherwise."""
    agent = AgentStatus(
        "MemberAgent",
        (AgentCondition("Joined", "True", NOW), AgentCondition("Healthy", healthy, healthy_since)),
        heartbeat,
    )
    return MemberCluster(
        name=name,
        labels=labels or {},
        taints=taints,
        properties={k: PropertyValue(v) for k, v in (properties or {}).items()},
        agent_status=(agent,),
        **usage,
    )


def placement(policy: PlacementPolicy, name: str = "web") -> ClusterResourcePlacement:
    return ClusterResourcePlacement(name=name, policy=policy)


def binding(
    cluster: str,
    state: str = "Bound",
    *,
    snapshot: str = "web-0",
    score: tuple[int, int] | None = (0, 0),
    previous_state: str | None = None,
    name: str | None = None,
    **rollout: Any,
) -> ClusterResourceBinding:
    """A binding of placement `web` to `cluster`; `score` is (affinity, topology spread).

    `rollout` sets the rollout facts (resource_snapshot_name, generation, conditions, overrides, deleting).
    """
    cluster_score = None if score is None else ClusterScore(*score)
    return ClusterResourceBinding(
        name=name or f"web-{cluster}-0000",
        placement_name="web",
        target_cluster=cluster,
        state=state,
        scheduling_policy_snapshot_name=snapshot,
        cluster_decision=ClusterDecision(cluster, True, cluster_score, f"picked {cluster}"),
        previous_state=previous_state,
        **rollout,
    )
