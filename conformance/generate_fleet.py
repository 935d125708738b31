"""Random, valid KubeFleet cases: MemberClusters, ClusterResourcePlacements and their bindings.

`generate_case(rng, case_id)` draws one small case (1-12 MemberClusters, 1-3 CRPs, existing
ClusterResourceBindings) that KubeFleet's CRD schemas and validating webhook admit, with every default
the mutating webhook fills sometimes left out. Every random choice comes from `rng`, so a seed replays
the same cases. `FEATURES` holds how often each feature is drawn; the value pools are small on purpose
so that label selectors, property selectors and sorters hit, miss and tie, and the time offsets sit on
both sides of (and exactly on) the eligibility checker's five-minute timeouts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from conformance.cases import Case
from placement.scheduler.quantity import parse_quantity

CLUSTER_API = "cluster.kubernetes-fleet.io/v1beta1"
PLACEMENT_API = "placement.kubernetes-fleet.io/v1beta1"
FLEET_PREFIX = "kubernetes-fleet.io/"
PARENT_LABEL = FLEET_PREFIX + "parent-CRP"
PREVIOUS_STATE_ANNOTATION = FLEET_PREFIX + "previous-binding-state"
MEMBER_CLUSTER_FINALIZER = FLEET_PREFIX + "membercluster-finalizer"
BINDING_CLEANUP_FINALIZER = FLEET_PREFIX + "scheduler-crb-cleanup"
WORK_CLEANUP_FINALIZER = FLEET_PREFIX + "work-cleanup"
RESOURCE_PREFIX = "resources.kubernetes-fleet.io/"
NODE_COUNT = FLEET_PREFIX + "node-count"

# How often each feature is drawn (a probability per opportunity).
FEATURES: dict[str, float] = {
    "policy_omitted": 0.08,  # no spec.policy at all: the webhook defaults it to PickAll
    "required_affinity": 0.55,
    "preferred_affinity": 0.6,
    "listed_weight": 0.7,  # PickN only; the webhook refuses preferred terms on PickAll
    "term_label_selector": 0.7,
    "term_property_selector": 0.5,
    "term_property_range": 0.3,  # a Gt/Ge and a Lt/Le requirement on one property
    "term_property_contradiction": 0.2,  # ... or two that no value satisfies together
    "preference_label_selector": 0.5,
    "preference_property_sorter": 0.6,
    "status_property": 0.5,  # a selector or sorter on status.properties rather than resource usage
    "error_property": 0.03,  # admitted by the webhook, yet the scheduler aborts on it
    "match_labels": 0.5,
    "match_expressions": 0.6,
    "topology_spread": 0.5,  # PickN only
    "max_skew_omitted": 0.25,
    "when_unsatisfiable_omitted": 0.25,
    "tolerations": 0.45,
    "toleration_equal": 0.5,  # else Exists
    "toleration_operator_omitted": 0.2,
    "exists_with_key": 0.7,  # else an Exists toleration of every taint
    "toleration_effect": 0.5,
    "label_present": 0.75,
    "taints": 0.3,
    "cluster_leaving": 0.08,
    "second_agent": 0.15,  # a non-member agent next to the member agent: the checker ignores it
    "member_conditions": 0.5,
    "joined_missing": 0.5,  # a member agent that has not joined: no Joined condition at all
    "node_count": 0.8,
    "custom_property": 0.5,
    "non_numeric_property": 0.3,
    "resource_usage_kind": 0.7,  # per capacity / allocatable / available
    "resource_present": 0.8,  # per resource name inside one of them
    "bindings": 0.65,
    "binding_per_cluster": 0.4,
    "binding_obsolete": 0.2,
    "binding_deleting": 0.1,
    "second_finalizer": 0.5,  # a deleting binding outlives the scheduler dropping its finalizer
    "binding_duplicate_deleting": 0.05,  # a deleting binding next to a live one for the same cluster
    "binding_score": 0.7,
    "binding_previous_state": 0.85,  # without it, re-picking the cluster is an upstream error
    "binding_gone_cluster": 0.25,
    "foreign_bindings": 0.2,  # bindings of a CRP that is not in the case
    "pick_fixed_missing_name": 0.4,
}
PLACEMENT_TYPES: dict[str, float] = {"PickAll": 0.3, "PickN": 0.5, "PickFixed": 0.2}
# PickN numberOfClusters: none, up to the fleet size, or more clusters than the fleet has
NUMBER_OF_CLUSTERS: dict[str, float] = {"zero": 0.12, "within fleet": 0.63, "above fleet": 0.25}
BINDING_STATES: dict[str, float] = {"Scheduled": 0.35, "Bound": 0.45, "Unscheduled": 0.2}
# The member agent's situation: one eligible profile and one per way the eligibility checker refuses.
ELIGIBILITY: dict[str, float] = {
    "eligible": 0.7,
    "unhealthy_briefly": 0.08,  # Healthy not True for at most five minutes: still eligible
    "no_member_agent": 0.05,
    "stale_heartbeat": 0.08,
    "not_joined": 0.07,
    "no_healthy_condition": 0.04,
    "unhealthy_long": 0.06,
}

MAX_CLUSTERS = 12
MAX_PLACEMENTS = 3
GONE_CLUSTERS = ("member-13", "member-20")  # named by bindings and PickFixed, never created
FOREIGN_CRP = "retired-app"
FIVE_MINUTES = 300
# Heartbeat and health-transition ages in seconds; 300 is the checker's timeout (a strict ">" test).
FRESH_AGES = (-30, 0, 1, 45, 120, 299, FIVE_MINUTES)
STALE_AGES = (FIVE_MINUTES + 1, 600, 3600, 86400)

LABELS: dict[str, tuple[str, ...]] = {
    "region": ("eastus", "westus", "westeurope"),
    "environment": ("production", "staging", "development"),
    "tier": ("gold", "silver"),
    "topology.kubernetes.io/zone": ("1", "2", "3"),
    "fleet.example.com/team": ("a", "b"),
}
LABEL_MISSES: dict[str, tuple[str, ...]] = {"region": ("southindia",), "tier": ("bronze",)}
ABSENT_LABEL_KEY = "decommissioned"
TAINTS = (("maintenance", ""), ("maintenance", "true"), ("dedicated", "gpu"), ("example.com/spot", "true"))

# Property pools: equal values spelled differently ("4" and "4000m") compare equal upstream.
CUSTOM_PROPERTIES: dict[str, tuple[str, ...]] = {
    NODE_COUNT: ("1", "2", "3", "3", "5", "8", "12"),
    "kubernetes.azure.com/per-cpu-core-cost": ("0.052", "0.104", "0.104", "0.250"),
    "kubernetes.azure.com/per-gb-memory-cost": ("0.006", "0.013", "0.013"),
    "kubernetes.azure.com/vm-sizes/Standard_D4s_v3/count": ("0", "2", "4"),
}
NON_NUMERIC_PROPERTY = ("k8s.io/k8s-version", ("v1.29.4", "v1.30.1"))
RESOURCES: dict[str, tuple[str, ...]] = {
    "cpu": ("2", "4", "4000m", "3500m", "8", "15.5"),
    "memory": ("8Gi", "16Gi", "16384Mi", "17179869184", "32G", "1.5e10", "64Gi"),
    "pods": ("110", "250", "0.11k"),
}
CAPACITY_KINDS = {"total": "capacity", "allocatable": "allocatable", "available": "available"}
# Values a property selector compares with, around the pools above.
SELECTOR_VALUES: dict[str, tuple[str, ...]] = {
    NODE_COUNT: ("0", "2", "3", "5", "10"),
    "kubernetes.azure.com/per-cpu-core-cost": ("0.1", "0.104", "104m", "1"),
    "kubernetes.azure.com/per-gb-memory-cost": ("0.01", "13m"),
    "kubernetes.azure.com/vm-sizes/Standard_D4s_v3/count": ("0", "1", "4"),
    "cpu": ("1", "3.5", "4", "4000m", "8", "100"),
    "memory": ("8Gi", "16Gi", "17179869184", "20G", "1Ti"),
    "pods": ("110", "200", "1k"),
}
# Admitted by the webhook, refused by the scheduler: a value that is no quantity, a resource name
# with a dash (upstream splits "<capacity>-<resource>" into exactly two parts).
ERROR_PROPERTIES = (NON_NUMERIC_PROPERTY[0], RESOURCE_PREFIX + "available-ephemeral-storage")
# Operator pairs on one property that no value satisfies when the first compares with the larger of two
# drawn values and the second with the smaller (Eq/Ne: both with the smaller); two spellings of one
# value ("4", "4000m") still meet at that value under Ge/Le and Eq/Eq.
CONTRADICTIONS = (("Gt", "Lt"), ("Ge", "Lt"), ("Gt", "Le"), ("Ge", "Le"), ("Eq", "Ne"), ("Eq", "Eq"))
WEIGHTS = (-100, -50, -7, -1, 0, 1, 7, 8, 20, 40, 100)


def generate_case(rng: random.Random, case_id: str) -> Case:
    """One random valid Fleet case: MemberClusters, then CRPs, then existing bindings."""
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC) + timedelta(seconds=rng.randrange(0, 365 * 86400))
    clusters = [
        _member_cluster(rng, f"member-{index}", now) for index in range(1, rng.randint(1, MAX_CLUSTERS) + 1)
    ]
    names = [cluster["metadata"]["name"] for cluster in clusters]
    placements = [_placement(rng, f"crp-{index}", names) for index in range(rng.randint(1, MAX_PLACEMENTS))]
    bindings: list[dict[str, Any]] = []
    used: set[str] = set()
    for placement in placements:
        if _chance(rng, "bindings"):
            bindings.extend(_bindings(rng, placement["metadata"]["name"], names, now, used))
    if _chance(rng, "foreign_bindings"):
        bindings.extend(_bindings(rng, FOREIGN_CRP, names, now, used))
    rng.shuffle(bindings)
    return Case(id=case_id, family="fleet", now=_stamp(now), manifests=[*clusters, *placements, *bindings])


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ago(now: datetime, seconds: int) -> str:
    return _stamp(now - timedelta(seconds=seconds))


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _chance(rng: random.Random, feature: str) -> bool:
    return rng.random() < FEATURES[feature]


def _sample(rng: random.Random, items: Sequence[Any], low: int, high: int) -> list[Any]:
    return rng.sample(list(items), min(rng.randint(low, high), len(items)))


# --- MemberCluster ---------------------------------------------------------------------------------


def _member_cluster(rng: random.Random, name: str, now: datetime) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": _cluster_labels(rng)}
    if _chance(rng, "cluster_leaving"):
        # an object being deleted keeps a finalizer until the member agent has left
        metadata["deletionTimestamp"] = _ago(now, rng.choice((0, 30, 900)))
        metadata["finalizers"] = [MEMBER_CLUSTER_FINALIZER]
    spec: dict[str, Any] = {
        "identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"},
        "heartbeatPeriodSeconds": 60,
    }
    if _chance(rng, "taints"):
        spec["taints"] = [
            {"key": key, "value": value, "effect": "NoSchedule"}
            if value
            else {"key": key, "effect": "NoSchedule"}
            for key, value in _sample(rng, TAINTS, 1, 2)
        ]
    status: dict[str, Any] = {
        "agentStatus": _agent_statuses(rng, now),
        "properties": _properties(rng, now),
        "resourceUsage": _resource_usage(rng, now),
    }
    if _chance(rng, "member_conditions"):
        # the hub's own view of the member; the eligibility checker reads only the agent's report
        joined = rng.choice(("True", "False"))
        reason = "MemberJoined" if joined == "True" else "MemberLeft"
        status["conditions"] = [_condition("Joined", joined, reason, now, rng.choice(FRESH_AGES[1:]))]
    return {
        "apiVersion": CLUSTER_API,
        "kind": "MemberCluster",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }


def _cluster_labels(rng: random.Random) -> dict[str, str]:
    return {key: rng.choice(values) for key, values in LABELS.items() if _chance(rng, "label_present")}


def _condition(kind: str, status: str, reason: str, now: datetime, age: int) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": f"{kind} is {status}",
        "lastTransitionTime": _ago(now, age),
        "observedGeneration": 1,
    }


def _agent_statuses(rng: random.Random, now: datetime) -> list[dict[str, Any]]:
    profile = _pick(rng, ELIGIBILITY)
    statuses = []
    if _chance(rng, "second_agent"):
        statuses.append(
            {
                "type": "MultiClusterServiceAgent",
                "conditions": [_condition("Joined", "True", "AgentJoined", now, 600)],
                "lastReceivedHeartbeat": _ago(now, rng.choice(FRESH_AGES)),
            }
        )
    if profile == "no_member_agent":
        return statuses
    heartbeat_ages = STALE_AGES if profile == "stale_heartbeat" else FRESH_AGES
    conditions = []
    if profile != "not_joined":
        conditions.append(_condition("Joined", "True", "Joined", now, rng.choice(STALE_AGES)))
    elif not _chance(rng, "joined_missing"):
        conditions.append(_condition("Joined", rng.choice(("False", "Unknown")), "NotJoined", now, 60))
    unhealthy_ages = {"unhealthy_long": STALE_AGES, "unhealthy_briefly": FRESH_AGES}.get(profile)
    if unhealthy_ages is not None:
        status = rng.choice(("False", "Unknown"))
        conditions.append(_condition("Healthy", status, "Unhealthy", now, rng.choice(unhealthy_ages)))
    elif profile != "no_healthy_condition":
        conditions.append(_condition("Healthy", "True", "Healthy", now, rng.choice(FRESH_AGES + STALE_AGES)))
    rng.shuffle(conditions)
    statuses.append(
        {
            "type": "MemberAgent",
            "conditions": conditions,
            "lastReceivedHeartbeat": _ago(now, rng.choice(heartbeat_ages)),
        }
    )
    rng.shuffle(statuses)
    return statuses


def _properties(rng: random.Random, now: datetime) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, values in CUSTOM_PROPERTIES.items():
        if _chance(rng, "node_count" if name == NODE_COUNT else "custom_property"):
            properties[name] = {
                "value": rng.choice(values),
                "observationTime": _ago(now, rng.choice((0, 15, 60))),
            }
    if _chance(rng, "non_numeric_property"):
        name, values = NON_NUMERIC_PROPERTY
        properties[name] = {"value": rng.choice(values), "observationTime": _ago(now, 15)}
    return properties


def _resource_usage(rng: random.Random, now: datetime) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    for field in CAPACITY_KINDS.values():
        if _chance(rng, "resource_usage_kind"):
            usage[field] = {
                resource: rng.choice(values)
                for resource, values in RESOURCES.items()
                if _chance(rng, "resource_present")
            }
    if usage:
        usage["observationTime"] = _ago(now, 30)
    return usage


# --- ClusterResourcePlacement ----------------------------------------------------------------------


def _placement(rng: random.Random, name: str, cluster_names: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": f"{name}-ns"}]
    }
    if not _chance(rng, "policy_omitted"):
        spec["policy"] = _policy(rng, cluster_names)
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name, "generation": rng.randint(1, 3)},
        "spec": spec,
    }


def _policy(rng: random.Random, cluster_names: list[str]) -> dict[str, Any]:
    placement_type = _pick(rng, PLACEMENT_TYPES)
    policy: dict[str, Any] = {"placementType": placement_type}
    if placement_type == "PickFixed":
        names = _sample(rng, cluster_names, 1, 4)
        if _chance(rng, "pick_fixed_missing_name"):
            names.append(rng.choice(GONE_CLUSTERS))
            rng.shuffle(names)
        policy["clusterNames"] = names
        return policy
    if placement_type == "PickN":
        policy["numberOfClusters"] = _number_of_clusters(rng, len(cluster_names))
    affinity: dict[str, Any] = {}
    if _chance(rng, "required_affinity"):
        terms = [_required_term(rng) for _ in range(rng.randint(1, 3))]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"clusterSelectorTerms": terms}
    if placement_type == "PickN" and _chance(rng, "preferred_affinity"):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": _weight(rng), "preference": _preferred_term(rng)} for _ in range(rng.randint(1, 3))
        ]
    if affinity:
        policy["affinity"] = {"clusterAffinity": affinity}
    if placement_type == "PickN" and _chance(rng, "topology_spread"):
        keys = _sample(rng, [*LABELS, ABSENT_LABEL_KEY], 1, 2)
        policy["topologySpreadConstraints"] = [_spread_constraint(rng, key) for key in keys]
    if _chance(rng, "tolerations"):
        policy["tolerations"] = _tolerations(rng)
    return policy


def _weight(rng: random.Random) -> int:
    # the listed weights give zero, both signs and known rounding cases; any other one now and then
    return rng.choice(WEIGHTS) if _chance(rng, "listed_weight") else rng.randint(-100, 100)


def _number_of_clusters(rng: random.Random, fleet_size: int) -> int:
    kind = _pick(rng, NUMBER_OF_CLUSTERS)
    if kind == "zero":
        return 0
    if kind == "above fleet":
        return fleet_size + rng.randint(1, 3)
    return rng.randint(1, fleet_size)


def _label_selector(rng: random.Random) -> dict[str, Any]:
    """matchLabels and matchExpressions over the label pools, with values and keys no cluster has."""
    selector: dict[str, Any] = {}
    if _chance(rng, "match_labels"):
        keys = _sample(rng, list(LABELS), 1, 2)
        selector["matchLabels"] = {key: rng.choice(LABELS[key] + LABEL_MISSES.get(key, ())) for key in keys}
    if _chance(rng, "match_expressions"):
        expressions = []
        for key in _sample(rng, [*LABELS, ABSENT_LABEL_KEY], 1, 2):
            operator = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
            expression: dict[str, Any] = {"key": key, "operator": operator}
            if operator in ("In", "NotIn"):
                pool = LABELS.get(key, ("yes",)) + LABEL_MISSES.get(key, ())
                expression["values"] = _sample(rng, pool, 1, 2)
            expressions.append(expression)
        selector["matchExpressions"] = expressions
    return selector


def _numeric_property(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A property name a selector or sorter may use, and the values to compare it with."""
    if _chance(rng, "status_property"):
        name = rng.choice(list(CUSTOM_PROPERTIES))
        return name, SELECTOR_VALUES[name]
    capacity = rng.choice(list(CAPACITY_KINDS))
    resource = rng.choice(list(RESOURCES))
    return f"{RESOURCE_PREFIX}{capacity}-{resource}", SELECTOR_VALUES[resource]


def _property_requirements(rng: random.Random) -> list[dict[str, Any]]:
    """Requirements over distinct properties, at most two of them on one property.

    Two requirements on one property are a range or, as often, a contradiction: the webhook of this
    release does not look for contradictions, so a term no cluster can match is admitted.
    """
    requirements = []
    seen: set[str] = set()
    for _ in range(rng.randint(1, 3)):
        name, values = _numeric_property(rng)
        if _chance(rng, "error_property"):
            name = rng.choice(ERROR_PROPERTIES)
        if name in seen:
            continue
        seen.add(name)
        if _chance(rng, "term_property_range"):
            low, high = sorted(rng.sample(values, 2), key=parse_quantity)
            if _chance(rng, "term_property_contradiction"):
                first, second = rng.choice(CONTRADICTIONS)
                larger = low if second == "Ne" else high
                requirements.append({"name": name, "operator": first, "values": [larger]})
                requirements.append({"name": name, "operator": second, "values": [low]})
                continue
            if parse_quantity(low) < parse_quantity(high):
                requirements.append({"name": name, "operator": rng.choice(("Gt", "Ge")), "values": [low]})
                requirements.append({"name": name, "operator": rng.choice(("Lt", "Le")), "values": [high]})
                continue
        operator = rng.choice(("Gt", "Ge", "Lt", "Le", "Eq", "Ne"))
        requirements.append({"name": name, "operator": operator, "values": [rng.choice(values)]})
    return requirements


def _required_term(rng: random.Random) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if _chance(rng, "term_label_selector"):
        term["labelSelector"] = _label_selector(rng)
    if _chance(rng, "term_property_selector"):
        term["propertySelector"] = {"matchExpressions": _property_requirements(rng)}
    return term


def _preferred_term(rng: random.Random) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if _chance(rng, "preference_label_selector"):
        term["labelSelector"] = _label_selector(rng)
    if _chance(rng, "preference_property_sorter"):
        name = rng.choice(ERROR_PROPERTIES) if _chance(rng, "error_property") else _numeric_property(rng)[0]
        term["propertySorter"] = {"name": name, "sortOrder": rng.choice(("Ascending", "Descending"))}
    return term


def _spread_constraint(rng: random.Random, key: str) -> dict[str, Any]:
    constraint: dict[str, Any] = {"topologyKey": key}
    if not _chance(rng, "max_skew_omitted"):
        constraint["maxSkew"] = rng.randint(1, 3)
    if not _chance(rng, "when_unsatisfiable_omitted"):
        constraint["whenUnsatisfiable"] = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
    return constraint


def _tolerations(rng: random.Random) -> list[dict[str, Any]]:
    """Unique tolerations that match the taint pool in every way a toleration can (or does not)."""
    tolerations: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        key, value = rng.choice(TAINTS)
        toleration: dict[str, Any]
        if _chance(rng, "toleration_equal"):
            toleration = {"key": key, "value": rng.choice((value, "other"))}
            if not _chance(rng, "toleration_operator_omitted"):
                toleration["operator"] = "Equal"
        else:
            toleration = {"operator": "Exists"}
            if _chance(rng, "exists_with_key"):
                toleration["key"] = key
        if _chance(rng, "toleration_effect"):
            toleration["effect"] = "NoSchedule"
        # the webhook compares them after the default operator is filled in
        if {"operator": "Equal", **toleration} not in [{"operator": "Equal", **t} for t in tolerations]:
            tolerations.append(toleration)
    return tolerations


# --- ClusterResourceBinding ------------------------------------------------------------------------


def _bindings(
    rng: random.Random, placement: str, cluster_names: list[str], now: datetime, used: set[str]
) -> list[dict[str, Any]]:
    """Existing bindings of one CRP: live clusters and gone ones, every state, some being deleted."""
    targets = [name for name in cluster_names if _chance(rng, "binding_per_cluster")]
    if _chance(rng, "binding_gone_cluster"):
        targets.append(rng.choice(GONE_CLUSTERS))
    bindings = []
    for target in targets:
        deleting = _chance(rng, "binding_deleting")
        bindings.append(_binding(rng, placement, target, now, used, deleting=deleting))
        if not deleting and _chance(rng, "binding_duplicate_deleting"):
            bindings.append(_binding(rng, placement, target, now, used, deleting=True))
    return bindings


def _binding_name(rng: random.Random, placement: str, cluster: str, used: set[str]) -> str:
    # upstream appends eight random characters so a cluster can hold two bindings of one CRP
    while (name := f"{placement}-{cluster}-{rng.getrandbits(32):08x}") in used:
        continue
    used.add(name)
    return name


def _binding(
    rng: random.Random, placement: str, cluster: str, now: datetime, used: set[str], *, deleting: bool
) -> dict[str, Any]:
    state = _pick(rng, BINDING_STATES)
    metadata: dict[str, Any] = {
        "name": _binding_name(rng, placement, cluster, used),
        "labels": {PARENT_LABEL: placement},
        "finalizers": [BINDING_CLEANUP_FINALIZER],
        "generation": 1,
    }
    if deleting:
        metadata["deletionTimestamp"] = _ago(now, rng.choice((0, 10, 120)))
        # another controller's finalizer keeps the object after the scheduler has dropped its own
        if _chance(rng, "second_finalizer"):
            metadata["finalizers"].append(WORK_CLEANUP_FINALIZER)
    if state == "Unscheduled" and _chance(rng, "binding_previous_state"):
        metadata["annotations"] = {PREVIOUS_STATE_ANNOTATION: rng.choice(("Scheduled", "Bound"))}
    # the latest policy snapshot is index 0; any other index is a policy the CRP had before
    snapshot = f"{placement}-{1 if _chance(rng, 'binding_obsolete') else 0}"
    decision: dict[str, Any] = {
        "clusterName": cluster,
        "selected": True,
        "reason": "picked by scheduling policy",
    }
    if _chance(rng, "binding_score"):
        # upstream always writes both scores; its JSON name for the topology spread score is priorityScore
        decision["clusterScore"] = {
            "affinityScore": rng.choice(WEIGHTS),
            "priorityScore": rng.choice((-1, 0, 1)),
        }
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourceBinding",
        "metadata": metadata,
        "spec": {
            "state": state,
            "targetCluster": cluster,
            "schedulingPolicySnapshotName": snapshot,
            "resourceSnapshotName": f"{placement}-0-snapshot",
            "clusterDecision": decision,
        },
    }
