"""Input objects of the OCM Placement scheduler: plain, frozen views of the hub's custom resources.

Build them with `placement.scheduler.ocm.manifests.parse_ocm_object` (which applies the CRD defaults and
rejects what the API server would reject); the scheduler never sees raw dicts except for CEL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from placement.scheduler.labels import LabelSelector, Requirement, SelectorProblem
from placement.scheduler.ocm.decisions import DecisionStrategy
from placement.scheduler.timeutil import ZERO_TIME, format_time

GROUP = "cluster.open-cluster-management.io"
CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
DISABLE_SCHEDULING_ANNOTATION = "cluster.open-cluster-management.io/experimental-scheduling-disable"

EXCLUSIVE_CLUSTER_SET_LABEL = "ExclusiveClusterSetLabel"
LABEL_SELECTOR = "LabelSelector"

NO_SELECT, PREFER_NO_SELECT, NO_SELECT_IF_NEW = "NoSelect", "PreferNoSelect", "NoSelectIfNew"
TAINT_EFFECTS = (NO_SELECT, PREFER_NO_SELECT, NO_SELECT_IF_NEW)
EQUAL, EXISTS = "Equal", "Exists"

ADDITIVE, EXACT = "Additive", "Exact"
BUILT_IN, ADD_ON = "BuiltIn", "AddOn"
BALANCE, STEADY = "Balance", "Steady"
RESOURCE_CPU, RESOURCE_MEMORY = "ResourceAllocatableCPU", "ResourceAllocatableMemory"
# the allocatable resource each resource prioritizer scores
SCORED_RESOURCES = {RESOURCE_CPU: "cpu", RESOURCE_MEMORY: "memory"}
BUILT_IN_PRIORITIZERS = (BALANCE, STEADY, RESOURCE_CPU, RESOURCE_MEMORY)


@dataclass(frozen=True, slots=True)
class Taint:
    """A ManagedCluster `spec.taints` entry; `time_added` is Go's zero time when the hub never set it,
    `time_added_nanoseconds` the nanoseconds of its timestamp below the microsecond `time_added` holds."""

    key: str
    effect: str
    value: str = ""
    time_added: datetime = ZERO_TIME
    time_added_nanoseconds: int = 0

    def describe(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class ManagedCluster:
    """The fields of a ManagedCluster the scheduler reads."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    claims: tuple[tuple[str, str], ...] = ()
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, str] = field(default_factory=dict)
    capacity: Mapping[str, str] = field(default_factory=dict)
    conditions: tuple[Mapping[str, Any], ...] = ()
    deletion_timestamp: datetime | None = None
    # a manifest read from a file, as the API server would store it (`cluster_object`); None for a
    # cluster read from a hub, whose stored form the other fields give
    typed_object: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def is_deleting(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def claim_map(self) -> dict[str, str]:
        """Claims as a map; a repeated name keeps its last value, as upstream GetClusterClaims does."""
        return dict(self.claims)

    def to_unstructured(self) -> Mapping[str, Any]:
        """The object as unstructured JSON, the `managedCluster` variable of CEL predicates."""
        if self.typed_object is not None:
            return self.typed_object
        metadata: dict[str, Any] = {"name": self.name, "labels": dict(self.labels)}
        if self.deletion_timestamp is not None:
            metadata["deletionTimestamp"] = format_time(self.deletion_timestamp)
        taints = [
            {"key": t.key, "value": t.value, "effect": t.effect, "timeAdded": format_time(t.time_added)}
            for t in self.taints
        ]
        status = {
            "allocatable": dict(self.allocatable),
            "capacity": dict(self.capacity),
            "clusterClaims": [{"name": n, "value": v} for n, v in self.claims],
            "conditions": [dict(c) for c in self.conditions],
        }
        return {
            "apiVersion": f"{GROUP}/v1",
            "kind": "ManagedCluster",
            "metadata": metadata,
            "spec": {"taints": taints},
            "status": status,
        }


@dataclass(frozen=True, slots=True)
class ManagedClusterSet:
    """A ManagedClusterSet; `label_selector` None means a LabelSelector set that selects nothing."""

    name: str
    selector_type: str = EXCLUSIVE_CLUSTER_SET_LABEL
    label_selector: LabelSelector | None = None
    # a label selector apimachinery cannot convert: listing the set's members fails, as upstream
    selector_problem: SelectorProblem | None = None


@dataclass(frozen=True, slots=True)
class ManagedClusterSetBinding:
    """Binds the set `cluster_set` to `namespace`; the webhook keeps `name == cluster_set`."""

    namespace: str
    name: str
    cluster_set: str


@dataclass(frozen=True, slots=True)
class AddOnPlacementScore:
    """Scores an add-on publishes for one cluster (its namespace is the cluster's name)."""

    namespace: str
    name: str
    scores: tuple[tuple[str, int], ...] = ()
    valid_until: datetime | None = None

    def score(self, score_name: str) -> int | None:
        """The value of `score_name`; a repeated name keeps its last value, as the upstream loop does."""
        found = None
        for name, value in self.scores:
            if name == score_name:
                found = value
        return found


@dataclass(frozen=True, slots=True)
class PlacementDecision:
    """A PlacementDecision already in the store (of any placement, any namespace)."""

    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    cluster_names: tuple[str, ...] = ()

    @property
    def placement_name(self) -> str | None:
        return self.labels.get(PLACEMENT_LABEL)


@dataclass(frozen=True, slots=True)
class ClusterPredicate:
    """One `spec.predicates[].requiredClusterSelector`: label AND claim AND CEL parts."""

    label_selector: LabelSelector = LabelSelector()
    claim_selector: tuple[Requirement, ...] = ()
    cel_expressions: tuple[str, ...] = ()
    # the label or claim selector apimachinery cannot convert (the label one when both): Misconfigured
    selector_problem: SelectorProblem | None = None

    @property
    def claim_label_selector(self) -> LabelSelector:
        return LabelSelector((), self.claim_selector)


@dataclass(frozen=True, slots=True)
class AddOnScoreCoordinate:
    resource_name: str
    score_name: str


@dataclass(frozen=True, slots=True)
class ScoreCoordinate:
    """Which prioritizer a config weights: a BuiltIn name or an AddOn score."""

    type: str = BUILT_IN
    built_in: str = ""
    add_on: AddOnScoreCoordinate | None = None


@dataclass(frozen=True, slots=True)
class PrioritizerConfig:
    """A `prioritizerPolicy.configurations[]` entry; `score_coordinate` None is Misconfigured upstream."""

    score_coordinate: ScoreCoordinate | None
    weight: int = 1


@dataclass(frozen=True, slots=True)
class PrioritizerPolicy:
    mode: str = ADDITIVE
    configurations: tuple[PrioritizerConfig, ...] = ()


@dataclass(frozen=True, slots=True)
class Toleration:
    """A Placement toleration; `toleration_seconds` None tolerates forever."""

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @property
    def duration_nanoseconds(self) -> int | None:
        """How long the toleration lasts after the taint's timeAdded, as upstream computes it:
        `time.Duration(tolerationSeconds) * time.Second`, int64 nanoseconds that wrap around past about
        292 years either way."""
        if self.toleration_seconds is None:
            return None
        return (self.toleration_seconds * 10**9 + 2**63) % 2**64 - 2**63


@dataclass(frozen=True, slots=True)
class Placement:
    """A Placement's spec as the scheduler reads it, plus the raw spec for round trips.

    `spread_policy`, `sort_by` and `score_rate_limit` are stored but ignored: no upstream code reads them.
    """

    namespace: str
    name: str
    annotations: Mapping[str, str] = field(default_factory=dict)
    deletion_timestamp: datetime | None = None
    cluster_sets: tuple[str, ...] = ()
    number_of_clusters: int | None = None
    predicates: tuple[ClusterPredicate, ...] = ()
    prioritizer_policy: PrioritizerPolicy = PrioritizerPolicy()
    tolerations: tuple[Toleration, ...] = ()
    decision_strategy: DecisionStrategy = DecisionStrategy()
    spread_policy: Mapping[str, Any] | None = None
    spec: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def scheduling_disabled(self) -> bool:
        """Upstream skips deleting placements and those annotated to disable scheduling."""
        disabled = self.annotations.get(DISABLE_SCHEDULING_ANNOTATION) == "true"
        return disabled or self.deletion_timestamp is not None

    @property
    def selector_problems(self) -> list[SelectorProblem]:
        """Selectors the hub admits but apimachinery cannot convert (the scheduler reports them as
        Misconfigured; the dashboard refuses them in what it creates), in spec order."""
        found = [p.selector_problem for p in self.predicates]
        found += [g.selector_problem for g in self.decision_strategy.decision_groups]
        return [problem for problem in found if problem is not None]

    def to_spec_dict(self) -> dict[str, Any]:
        """The spec as given (legacy forms already mapped), for round trips through the what-if API."""
        return dict(self.spec)


OcmObject = (
    ManagedCluster
    | ManagedClusterSet
    | ManagedClusterSetBinding
    | Placement
    | PlacementDecision
    | AddOnPlacementScore
)
