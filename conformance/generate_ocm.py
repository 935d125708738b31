"""Random, valid OCM cases: small hubs whose objects the CRDs of open-cluster-management.io/api admit.

`generate_case(rng, case_id)` builds one case (1 to 12 ManagedClusters, up to 4 ManagedClusterSets, 1 to
3 Placements) entirely from `rng`, so a seed replays the same cases. The values come from small pools
(label and claim keys and values, set names, taint keys, score names) so that selectors, tolerations and
CEL expressions both hit and miss. How often each feature appears is the `Probabilities` table; the
defaults make 2,000 cases exercise every feature many times.

Some cases are deliberately odd but still admitted by the API server: CEL that does not compile, CEL that
fails at run time, prioritizer names and modes upstream reports as Misconfigured, tolerations with an
empty key and operator Equal, tolerationSeconds whose Go Duration wraps around, taints stamped after
`now`, times with fractional seconds, a numeric string as clustersPerDecisionGroup. Label selectors that
the upstream scheduler reports as Misconfigured (an unknown operator, `In` without values) are governed
by `Probabilities.invalid_selector`, which a caller sets to 0 to leave them out.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from conformance.cases import Case

GROUP_VERSION_V1 = "cluster.open-cluster-management.io/v1"
GROUP_VERSION_V1ALPHA1 = "cluster.open-cluster-management.io/v1alpha1"
GROUP_VERSION_V1BETA1 = "cluster.open-cluster-management.io/v1beta1"
GROUP_VERSION_V1BETA2 = "cluster.open-cluster-management.io/v1beta2"

CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
GROUP_NAME_LABEL = "cluster.open-cluster-management.io/decision-group-name"
GROUP_INDEX_LABEL = "cluster.open-cluster-management.io/decision-group-index"
DISABLE_ANNOTATION = "cluster.open-cluster-management.io/experimental-scheduling-disable"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Probabilities:
    """How often each feature appears: each field is the chance of one independent draw.

    The `mode_*` and `group_size_*` fields are shares of one draw each: what they leave over is the
    field omitted (the CRD default).
    """

    # times: the chance that a taint age or a score expiry sits exactly on a boundary
    boundary_time: float = 0.5
    # clusters
    cluster_label: float = 0.6  # per label key of the pool
    cluster_claim: float = 0.6  # per claim name of the pool
    exclusive_set_label: float = 0.7
    missing_set_label: float = 0.1
    cluster_taints: float = 0.45
    taint_without_time: float = 0.08
    taint_added_later: float = 0.05  # timeAdded after `now` (another component's clock ran ahead)
    fractional_time: float = 0.05  # a timeAdded or validUntil with fractional seconds (hand-written)
    allocatable: float = 0.75  # per resource (cpu, memory)
    capacity_missing: float = 0.15  # allocatable given without its capacity
    cluster_conditions: float = 0.85
    cluster_version: float = 0.6
    cluster_deleting: float = 0.04
    add_on_score: float = 0.5  # per cluster and score resource
    score_valid_until: float = 0.6
    # sets and bindings
    no_sets: float = 0.08
    global_set: float = 0.45
    label_selector_set: float = 0.35
    nil_label_selector: float = 0.08
    selector_type_omitted: float = 0.1
    set_bound: float = 0.75  # per set and namespace
    binding_to_missing_set: float = 0.2
    # placements
    placement_cluster_sets: float = 0.45
    missing_cluster_set: float = 0.2
    number_of_clusters: float = 0.6
    predicates: float = 0.7
    label_selector: float = 0.6
    match_labels: float = 0.4
    match_expressions: float = 0.6
    second_requirement: float = 0.3  # besides matchLabels; a selector without matchLabels always has them
    claim_selector: float = 0.45
    cel_selector: float = 0.45
    cel_compile_error: float = 0.025  # per expression
    cel_runtime_error: float = 0.05  # per expression
    invalid_selector: float = 0.015  # per selector built
    prioritizer_policy: float = 0.7
    mode_additive: float = 0.45
    mode_exact: float = 0.45
    weight_omitted: float = 0.15
    type_omitted: float = 0.2
    add_on_config: float = 0.35
    misconfigured_prioritizer: float = 0.015
    tolerations: float = 0.5
    misconfigured_toleration: float = 0.02
    exists_with_key: float = 0.6
    toleration_effect: float = 0.5
    toleration_seconds: float = 0.6
    duration_edge_seconds: float = 0.05  # at Go's Duration limits rather than aimed at a taint's age
    toleration_aimed: float = 0.7  # taken from a taint of the case rather than from the pools
    decision_strategy: float = 0.4
    group_size_numeric_string: float = 0.03
    group_size_int: float = 0.4
    group_size_percent: float = 0.4
    decision_groups: float = 0.6
    group_label_selector: float = 0.75
    group_claim_selector: float = 0.3
    spread_policy: float = 0.08
    scheduling_disabled: float = 0.02
    # existing decisions
    existing_decisions: float = 0.6
    decision_pages: float = 0.3  # the existing clusters split over two PlacementDecisions
    stale_decision: float = 0.2
    other_decisions: float = 0.4
    other_decision_labelled: float = 0.7


PROBABILITIES = Probabilities()

LABEL_POOL: dict[str, tuple[str, ...]] = {
    "env": ("dev", "staging", "prod"),
    "region": ("us-east-1", "us-west-2", "eu-central-1"),
    "tier": ("gold", "silver", "bronze"),
    "example.com/zone": ("a", "b"),
    "vendor": ("OpenShift", "AKS", "EKS"),
}
CLAIM_POOL: dict[str, tuple[str, ...]] = {
    "platform.open-cluster-management.io": ("AWS", "GCP", "Azure"),
    "product.open-cluster-management.io": ("OpenShift", "AKS"),
    "version.openshift.io": ("4.14.2", "4.15.0", "4.9.10", "v4.16.1", "4.15"),
    "ip.example.com": ("10.0.1.5", "192.168.3.4", "127.0.0.1", "fd00::1", "::ffff:10.0.0.1", "10.0.1.300"),
    "cidr.example.com": ("10.0.0.0/8", "192.168.0.0/16", "fd00::/64", "10.0.0.1/33"),
    "url.example.com": (
        "https://api.c1.example.com:6443/v1/path?x=1&y=2",
        "http://10.0.0.1/",
        "ftp://files.example.com",
        "not a url",
    ),
    "json.example.com": ('{"tier":"gold","weight":3}', '{"tier":"silver","zones":["a","b"]}', "[1,2,3]", "{"),
    "quota.example.com": ("8Gi", "500m", "2", "1.5", "lots"),
}
# values no cluster carries, so In/NotIn/matchLabels also miss
ABSENT_VALUES = ("qa", "none")
CLUSTER_NAMES = tuple(f"cluster{i}" for i in range(1, 21)) + ("local-cluster", "edge-a1", "edge-b2")
EXCLUSIVE_SET_NAMES = ("default", "dev", "prod", "edge", "team-a")
LABEL_SET_NAMES = ("gold-clusters", "us-clusters")
GLOBAL_SET = "global"
MISSING_SET_NAMES = ("ghost", "retired")
NAMESPACES = ("default", "app-a", "app-b")
PLACEMENT_NAMES = ("placement", "placement-a", "placement-b")
GROUP_NAMES = ("canary", "wave-1", "wave.2", "g0")
TAINT_KEYS = (
    "cluster.open-cluster-management.io/unreachable",
    "cluster.open-cluster-management.io/unavailable",
    "gpu",
    "maintenance",
    "example.com/dedicated",
)
TAINT_VALUES = ("", "true", "team-a")
TAINT_EFFECTS = ("NoSelect", "PreferNoSelect", "NoSelectIfNew")
# NoSelect, the effect of the hub's own taints and the only one that makes a decided cluster requeue,
# twice as likely as each of the others
TAINT_EFFECT_DRAWS = ("NoSelect", *TAINT_EFFECTS)
BUILTIN_PRIORITIZERS = ("Balance", "Steady", "ResourceAllocatableCPU", "ResourceAllocatableMemory")
# admitted by the CRD (a free string), rejected by the scheduler as Misconfigured
UNKNOWN_PRIORITIZERS = ("Spread", "Foo", "")
UNKNOWN_MODES = ("Foo", "additive")
SCORE_RESOURCES = ("resource-usage", "gpu-score")
SCORE_NAMES = ("cpuAvailable", "memAvailable", "gpuCount")
MISSING_SCORE_RESOURCE = "absent-score"
CPU_QUANTITIES: tuple[str | int, ...] = ("2", "4", "500m", "1500m", "8", 16, "0")
MEMORY_QUANTITIES: tuple[str | int, ...] = ("2Gi", "4096Mi", "8G", "1e9", "16Gi", "512Mi", 1073741824)
GROUP_PERCENTS = ("1%", "25%", "34%", "50%", "100%")
# taint ages in seconds that tolerationSeconds are drawn around
TAINT_AGES = (1, 5, 10, 30, 300, 3600, 86400)
# tolerationSeconds upstream multiplies into a Go Duration (int64 nanoseconds): the longest whole
# number of seconds that fits, and values whose product wraps around (to about -292 years, to 100.29 s,
# to -1 s, to 0)
GO_DURATION_SECONDS = 9_223_372_036
DURATION_EDGE_SECONDS = (
    GO_DURATION_SECONDS,
    GO_DURATION_SECONDS + 1,
    -GO_DURATION_SECONDS - 1,
    18_446_744_174,
    2**63 - 1,
    -(2**63),
)
# fractions of a second around the millisecond and microsecond a delay or a datetime is rounded to
SECOND_FRACTIONS = (".5", ".0005", ".9995", ".000001", ".0000001", ".999999999")
# the registration agent's Available condition: True twice as often as False or Unknown
CONDITION_STATUSES = ("True", "True", "False", "Unknown")
CONDITION_REASONS = {
    "True": "ManagedClusterAvailable",
    "False": "ManagedClusterKubeAPIServerUnavailable",
    "Unknown": "ManagedClusterLeaseUpdateStopped",
}
# seconds added to a taint's age to make a tolerationSeconds: expiry before, at (twice as likely) or
# after `now`
EXPIRY_OFFSETS = (-2, -1, 0, 0, 1, 2, 60)
BASE_TIME = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def generate_case(rng: random.Random, case_id: str, probabilities: Probabilities = PROBABILITIES) -> Case:
    """One random valid OCM case; every choice is drawn from `rng`."""
    return _Builder(rng, probabilities).case(case_id)


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with whole seconds, as the API server writes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Builder:
    """Builds one case; holds the draws later objects depend on (clusters, sets, taint times)."""

    def __init__(self, rng: random.Random, probabilities: Probabilities) -> None:
        self.rng = rng
        self.p = probabilities
        self.now = BASE_TIME + timedelta(days=rng.randrange(0, 400), seconds=rng.randrange(0, 86400))
        # every taint of the case with its age in seconds (None without timeAdded)
        self.taints: list[tuple[dict[str, Any], int | None]] = []
        self.set_names: list[str] = []

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def _share(self, *options: tuple[float, T]) -> T | None:
        """One draw split among `options` by their shares; None for what the shares leave over."""
        roll = self.rng.random()
        for share, value in options:
            if roll < share:
                return value
            roll -= share
        return None

    def case(self, case_id: str) -> Case:
        sets = self._cluster_sets()
        self.set_names = [s["metadata"]["name"] for s in sets]
        exclusive = [s["metadata"]["name"] for s in sets if _is_exclusive(s)]
        names = sorted(self.rng.sample(CLUSTER_NAMES, self.rng.randint(1, 12)), key=CLUSTER_NAMES.index)
        clusters = [self._managed_cluster(name, exclusive) for name in names]
        placements = self._placements(len(names))
        namespaces = sorted({p["metadata"]["namespace"] for p in placements} | {self.rng.choice(NAMESPACES)})
        manifests: list[dict[str, Any]] = [*clusters, *sets]
        manifests += self._bindings(namespaces, self.set_names)
        manifests += self._add_on_scores(names)
        manifests += self._decisions(placements, names)
        manifests += placements
        return Case(id=case_id, family="ocm", now=timestamp(self.now), manifests=manifests)

    # --- clusters -------------------------------------------------------------------------------

    def _managed_cluster(self, name: str, exclusive_sets: Sequence[str]) -> dict[str, Any]:
        labels = {
            key: self.rng.choice(values)
            for key, values in LABEL_POOL.items()
            if self.chance(self.p.cluster_label)
        }
        if self.chance(self.p.exclusive_set_label):
            # now and then a set that does not exist (yet)
            missing = not exclusive_sets or self.chance(self.p.missing_set_label)
            labels[CLUSTER_SET_LABEL] = self.rng.choice(MISSING_SET_NAMES if missing else exclusive_sets)
        metadata: dict[str, Any] = {"name": name, "labels": labels}
        if self.chance(self.p.cluster_deleting):
            metadata["deletionTimestamp"] = timestamp(self.now - timedelta(seconds=self.rng.randint(1, 600)))
            metadata["finalizers"] = ["cluster.open-cluster-management.io/api-resource-cleanup"]
        spec: dict[str, Any] = {"hubAcceptsClient": True}
        if self.chance(self.p.cluster_taints):
            spec["taints"] = self._taints()
        status: dict[str, Any] = {}
        claims = [
            {"name": claim, "value": self.rng.choice(values)}
            for claim, values in CLAIM_POOL.items()
            if self.chance(self.p.cluster_claim)
        ]
        if claims:
            status["clusterClaims"] = claims
        allocatable, capacity = self._resources()
        if allocatable:
            status["allocatable"] = allocatable
        if capacity:
            status["capacity"] = capacity
        if self.chance(self.p.cluster_conditions):
            status["conditions"] = [self._available_condition()]
        if self.chance(self.p.cluster_version):
            status["version"] = {"kubernetes": f"v1.{self.rng.randint(27, 31)}.{self.rng.randint(0, 9)}"}
        return {
            "apiVersion": GROUP_VERSION_V1,
            "kind": "ManagedCluster",
            "metadata": metadata,
            "spec": spec,
            "status": status,
        }

    def _taints(self) -> list[dict[str, Any]]:
        taints = []
        for key in self.rng.sample(TAINT_KEYS, self.rng.randint(1, 3)):
            taint: dict[str, Any] = {"key": key, "effect": self.rng.choice(TAINT_EFFECT_DRAWS)}
            value = self.rng.choice(TAINT_VALUES)
            if value:
                taint["value"] = value
            age = None if self.chance(self.p.taint_without_time) else self._age()
            if age is not None and self.chance(self.p.taint_added_later):
                age = -age
            if age is not None:
                taint["timeAdded"] = self._stamp(self.now - timedelta(seconds=age))
            self.taints.append((taint, age))
            taints.append(taint)
        return taints

    def _stamp(self, moment: datetime) -> str:
        """`timestamp(moment)`, now and then with fractional seconds: the API server keeps what a
        manifest writes, and Go's time reads it to the nanosecond."""
        if not self.chance(self.p.fractional_time):
            return timestamp(moment)
        return timestamp(moment).replace("Z", f"{self.rng.choice(SECOND_FRACTIONS)}Z")

    def _age(self) -> int:
        """Seconds before `now`: one of the pool exactly (boundaries) or a point in between."""
        if self.chance(self.p.boundary_time):
            return self.rng.choice(TAINT_AGES)
        return self.rng.randint(1, 7200)

    def _resources(self) -> tuple[dict[str, str | int], dict[str, str | int]]:
        allocatable: dict[str, str | int] = {}
        capacity: dict[str, str | int] = {}
        for resource, pool in (("cpu", CPU_QUANTITIES), ("memory", MEMORY_QUANTITIES)):
            if not self.chance(self.p.allocatable):
                continue
            allocatable[resource] = self.rng.choice(pool)
            if not self.chance(self.p.capacity_missing):
                capacity[resource] = self.rng.choice(pool)
        return allocatable, capacity

    def _available_condition(self) -> dict[str, Any]:
        status = self.rng.choice(CONDITION_STATUSES)
        return {
            "type": "ManagedClusterConditionAvailable",
            "status": status,
            "reason": CONDITION_REASONS[status],
            "message": "generated",
            "lastTransitionTime": timestamp(self.now - timedelta(seconds=self._age())),
        }

    # --- sets, bindings, scores -----------------------------------------------------------------

    def _cluster_sets(self) -> list[dict[str, Any]]:
        count = 0 if self.chance(self.p.no_sets) else self.rng.randint(1, 4)
        sets: list[dict[str, Any]] = []
        if count and self.chance(self.p.global_set):
            sets.append(_cluster_set(GLOBAL_SET, {"selectorType": "LabelSelector", "labelSelector": {}}))
        label_names = list(LABEL_SET_NAMES)
        exclusive_names = list(EXCLUSIVE_SET_NAMES)
        self.rng.shuffle(exclusive_names)
        while len(sets) < count:
            if label_names and self.chance(self.p.label_selector_set):
                name = label_names.pop(self.rng.randrange(len(label_names)))
                selector: dict[str, Any] = {"selectorType": "LabelSelector"}
                if not self.chance(self.p.nil_label_selector):
                    selector["labelSelector"] = self._label_selector(allow_invalid=False)
                sets.append(_cluster_set(name, selector))
            else:
                name = exclusive_names.pop()
                omitted = self.chance(self.p.selector_type_omitted)
                sets.append(
                    _cluster_set(name, None if omitted else {"selectorType": "ExclusiveClusterSetLabel"})
                )
        return sets

    def _bindings(self, namespaces: Sequence[str], set_names: Sequence[str]) -> list[dict[str, Any]]:
        bindings = []
        for namespace in namespaces:
            bound = [name for name in set_names if self.chance(self.p.set_bound)]
            if self.chance(self.p.binding_to_missing_set):
                bound.append(self.rng.choice(MISSING_SET_NAMES))
            bindings += [
                {
                    "apiVersion": GROUP_VERSION_V1BETA2,
                    "kind": "ManagedClusterSetBinding",
                    "metadata": {"namespace": namespace, "name": name},
                    "spec": {"clusterSet": name},
                }
                for name in bound
            ]
        return bindings

    def _add_on_scores(self, cluster_names: Sequence[str]) -> list[dict[str, Any]]:
        scores = []
        for cluster in cluster_names:
            for resource in SCORE_RESOURCES:
                if not self.chance(self.p.add_on_score):
                    continue
                status: dict[str, Any] = {
                    "scores": [
                        {"name": name, "value": self.rng.randint(-100, 100)}
                        for name in self.rng.sample(SCORE_NAMES, self.rng.randint(0, len(SCORE_NAMES)))
                    ]
                }
                if self.chance(self.p.score_valid_until):
                    # expired strictly after validUntil: an offset of 0 is the boundary
                    offset = 0 if self.chance(self.p.boundary_time) else self.rng.randint(-3600, 3600)
                    status["validUntil"] = self._stamp(self.now + timedelta(seconds=offset))
                scores.append(
                    {
                        "apiVersion": GROUP_VERSION_V1ALPHA1,
                        "kind": "AddOnPlacementScore",
                        "metadata": {"namespace": cluster, "name": resource},
                        "status": status,
                    }
                )
        return scores

    # --- placements -----------------------------------------------------------------------------

    def _placements(self, fleet_size: int) -> list[dict[str, Any]]:
        identities = [(ns, name) for ns in NAMESPACES for name in PLACEMENT_NAMES]
        chosen = self.rng.sample(identities, self.rng.randint(1, 3))
        return [self._placement(namespace, name, fleet_size) for namespace, name in chosen]

    def _placement(self, namespace: str, name: str, fleet_size: int) -> dict[str, Any]:
        metadata: dict[str, Any] = {"namespace": namespace, "name": name}
        if self.chance(self.p.scheduling_disabled):
            metadata["annotations"] = {DISABLE_ANNOTATION: "true"}
        spec: dict[str, Any] = {}
        if self.chance(self.p.placement_cluster_sets):
            pool = self.set_names or [GLOBAL_SET]
            listed = self.rng.sample(pool, self.rng.randint(1, len(pool)))
            if self.chance(self.p.missing_cluster_set):
                listed.append(self.rng.choice(MISSING_SET_NAMES))
            spec["clusterSets"] = listed
        if self.chance(self.p.number_of_clusters):
            spec["numberOfClusters"] = self.rng.choice(
                (
                    0,
                    self.rng.randint(1, 3),
                    self.rng.randint(1, fleet_size),
                    fleet_size + self.rng.randint(1, 3),
                )
            )
        if self.chance(self.p.predicates):
            spec["predicates"] = [
                {"requiredClusterSelector": self._cluster_selector()} for _ in range(self.rng.randint(1, 3))
            ]
        if self.chance(self.p.prioritizer_policy):
            spec["prioritizerPolicy"] = self._prioritizer_policy()
        if self.chance(self.p.tolerations):
            spec["tolerations"] = [self._toleration() for _ in range(self.rng.randint(1, 3))]
        if self.chance(self.p.decision_strategy):
            spec["decisionStrategy"] = self._decision_strategy()
        if self.chance(self.p.spread_policy):
            spec["spreadPolicy"] = {
                "spreadConstraints": [
                    {
                        "topologyKey": self.rng.choice(list(LABEL_POOL)),
                        "topologyKeyType": "Label",
                        "maxSkew": self.rng.randint(1, 3),
                        "whenUnsatisfiable": self.rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                    }
                ]
            }
        return {"apiVersion": GROUP_VERSION_V1BETA1, "kind": "Placement", "metadata": metadata, "spec": spec}

    def _cluster_selector(self) -> dict[str, Any]:
        selector: dict[str, Any] = {}
        if self.chance(self.p.label_selector):
            selector["labelSelector"] = self._label_selector(allow_invalid=True)
        if self.chance(self.p.claim_selector):
            selector["claimSelector"] = {
                "matchExpressions": self._requirements(CLAIM_POOL, allow_invalid=True)
            }
        if self.chance(self.p.cel_selector):
            selector["celSelector"] = {"celExpressions": [self._cel() for _ in range(self.rng.randint(1, 2))]}
        return selector

    def _label_selector(self, *, allow_invalid: bool) -> dict[str, Any]:
        selector: dict[str, Any] = {}
        if self.chance(self.p.match_labels):
            keys = self.rng.sample(list(LABEL_POOL), self.rng.randint(1, 2))
            selector["matchLabels"] = {
                key: self.rng.choice(LABEL_POOL[key] + ABSENT_VALUES[:1]) for key in keys
            }
        if not selector or self.chance(self.p.match_expressions):
            pool = {**LABEL_POOL, CLUSTER_SET_LABEL: EXCLUSIVE_SET_NAMES}
            selector["matchExpressions"] = self._requirements(pool, allow_invalid=allow_invalid)
        return selector

    def _requirements(self, pool: dict[str, tuple[str, ...]], *, allow_invalid: bool) -> list[dict[str, Any]]:
        requirements = []
        count = 2 if self.chance(self.p.second_requirement) else 1
        for key in self.rng.sample(list(pool), count):
            operator = self.rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
            requirement: dict[str, Any] = {"key": key, "operator": operator}
            if operator in ("In", "NotIn"):
                # claim values that are no label value (a URL, JSON) cannot appear in a selector
                values = tuple(v for v in pool[key] if _LABEL_VALUE.fullmatch(v)) + ABSENT_VALUES
                requirement["values"] = self.rng.sample(values, self.rng.randint(1, min(3, len(values))))
            requirements.append(requirement)
        if allow_invalid and self.chance(self.p.invalid_selector):
            requirements.append(self.rng.choice(INVALID_REQUIREMENTS))
        return requirements

    def _cel(self) -> str:
        if self.chance(self.p.cel_compile_error):
            return self.rng.choice(CEL_COMPILE_ERRORS)
        if self.chance(self.p.cel_runtime_error):
            return self.rng.choice(CEL_RUNTIME_ERRORS)
        library = self.rng.choice(list(CEL_TEMPLATES))
        return self.rng.choice(CEL_TEMPLATES[library]).render(self.rng)

    def _prioritizer_policy(self) -> dict[str, Any]:
        policy: dict[str, Any] = {}
        mode = self._share(
            (self.p.misconfigured_prioritizer, self.rng.choice(UNKNOWN_MODES)),
            (self.p.mode_additive, "Additive"),
            (self.p.mode_exact, "Exact"),
        )
        if mode is not None:
            policy["mode"] = mode
        policy["configurations"] = [self._prioritizer_config() for _ in range(self.rng.randint(0, 4))]
        return policy

    def _prioritizer_config(self) -> dict[str, Any]:
        coordinate: dict[str, Any]
        if self.chance(self.p.misconfigured_prioritizer):
            # an AddOn coordinate without addOn, or a builtIn name the scheduler does not know
            coordinate = self.rng.choice(
                ({"type": "AddOn"}, {"type": "BuiltIn", "builtIn": self.rng.choice(UNKNOWN_PRIORITIZERS)})
            )
        elif self.chance(self.p.add_on_config):
            resource = self.rng.choice((*SCORE_RESOURCES, MISSING_SCORE_RESOURCE))
            add_on = {"resourceName": resource, "scoreName": self.rng.choice(SCORE_NAMES)}
            coordinate = {"type": "AddOn", "addOn": add_on}
        else:
            coordinate = {"builtIn": self.rng.choice(BUILTIN_PRIORITIZERS)}
            if not self.chance(self.p.type_omitted):
                coordinate["type"] = "BuiltIn"
        config: dict[str, Any] = {"scoreCoordinate": coordinate}
        if not self.chance(self.p.weight_omitted):
            config["weight"] = self.rng.choice((0, -1, 1, self.rng.randint(-10, 10)))
        return config

    def _toleration(self) -> dict[str, Any]:
        # most tolerations aim at a taint of the case: they tolerate it, or miss it by value or effect
        aimed = bool(self.taints) and self.chance(self.p.toleration_aimed)
        taint, age = self.rng.choice(self.taints) if aimed else ({}, None)
        toleration: dict[str, Any] = {}
        operator = self.rng.choice(("Equal", "Exists", None))  # None: the CRD default, Equal
        if operator is not None:
            toleration["operator"] = operator
        # the scheduler refuses an Equal without a key and an Exists with a value (Misconfigured)
        misconfigured = self.chance(self.p.misconfigured_toleration)
        key = taint.get("key") or self.rng.choice(TAINT_KEYS)
        if operator == "Exists":
            if self.chance(self.p.exists_with_key):
                toleration["key"] = key
            if misconfigured:
                toleration["value"] = self.rng.choice(TAINT_VALUES[1:])
        elif not misconfigured:
            toleration["key"] = key
            if value := taint.get("value", "") if aimed else self.rng.choice(TAINT_VALUES):
                toleration["value"] = value
        if self.chance(self.p.toleration_effect):
            toleration["effect"] = taint.get("effect") or self.rng.choice(TAINT_EFFECTS)
        if self.chance(self.p.toleration_seconds):
            toleration["tolerationSeconds"] = self._toleration_seconds(age)
        return toleration

    def _toleration_seconds(self, age: int | None) -> int:
        """Now and then a value at Go's Duration limits; else one that aims the expiry (timeAdded +
        seconds) just before, at or after `now`."""
        if self.chance(self.p.duration_edge_seconds):
            return self.rng.choice(DURATION_EDGE_SECONDS)
        if age is None:
            age = self.rng.choice([age for _, age in self.taints if age is not None] or list(TAINT_AGES))
        return age + self.rng.choice(EXPIRY_OFFSETS)

    def _decision_strategy(self) -> dict[str, Any]:
        group_strategy: dict[str, Any] = {}
        size = self._share(
            # a numeric string passes the CRD pattern but is no percentage: Misconfigured
            (self.p.group_size_numeric_string, str(self.rng.randint(1, 4))),
            (self.p.group_size_int, self.rng.randint(0, 4)),
            (self.p.group_size_percent, self.rng.choice(GROUP_PERCENTS)),
        )
        if size is not None:
            group_strategy["clustersPerDecisionGroup"] = size
        if self.chance(self.p.decision_groups):
            group_strategy["decisionGroups"] = [self._decision_group() for _ in range(self.rng.randint(1, 3))]
        return {"groupStrategy": group_strategy}

    def _decision_group(self) -> dict[str, Any]:
        selector: dict[str, Any] = {}
        if self.chance(self.p.group_label_selector):
            selector["labelSelector"] = self._label_selector(allow_invalid=True)
        if self.chance(self.p.group_claim_selector):
            selector["claimSelector"] = {
                "matchExpressions": self._requirements(CLAIM_POOL, allow_invalid=True)
            }
        return {"groupName": self.rng.choice(GROUP_NAMES), "groupClusterSelector": selector}

    # --- existing decisions ---------------------------------------------------------------------

    def _decisions(
        self, placements: Sequence[dict[str, Any]], cluster_names: Sequence[str]
    ) -> list[dict[str, Any]]:
        decisions = []
        # a cluster no longer in the fleet may still be named by an old decision
        pool = [*cluster_names, "gone-cluster"]
        for placement in placements:
            namespace, name = placement["metadata"]["namespace"], placement["metadata"]["name"]
            if not self.chance(self.p.existing_decisions):
                continue
            chosen = sorted(self.rng.sample(pool, self.rng.randint(0, min(len(pool), 5))))
            split = self.rng.randint(0, len(chosen))
            pages = [chosen[:split], chosen[split:]] if self.chance(self.p.decision_pages) else [chosen]
            for index, page in enumerate(pages):
                group = self.rng.choice(("", *GROUP_NAMES))
                decisions.append(
                    _decision(namespace, f"{name}-decision-{index + 1}", name, group, index, page)
                )
            if self.chance(self.p.stale_decision):
                decisions.append(_decision(namespace, f"{name}-decision-9", name, "", 9, []))
        if self.chance(self.p.other_decisions):
            # decisions of placements outside the case (another namespace, or none) count for Balance
            for index in range(self.rng.randint(1, 2)):
                namespace = self.rng.choice(("other", *NAMESPACES))
                labelled = self.chance(self.p.other_decision_labelled)
                owner = self.rng.choice(("other", *PLACEMENT_NAMES)) if labelled else None
                clusters = sorted(self.rng.sample(pool, self.rng.randint(1, min(len(pool), 4))))
                decisions.append(_decision(namespace, f"external-{index}", owner, "", 0, clusters))
        return decisions


def _is_exclusive(cluster_set: dict[str, Any]) -> bool:
    selector = cluster_set["spec"].get("clusterSelector")
    return selector is None or selector["selectorType"] == "ExclusiveClusterSetLabel"


def _cluster_set(name: str, selector: dict[str, Any] | None) -> dict[str, Any]:
    spec = {} if selector is None else {"clusterSelector": selector}
    return {
        "apiVersion": GROUP_VERSION_V1BETA2,
        "kind": "ManagedClusterSet",
        "metadata": {"name": name},
        "spec": spec,
    }


def _decision(
    namespace: str, name: str, placement: str | None, group: str, group_index: int, clusters: Sequence[str]
) -> dict[str, Any]:
    labels = {GROUP_NAME_LABEL: group, GROUP_INDEX_LABEL: str(group_index)}
    if placement is not None:
        labels[PLACEMENT_LABEL] = placement
    return {
        "apiVersion": GROUP_VERSION_V1BETA1,
        "kind": "PlacementDecision",
        "metadata": {"namespace": namespace, "name": name, "labels": labels},
        "status": {"decisions": [{"clusterName": cluster, "reason": ""} for cluster in clusters]},
    }


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?")

# Requirements the CRD admits (operator and values are free strings) but a LabelSelector refuses, so
# the upstream scheduler reports the placement Misconfigured.
INVALID_REQUIREMENTS: tuple[dict[str, Any], ...] = (
    {"key": "env", "operator": "In", "values": []},
    {"key": "env", "operator": "Exists", "values": ["prod"]},
    {"key": "env", "operator": "Equals", "values": ["prod"]},
    {"key": "bad key!", "operator": "Exists"},
    {"key": "env", "operator": "In", "values": ["not a valid value"]},
)

# --- CEL ----------------------------------------------------------------------------------------------


class Raw(str):
    """A slot value written into an expression as is (a method name, an operator), not as a string."""

    __slots__ = ()


SlotValue = str | int


@dataclass(frozen=True, slots=True)
class Template:
    """A CEL expression with slots: `text` is a `str.format` string over `EXPRESSION_NAMES` and `slots`.

    Each slot takes one of its values at random; a string value becomes a CEL string literal, an int
    or a `Raw` value is written as is.
    """

    text: str
    slots: dict[str, tuple[SlotValue, ...]] = field(default_factory=dict)

    def render(self, rng: random.Random) -> str:
        values = {name: _literal(rng.choice(choices)) for name, choices in self.slots.items()}
        return self.text.format(**EXPRESSION_NAMES, **values)


def _literal(value: SlotValue) -> str:
    if isinstance(value, Raw | int):
        return str(value)
    # a JSON string literal is a valid CEL double-quoted string literal
    return json.dumps(value)


EXPRESSION_NAMES = {
    "mc": "managedCluster",
    "name": "managedCluster.metadata.name",
    "labels": "managedCluster.metadata.labels",
    "claims": "managedCluster.status.clusterClaims",
    "alloc": "managedCluster.status.allocatable",
}

_LABEL_KEYS = tuple(LABEL_POOL)
_LABEL_VALUES = tuple(value for values in LABEL_POOL.values() for value in values) + ABSENT_VALUES[:1]
_CLUSTERS = CLUSTER_NAMES[:13]
_SCORE_RESOURCES = (*SCORE_RESOURCES, MISSING_SCORE_RESOURCE)
_PLATFORMS = CLAIM_POOL["platform.open-cluster-management.io"]
_VERSIONS = ("4.9.0", "4.14.0", "4.15.0")
_IP_TESTS = tuple(
    Raw(test)
    for test in (
        "isLoopback",
        "isGlobalUnicast",
        "isUnspecified",
        "isLinkLocalUnicast",
        "isLinkLocalMulticast",
    )
)
_FORMATS = tuple(
    Raw(name) for name in ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "labelValue")
)
_COMPARE = (Raw("<"), Raw(">="), Raw("=="))


def _claim(claim: str, test: str, slots: dict[str, tuple[SlotValue, ...]] | None = None) -> Template:
    """A template true when the cluster has claim `claim` and `test` (over `c.value`) holds for it."""
    return Template(f"{{claims}}.exists(c, c.name == {_literal(claim)} && {test})", slots or {})


# Each library's templates read the pools the clusters are built from, so an expression holds on some
# clusters and not on others; some fail at run time on clusters without the field they read, as they do
# upstream. A library is what upstream registers for celSelector (pkg/placement/helpers NewEnv):
# cel-go's standard macros, strings extension and optional types, the Kubernetes lists, regex, URL, IP,
# CIDR, format, quantity and semver libraries, and sdk-go's JSON and ManagedCluster (scores) libraries.
CEL_TEMPLATES: dict[str, tuple[Template, ...]] = {
    "macros": (
        _claim("platform.open-cluster-management.io", "c.value == {value}", {"value": _PLATFORMS}),
        Template("{claims}.exists_one(c, c.name.endsWith({suffix}))", {"suffix": (".io", ".com")}),
        Template(
            "{claims}.map(c, c.name).filter(n, n.endsWith('.example.com')).size() >= {n}", {"n": (0, 1, 2, 3)}
        ),
        Template("{labels}.all(k, k != 'tier' || {labels}[k] != {tier})", {"tier": LABEL_POOL["tier"]}),
        Template(
            "'env' in {labels} && {labels}['env'] in [{a}, {b}]",
            {"a": LABEL_POOL["env"], "b": (*LABEL_POOL["env"], *ABSENT_VALUES)},
        ),
        Template("has({labels}.{key})", {"key": (Raw("env"), Raw("region"), Raw("tier"), Raw("vendor"))}),
        Template(
            "{name}.matches({pattern})", {"pattern": ("^cluster[0-9]$", "^cluster1", "-", "^edge-[ab][0-9]$")}
        ),
        Template(
            "{mc}.status.conditions.exists(c, c.type == 'ManagedClusterConditionAvailable'"
            " && c.status == {status})",
            {"status": ("True", "False", "Unknown")},
        ),
    ),
    "strings": (
        Template(
            "{labels}[?'vendor'].orValue('').lowerAscii() == {text}", {"text": ("openshift", "aks", "")}
        ),
        Template("{name}.upperAscii().startsWith({text})", {"text": ("CLUSTER1", "EDGE", "LOCAL")}),
        Template("{name}.replace('cluster', 'c') == {text}", {"text": ("c1", "c2", "c10", "local-c")}),
        Template("{labels}[?'region'].orValue('x').split('-').size() == {n}", {"n": (1, 2, 3)}),
        Template(
            "{name}.substring({start}, {end}) == {text}",
            {"start": (0, 1, 3), "end": (3, 7, 8, 11), "text": ("clus", "cluster", "ster1", "uster1")},
        ),
        Template("{name}.charAt({n}) == {text}", {"n": (0, 7, 8, 10), "text": ("1", "c", "-", "")}),
        Template(
            "{name}.indexOf({text}) {op} {n}", {"text": ("1", "e", "-"), "op": _COMPARE, "n": (-1, 0, 3, 7)}
        ),
        Template(
            "{name}.lastIndexOf({text}) {op} {n}", {"text": ("1", "e"), "op": _COMPARE, "n": (-1, 3, 8)}
        ),
        Template("(' ' + {name} + '  ').trim() == {text}", {"text": _CLUSTERS}),
        Template("[{name}, 'x'].join('-') == {text}", {"text": ("cluster1-x", "cluster2-x", "edge-a1-x")}),
        Template(
            "'%s/%d'.format([{name}, size({labels})]) == {text}", {"text": ("cluster1/2", "cluster2/3")}
        ),
        Template("strings.quote({name}) == {text}", {"text": tuple(json.dumps(name) for name in _CLUSTERS)}),
        Template("{name}.reverse().startsWith({text})", {"text": ("1", "2", "0", "1a")}),
    ),
    "lists": (
        Template("{claims}.map(c, c.name).isSorted()"),
        Template(
            "{mc}.scores({resource}).map(s, s.value).sum() {op} {n}",
            {"resource": _SCORE_RESOURCES, "op": _COMPARE, "n": (-20, 0, 50)},
        ),
        Template(
            "{mc}.scores({resource}).map(s, s.value).{fn}() {op} {n}",
            {"resource": _SCORE_RESOURCES, "fn": (Raw("min"), Raw("max")), "op": _COMPARE, "n": (-50, 0, 50)},
        ),
        Template(
            "{claims}.map(c, c.name).indexOf({claim}) == {n}",
            {"claim": tuple(CLAIM_POOL), "n": (-1, 0, 1, 2)},
        ),
        Template("{claims}.map(c, c.value).lastIndexOf({value}) >= 0", {"value": _PLATFORMS}),
        Template(
            "[{a}, {b}, {c}].isSorted() && [{a}, {b}].sum() > {c}", {"a": (0, 1, 2), "b": (1, 2), "c": (1, 3)}
        ),
    ),
    "regex": (
        Template("{name}.find('[0-9]+') == {text}", {"text": ("1", "2", "10", "")}),
        Template("{labels}[?'region'].orValue('').findAll('[0-9]').size() == {n}", {"n": (0, 1, 2)}),
        Template("{name}.findAll('[a-z]', {limit}).size() == {n}", {"limit": (-1, 0, 2), "n": (0, 2, 7)}),
        _claim(
            "version.openshift.io",
            "c.value.find('^[0-9]+[.][0-9]+') == {text}",
            {"text": ("4.15", "4.9", "")},
        ),
    ),
    "ip": (
        _claim("ip.example.com", "isIP(c.value) && ip(c.value).family() == {n}", {"n": (4, 6)}),
        _claim("ip.example.com", "ip(c.value).{test}()", {"test": _IP_TESTS}),
        _claim("ip.example.com", "ip.isCanonical(c.value)"),
        _claim("ip.example.com", "string(ip(c.value)) == {text}", {"text": ("10.0.1.5", "fd00::1")}),
    ),
    "cidr": (
        _claim(
            "ip.example.com", "cidr({cidr}).containsIP(c.value)", {"cidr": CLAIM_POOL["cidr.example.com"][:3]}
        ),
        _claim(
            "cidr.example.com", "isCIDR(c.value) && cidr(c.value).prefixLength() <= {n}", {"n": (8, 16, 64)}
        ),
        _claim(
            "cidr.example.com", "cidr(c.value).containsCIDR({cidr})", {"cidr": ("10.1.0.0/16", "fd00::/80")}
        ),
        _claim("ip.example.com", "cidr('10.0.0.0/8').containsIP(ip(c.value))"),
        _claim("cidr.example.com", "string(cidr(c.value).masked()) == c.value"),
        _claim("cidr.example.com", "cidr(c.value).ip().family() == {n}", {"n": (4, 6)}),
    ),
    "url": (
        _claim(
            "url.example.com",
            "isURL(c.value) && url(c.value).getScheme() == {text}",
            {"text": ("https", "http")},
        ),
        _claim(
            "url.example.com",
            "url(c.value).getHost() == {text}",
            {"text": ("api.c1.example.com:6443", "10.0.0.1")},
        ),
        _claim("url.example.com", "url(c.value).getHostname() == 'api.c1.example.com'"),
        _claim("url.example.com", "url(c.value).getPort() == {text}", {"text": ("6443", "")}),
        _claim("url.example.com", "url(c.value).getEscapedPath() == {text}", {"text": ("/v1/path", "/")}),
        _claim("url.example.com", "url(c.value).getQuery()['x'] == ['1']"),
    ),
    "format": (
        Template("!format.{format}().validate({name}).hasValue()", {"format": _FORMATS}),
        _claim(
            "url.example.com",
            "format.named({format}).value().validate(c.value) == optional.none()",
            {"format": ("uri", "dns1123Subdomain", "byte")},
        ),
        Template("format.named({format}).hasValue()", {"format": ("uuid", "date", "nope")}),
        Template(
            "format.datetime().validate({text}).hasValue()", {"text": ("2024-05-01T12:00:00Z", "yesterday")}
        ),
    ),
    "optional": (
        Template(
            "{labels}[?{key}].orValue('none') == {value}",
            {"key": _LABEL_KEYS, "value": (*_LABEL_VALUES, "none")},
        ),
        Template(
            "{mc}.?status.?allocatable.?{resource}.hasValue()",
            {"resource": (Raw("cpu"), Raw("memory"), Raw("gpu"))},
        ),
        Template(
            "{mc}.?status.?version.?kubernetes.orValue('').startsWith({text})", {"text": ("v1.2", "v1.3")}
        ),
        Template("{mc}.?status.?version.optMap(v, v.kubernetes).orValue('') != ''"),
        Template("optional.of({name}).value() == {text}", {"text": _CLUSTERS}),
        Template(
            "{labels}[?'tier'].or(optional.of('bronze')).value() == {tier}", {"tier": LABEL_POOL["tier"]}
        ),
        Template("optional.ofNonZeroValue({labels}[?'env'].orValue('')).hasValue()"),
        Template(
            "{claims}.{fn}().?name.orValue('') == {claim}",
            {"fn": (Raw("first"), Raw("last")), "claim": tuple(CLAIM_POOL)},
        ),
    ),
    "quantity": (
        Template("quantity({alloc}.cpu).isGreaterThan(quantity({q}))", {"q": ("2", "500m", "4")}),
        _claim(
            "quota.example.com",
            "isQuantity(c.value) && quantity(c.value).asApproximateFloat() > {x}",
            {"x": (Raw("1.0"), Raw("0.4"))},
        ),
        Template(
            "quantity({alloc}.memory).compareTo(quantity({q})) {op} 0", {"q": ("4Gi", "1G"), "op": _COMPARE}
        ),
        Template("quantity({alloc}.cpu).add(quantity('1')).isLessThan(quantity({q}))", {"q": ("8", "2500m")}),
        Template("sign(quantity({alloc}.cpu).sub({n})) == {sign}", {"n": (1, 2, 4), "sign": (-1, 0, 1)}),
        Template(
            "quantity({alloc}.memory).isInteger() && quantity({alloc}.memory).asInteger() > {n}",
            {"n": (10**9, 2**33)},
        ),
        # the ManagedCluster reaches CEL with its quantities in canonical form ("4096Mi" reads "4Gi")
        Template("{alloc}.memory == {q}", {"q": tuple(str(q) for q in MEMORY_QUANTITIES) + ("4Gi", "1G")}),
    ),
    "json": (
        _claim("json.example.com", "c.value.parseJSON().tier == {tier}", {"tier": LABEL_POOL["tier"]}),
        _claim("json.example.com", "c.value.parseJSON().size() == {n}", {"n": (2, 3)}),
        Template("'{{\"weight\": {n}}}'.parseJSON().weight == {m}", {"n": (1, 2), "m": (Raw("2.0"), 2)}),
    ),
    "scores": (
        Template(
            "{mc}.scores({resource}).exists(s, s.name == {score} && s.value >= {n})",
            {"resource": _SCORE_RESOURCES, "score": SCORE_NAMES, "n": (-50, 0, 50)},
        ),
        Template("{mc}.scores({resource}).size() > 0", {"resource": _SCORE_RESOURCES}),
        Template(
            "{mc}.scores({resource}).filter(s, s.name == {score}).all(s, s.value < {n})",
            {"resource": _SCORE_RESOURCES, "score": SCORE_NAMES, "n": (-50, 0, 50)},
        ),
    ),
    "semver": (
        _claim(
            "version.openshift.io",
            "isSemver(c.value) && semver(c.value).isGreaterThan(semver({version}))",
            {"version": _VERSIONS},
        ),
        _claim(
            "version.openshift.io",
            "semver(c.value).{part}() >= {n}",
            {
                "part": (Raw("major"), Raw("minor"), Raw("patch")),
                "n": (0, 2, 4, 15),
            },
        ),
        _claim(
            "version.openshift.io", "semver(c.value).compareTo(semver('4.15.0')) == {n}", {"n": (-1, 0, 1)}
        ),
        _claim(
            "version.openshift.io", "semver(c.value).isLessThan(semver({version}))", {"version": _VERSIONS}
        ),
        Template("semver({mc}.status.version.kubernetes.substring(1)).minor() >= {n}", {"n": (27, 29, 31)}),
    ),
}

# expressions the upstream environment refuses to compile: the placement is Misconfigured
CEL_COMPILE_ERRORS = (
    "managedCluster.metadata.labels['env'] ==",
    "noSuchVariable == 1",
    "managedCluster.metadata.name.noSuchFunction()",
    # the semver library upstream registers is its first version, without the normalising overload
    "semver('1.2.3', true).major() == 1",
    "1 == 'one'",
    "managedCluster.metadata.name.startsWith(1)",
    # sign is a global function of the quantity library, not a method
    "quantity('1').sign() == 1",
)
# expressions that compile but fail or give a non-boolean on every cluster: no cluster matches
CEL_RUNTIME_ERRORS = (
    "managedCluster.metadata.labels['absent-key'] == 'x'",
    "int(managedCluster.metadata.name) > 0",
    "managedCluster.metadata.name",
    "1 / (size(managedCluster.metadata.labels) - size(managedCluster.metadata.labels)) == 0",
    "ip('not-an-ip').family() == 4",
)
