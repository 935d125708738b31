"""The OCM rollout preview of a Placement: which of its clusters a rollout strategy reaches in which step.

An OCM Placement only decides; the workload applier that consumes it (ManifestWorkReplicaSet, add-on
install strategies) carries the cluster/v1alpha1 RolloutStrategy. A placement declares the one to
preview in the annotation `rollout.fleetui.io/strategy` (the RolloutStrategy as YAML or JSON, exactly
what a ManifestWorkReplicaSet's `placementRefs[].rolloutStrategy` holds); without it, placements with
decision groups get a ProgressivePerGroup preview. Steps come from the pure `plan_rollout` (sdk-go
RolloutHandler): every cluster starts as ToApply, and the clusters of each step are taken as
Succeeded (their minSuccessTime already served) before the next step is planned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from placement.models import Placement, PlacementDecision
from placement.scheduler.errors import ManifestError
from placement.scheduler.ocm.decisions import DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL
from placement.scheduler.rollout.ocm import (
    PROGRESSIVE_PER_GROUP,
    ClusterGroup,
    ClusterRolloutStatus,
    RolloutError,
    RolloutStatus,
    RolloutStrategy,
    groups_from_decisions,
    parse_rollout_strategy,
    plan_rollout,
)
from placement.scheduler.untrusted import InputError, load_yaml

STRATEGY_ANNOTATION = "rollout.fleetui.io/strategy"


@dataclass
class GroupSteps:
    """One decision group and the step each of its clusters rolls out in."""

    name: str
    index: int
    clusters: int
    steps: list[tuple[int, list[str]]] = field(default_factory=list)


@dataclass
class Preview:
    strategy: str  # the type previewed
    declared: bool  # from the annotation (else the default preview)
    groups: list[GroupSteps] = field(default_factory=list)
    steps: int = 0
    error: str = ""


def declares_rollout(placement: Placement) -> bool:
    """Placements with decision groups or a declared strategy get a preview."""
    spec = placement.spec or {}
    return STRATEGY_ANNOTATION in (placement.annotations or {}) or bool(
        ((spec.get("decisionStrategy") or {}).get("groupStrategy") or {}).get("decisionGroups")
    )


def strategy_of(placement: Placement) -> tuple[RolloutStrategy, bool]:
    """The declared strategy (raises ManifestError / InputError), else ProgressivePerGroup."""
    raw = (placement.annotations or {}).get(STRATEGY_ANNOTATION)
    if raw is None:
        return RolloutStrategy(type=PROGRESSIVE_PER_GROUP), False
    return parse_rollout_strategy(load_yaml(raw), f"metadata.annotations[{STRATEGY_ANNOTATION}]"), True


def preview(placement: Placement, pages: Iterable[PlacementDecision], now: datetime) -> Preview | None:
    """The step-by-step preview, or None when the placement declares no rollout."""
    if not placement.family.previews_rollout or not declares_rollout(placement):
        return None
    try:
        strategy, declared = strategy_of(placement)
    except (ManifestError, InputError) as exc:
        return Preview(strategy="", declared=True, error=f"{STRATEGY_ANNOTATION}: {exc}")
    result = Preview(strategy=strategy.type, declared=declared)
    try:
        groups = groups_from_decisions(
            (p.labels.get(DECISION_GROUP_NAME_LABEL), p.labels.get(DECISION_GROUP_INDEX_LABEL, 0), _names(p))
            for p in pages
        )
        steps = plan_steps(strategy, groups, now)
    except RolloutError as exc:
        result.error = str(exc)
        return result
    result.groups = [_group_steps(group, steps) for group in groups]
    result.steps = len(steps)
    return result


def plan_steps(strategy: RolloutStrategy, groups: list[ClusterGroup], now: datetime) -> list[list[str]]:
    """The clusters of each step, each step planned once the previous ones succeeded and soaked."""
    served = strategy.min_success_time
    succeeded: dict[str, ClusterRolloutStatus] = {}
    steps: list[list[str]] = []
    total = sum(len(group.clusters) for group in groups)
    while len(steps) <= total:
        result = plan_rollout(strategy, groups, list(succeeded.values()), now)
        fresh = [c for c in result.clusters_to_rollout if c.cluster_name not in succeeded]
        if not fresh:
            break
        steps.append(sorted(c.cluster_name for c in fresh))
        for cluster in fresh:
            succeeded[cluster.cluster_name] = ClusterRolloutStatus(
                cluster.cluster_name, cluster.group_key, RolloutStatus.SUCCEEDED, now - served
            )
    return steps


def _names(page: PlacementDecision) -> list[str]:
    return [str(d.get("clusterName", "")) for d in page.decisions or [] if isinstance(d, Mapping)]


def _group_steps(group: ClusterGroup, steps: list[list[str]]) -> GroupSteps:
    entry = GroupSteps(group.key.group_name, group.key.group_index, len(group.clusters))
    for number, clusters in enumerate(steps, start=1):
        mine = [name for name in clusters if name in group.clusters]
        if mine:
            entry.steps.append((number, mine))
    return entry


def as_dict(result: Preview | None) -> dict[str, Any] | None:
    """The preview as the API answers it."""
    if result is None:
        return None
    return {
        "strategy": result.strategy,
        "declared": result.declared,
        "steps": result.steps,
        "error": result.error,
        "groups": [
            {
                "groupName": g.name,
                "groupIndex": g.index,
                "clusters": g.clusters,
                "steps": [{"step": n, "clusters": names} for n, names in g.steps],
            }
            for g in result.groups
        ],
    }
