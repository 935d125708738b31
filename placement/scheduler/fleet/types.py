"""Plain KubeFleet inputs: MemberCluster, ClusterResourcePlacement, ClusterResourceBinding.

Shared by the CRP scheduler (`fleet.schedule`) and the rollout planners (`rollout.rolling`,
`rollout.staged`). Field names follow the `cluster.kubernetes-fleet.io` and
`placement.kubernetes-fleet.io` APIs. Every object here is already defaulted (`SetPlacementDefaults`)
and validated: `manifests.py` builds them from YAML/JSON, other callers (the inventory sync, tests)
build them directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from placement.scheduler.labels import LabelSelector, SelectorProblem

PICK_ALL, PICK_N, PICK_FIXED = "PickAll", "PickN", "PickFixed"
PLACEMENT_TYPES = (PICK_ALL, PICK_N, PICK_FIXED)

DO_NOT_SCHEDULE, SCHEDULE_ANYWAY = "DoNotSchedule", "ScheduleAnyway"
ASCENDING, DESCENDING = "Ascending", "Descending"
TOLERATION_EQUAL, TOLERATION_EXISTS = "Equal", "Exists"
NO_SCHEDULE = "NoSchedule"

# Property selector operators (`PropertySelectorOperator`).
PROPERTY_OPERATORS = ("Gt", "Ge", "Eq", "Ne", "Lt", "Le")

STATE_SCHEDULED, STATE_BOUND, STATE_UNSCHEDULED = "Scheduled", "Bound", "Unscheduled"
BINDING_STATES = (STATE_SCHEDULED, STATE_BOUND, STATE_UNSCHEDULED)

ROLLING_UPDATE, EXTERNAL = "RollingUpdate", "External"

FLEET_PREFIX = "kubernetes-fleet.io/"
CRP_TRACKING_LABEL = FLEET_PREFIX + "parent-CRP"
PREVIOUS_BINDING_STATE_ANNOTATION = FLEET_PREFIX + "previous-binding-state"
SCHEDULER_CRB_CLEANUP_FINALIZER = FLEET_PREFIX + "scheduler-crb-cleanup"

MEMBER_AGENT = "MemberAgent"
AGENT_JOINED, AGENT_HEALTHY = "Joined", "Healthy"

DEFAULT_MAX_UNAVAILABLE = "25%"
DEFAULT_MAX_SURGE = "25%"
# upstream: DefaultUnavailablePeriodSeconds = 60 (the Azure docs' 10 s is wrong)
DEFAULT_UNAVAILABLE_PERIOD_SECONDS = 60
DEFAULT_REVISION_HISTORY_LIMIT = 10
DEFAULT_APPLY_STRATEGY: Mapping[str, Any] = MappingProxyType(
    {
        "type": "ClientSideApply",
        "comparisonOption": "PartialComparison",
        "whenToApply": "Always",
        "whenToTakeOver": "Always",
    }
)


class SchedulingError(ValueError):
    """A plugin error: upstream aborts the whole scheduling cycle (no cluster is filtered for it).

    `written` holds the bindings as the run had already written them when it stopped (dangling ones
    marked Unscheduled, earlier cycles' picks): upstream writes those before the failing step, and an
    aborted cycle does not undo them.
    """

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"{plugin}: {message}")
        self.plugin = plugin
        self.message = message
        self.written: tuple[ClusterResourceBinding, ...] = ()


# --- MemberCluster ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Taint:
    """`spec.taints[]` of a MemberCluster; NoSchedule is the only effect."""

    key: str
    value: str = ""
    effect: str = NO_SCHEDULE


@dataclass(frozen=True, slots=True)
class PropertyValue:
    """`status.properties[name]`: the value as published (a quantity string) and when it was observed."""

    value: str
    observation_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class AgentCondition:
    """One condition of an agent status (`Joined`, `Healthy`, ...)."""

    type: str
    status: str
    last_transition_time: datetime | None = None
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """`status.agentStatus[]` entry; the scheduler only reads the MemberAgent one."""

    type: str
    conditions: tuple[AgentCondition, ...] = ()
    last_received_heartbeat: datetime | None = None

    def condition(self, condition_type: str) -> AgentCondition | None:
        """The condition of that type, or None."""
        return next((c for c in self.conditions if c.type == condition_type), None)


@dataclass(frozen=True, slots=True)
class MemberCluster:
    """A cluster of the fleet, as the hub's scheduler sees it."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    properties: Mapping[str, PropertyValue] = field(default_factory=dict)
    # status.resourceUsage: resource name -> quantity string
    capacity: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] = field(default_factory=dict)
    available: Mapping[str, str] = field(default_factory=dict)
    agent_status: tuple[AgentStatus, ...] = ()
    deletion_timestamp: datetime | None = None

    @property
    def member_agent(self) -> AgentStatus | None:
        """The MemberAgent status, or None when the agent has not reported yet."""
        return next((a for a in self.agent_status if a.type == MEMBER_AGENT), None)


# --- ClusterResourcePlacement ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PropertySelectorRequirement:
    """`propertySelector.matchExpressions[]`: `{name, operator, values}`."""

    name: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PropertySorter:
    """`preference.propertySorter`: interpolate a preferred term's weight on a property."""

    name: str
    sort_order: str


@dataclass(frozen=True, slots=True)
class ClusterSelectorTerm:
    """A cluster selector term; a None label selector checks no labels (same outcome as `{}`)."""

    label_selector: LabelSelector | None = None
    property_selector: tuple[PropertySelectorRequirement, ...] = ()
    property_sorter: PropertySorter | None = None
    # a label selector apimachinery cannot convert: the cycle aborts where a cluster reaches the term
    selector_problem: SelectorProblem | None = None


@dataclass(frozen=True, slots=True)
class PreferredClusterSelector:
    """`preferredDuringSchedulingIgnoredDuringExecution[]`: weight -100..100 and a preference term."""

    weight: int
    preference: ClusterSelectorTerm


@dataclass(frozen=True, slots=True)
class ClusterAffinity:
    """`affinity.clusterAffinity`; `required_terms` None means no required affinity at all."""

    required_terms: tuple[ClusterSelectorTerm, ...] | None = None
    preferred: tuple[PreferredClusterSelector, ...] = ()


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """`topologySpreadConstraints[]` (PickN only), with the CRD defaults applied."""

    topology_key: str
    max_skew: int = 1
    when_unsatisfiable: str = DO_NOT_SCHEDULE


@dataclass(frozen=True, slots=True)
class Toleration:
    """`tolerations[]`; the operator defaults to Equal, an empty effect matches every effect."""

    key: str = ""
    operator: str = TOLERATION_EQUAL
    value: str = ""
    effect: str = ""


@dataclass(frozen=True, slots=True)
class PlacementPolicy:
    """`spec.policy`; a CRP without one is `PickAll` (upstream default)."""

    placement_type: str = PICK_ALL
    cluster_names: tuple[str, ...] = ()
    number_of_clusters: int | None = None
    affinity: ClusterAffinity | None = None
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True)
class RollingUpdateConfig:
    """`strategy.rollingUpdate` with `SetPlacementDefaults` applied (25% / 25% / 60 s)."""

    max_unavailable: int | str = DEFAULT_MAX_UNAVAILABLE
    max_surge: int | str = DEFAULT_MAX_SURGE
    unavailable_period_seconds: int = DEFAULT_UNAVAILABLE_PERIOD_SECONDS


@dataclass(frozen=True, slots=True)
class RolloutStrategy:
    """`spec.strategy`; `rolling_update` is None for the External type."""

    type: str = ROLLING_UPDATE
    rolling_update: RollingUpdateConfig | None = field(default_factory=RollingUpdateConfig)
    apply_strategy: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_APPLY_STRATEGY))


@dataclass(frozen=True, slots=True)
class ClusterResourcePlacement:
    """A ClusterResourcePlacement, defaulted; `resource_selectors` are kept as written."""

    name: str
    resource_selectors: tuple[Mapping[str, Any], ...] = ()
    policy: PlacementPolicy = field(default_factory=PlacementPolicy)
    strategy: RolloutStrategy = field(default_factory=RolloutStrategy)
    revision_history_limit: int = DEFAULT_REVISION_HISTORY_LIMIT
    generation: int = 1

    @property
    def selector_problems(self) -> list[SelectorProblem]:
        """Affinity label selectors apimachinery cannot convert (the scheduler aborts its cycle on them;
        the dashboard refuses them in what it creates), required terms first."""
        affinity = self.policy.affinity
        if affinity is None:
            return []
        terms = list(affinity.required_terms or ()) + [p.preference for p in affinity.preferred]
        return [term.selector_problem for term in terms if term.selector_problem is not None]


# --- ClusterResourceBinding ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClusterScore:
    """`clusterDecision.clusterScore`; the API's JSON name of the topology spread score is `priorityScore`."""

    affinity_score: int = 0
    topology_spread_score: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"affinityScore": self.affinity_score, "priorityScore": self.topology_spread_score}


@dataclass(frozen=True, slots=True)
class ClusterDecision:
    """One entry of a policy snapshot's `status.clusterDecisions` (also `binding.spec.clusterDecision`)."""

    cluster_name: str
    selected: bool
    cluster_score: ClusterScore | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "clusterName": self.cluster_name,
            "selected": self.selected,
            "clusterScore": self.cluster_score.to_dict() if self.cluster_score else None,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class OverrideSnapshots:
    """The override snapshots a binding points at (resource overrides as `namespace/name`)."""

    cluster_resource_override_snapshots: tuple[str, ...] = ()
    resource_override_snapshots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BindingCondition:
    """One `status.conditions` entry of a ClusterResourceBinding."""

    type: str
    status: str
    reason: str = ""
    observed_generation: int = 0
    last_transition_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class ClusterResourceBinding:
    """One (placement, cluster) binding: what the scheduler decided and what the rollout reads.

    A binding is under the current policy when `latest_policy` is True, or, when that flag is None,
    when `scheduling_policy_snapshot_name` names the policy snapshot being scheduled.
    `previous_state` is the `kubernetes-fleet.io/previous-binding-state` annotation (None when absent).
    `generation` is `metadata.generation`; readiness only trusts conditions observed at it.
    """

    name: str
    placement_name: str
    target_cluster: str
    state: str = STATE_SCHEDULED
    scheduling_policy_snapshot_name: str = ""
    latest_policy: bool | None = None
    deleting: bool = False
    cluster_decision: ClusterDecision | None = None
    previous_state: str | None = None
    resource_snapshot_name: str = ""
    overrides: OverrideSnapshots = field(default_factory=OverrideSnapshots)
    generation: int = 0
    conditions: tuple[BindingCondition, ...] = ()

    def condition(self, condition_type: str) -> BindingCondition | None:
        """The condition of that type, or None."""
        return next((c for c in self.conditions if c.type == condition_type), None)

    def to_manifest(self) -> dict[str, Any]:
        """The binding as the hub stores it (plain JSON types)."""
        metadata: dict[str, Any] = {
            "name": self.name,
            "labels": {CRP_TRACKING_LABEL: self.placement_name},
            "finalizers": [SCHEDULER_CRB_CLEANUP_FINALIZER],
        }
        if self.previous_state is not None:
            metadata["annotations"] = {PREVIOUS_BINDING_STATE_ANNOTATION: self.previous_state}
        spec: dict[str, Any] = {
            "state": self.state,
            "schedulingPolicySnapshotName": self.scheduling_policy_snapshot_name,
            "targetCluster": self.target_cluster,
        }
        if self.resource_snapshot_name:
            spec["resourceSnapshotName"] = self.resource_snapshot_name
        if self.cluster_decision is not None:
            spec["clusterDecision"] = self.cluster_decision.to_dict()
        return {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": metadata,
            "spec": spec,
        }
