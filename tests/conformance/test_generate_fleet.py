"""The Fleet case generator: its cases are admitted, replay from a seed, and cover every feature."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from conformance.cases import Case
from conformance.generate_fleet import GONE_CLUSTERS, generate_case
from conformance.verdict import case_documents
from placement.scheduler.fleet.eligibility import eligibility_reason
from placement.scheduler.fleet.manifests import parse_member_cluster
from placement.scheduler.offline import run_offline
from placement.scheduler.quantity import parse_quantity
from tests.conformance.cases import now_of, of_kind

CASES = 300
# How often each feature must show up in CASES cases: often enough to matter in a 2,000-case run.
MINIMUM = 5


def _cases(seed: int, count: int = CASES) -> list[Case]:
    rng = random.Random(seed)
    return [generate_case(rng, f"fleet-{seed}-{index}") for index in range(count)]


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return _cases(19)


def test_every_case_is_accepted_by_our_scheduler(cases: list[Case]) -> None:
    for case in cases:
        # ManifestProblems (a rejected document) propagates and fails the test with the case's id
        run = run_offline(case_documents(case), now_of(case))
        assert len(run.reports) == len(of_kind(case, "ClusterResourcePlacement")), case["id"]
        assert run.warnings == (), case["id"]


def test_cases_are_json_lines_with_whole_second_times(cases: list[Case]) -> None:
    for case in cases:
        assert json.loads(json.dumps(case)) == case
        assert case["family"] == "fleet"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", case["now"]), case["now"]


def test_objects_being_deleted_hold_a_finalizer(cases: list[Case]) -> None:
    # an API server (and the fake client the oracle uses) refuses such an object without one
    for case in cases:
        for body in case["manifests"]:
            if "deletionTimestamp" in body["metadata"]:
                assert body["metadata"].get("finalizers"), (case["id"], body["metadata"]["name"])


def test_names_are_unique_per_kind(cases: list[Case]) -> None:
    for case in cases:
        names = [(body["kind"], body["metadata"]["name"]) for body in case["manifests"]]
        assert len(names) == len(set(names)), case["id"]


def test_the_same_seed_gives_the_same_cases() -> None:
    assert _cases(7, 20) == _cases(7, 20)
    assert _cases(7, 20) != _cases(8, 20)


def _selector_features(prefix: str, selector: dict[str, Any]) -> Iterator[str]:
    yield f"{prefix} label selector"
    if selector.get("matchLabels"):
        yield f"{prefix} matchLabels"
    for expression in selector.get("matchExpressions", []):
        yield f"{prefix} label {expression['operator']}"
    if not selector:
        yield f"{prefix} empty label selector"


def _property_kind(name: str) -> str:
    if name.startswith("resources.kubernetes-fleet.io/"):
        return "resource " + name.rpartition("/")[2].partition("-")[0]
    return "property"


def _contradicting(requirements: list[dict[str, Any]]) -> bool:
    """Whether two requirements on one property leave no value: crossed bounds, or an Eq that the other
    requirement excludes."""
    for first in requirements:
        for second in requirements:
            if first is second or first["name"] != second["name"]:
                continue
            low, high = parse_quantity(first["values"][0]), parse_quantity(second["values"][0])
            pair = (first["operator"], second["operator"])
            if pair in (("Gt", "Lt"), ("Ge", "Lt"), ("Gt", "Le")) and low >= high:
                return True
            if (pair == ("Ge", "Le") and low > high) or (pair == ("Eq", "Ne") and low == high):
                return True
            if pair == ("Eq", "Eq") and low != high:
                return True
    return False


def _policy_features(policy: dict[str, Any] | None, fleet: dict[str, bool]) -> Iterator[str]:
    """`fleet` maps each MemberCluster's name to whether it is eligible."""
    if policy is None:
        yield "policy omitted"
        return
    placement_type = policy["placementType"]
    yield placement_type
    if placement_type == "PickN":
        number = policy["numberOfClusters"]
        yield (
            "PickN 0" if number == 0 else "PickN above fleet" if number > len(fleet) else "PickN within fleet"
        )
    for name in policy.get("clusterNames", []):
        yield f"PickFixed {_whose(name, fleet)} name"
    affinity = policy.get("affinity", {}).get("clusterAffinity", {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    for term in required["clusterSelectorTerms"] if required else []:
        if "labelSelector" in term:
            yield from _selector_features("required", term["labelSelector"])
        requirements = term.get("propertySelector", {}).get("matchExpressions", [])
        for requirement in requirements:
            yield f"required property {requirement['operator']}"
            yield f"required {_property_kind(requirement['name'])}"
        if len({r["name"] for r in requirements}) < len(requirements):
            yield "required property range"
        if _contradicting(requirements):
            yield "required property contradiction"
    for preferred in affinity.get("preferredDuringSchedulingIgnoredDuringExecution", []):
        weight = preferred["weight"]
        yield (
            "preferred weight negative"
            if weight < 0
            else "preferred weight 0"
            if weight == 0
            else "preferred"
        )
        if "labelSelector" in preferred["preference"]:
            yield from _selector_features("preferred", preferred["preference"]["labelSelector"])
        if sorter := preferred["preference"].get("propertySorter"):
            yield f"sorter {sorter['sortOrder']}"
            yield f"sorter {_property_kind(sorter['name'])}"
    for constraint in policy.get("topologySpreadConstraints", []):
        yield f"spread {constraint.get('whenUnsatisfiable', 'omitted')}"
        yield f"spread maxSkew {constraint.get('maxSkew', 'omitted')}"
    for toleration in policy.get("tolerations", []):
        yield f"toleration {toleration.get('operator', 'omitted')}"
        if "key" not in toleration:
            yield "toleration without key"


def _whose(cluster: str, fleet: dict[str, bool]) -> str:
    return "missing" if cluster not in fleet else "eligible" if fleet[cluster] else "ineligible"


def _eligibility(body: dict[str, Any], moment: datetime) -> str | None:
    return eligibility_reason(parse_member_cluster(body), moment)


def _cluster_features(body: dict[str, Any], moment: datetime) -> Iterator[str]:
    cluster = parse_member_cluster(body)
    reason = eligibility_reason(cluster, moment)
    # the reason without its measured minutes: "ineligible: no recent heartbeat signa"
    yield "eligible" if reason is None else "ineligible: " + reason.rpartition(": ")[2][:25]
    agent = cluster.member_agent
    if agent is not None and agent.last_received_heartbeat is not None:
        age = (moment - agent.last_received_heartbeat).total_seconds()
        if age == 300:
            yield "heartbeat exactly 5 minutes old"
    if body["spec"].get("taints"):
        yield "taints"
    for name in body["status"]["properties"]:
        yield f"property {name}"
    for kind in ("capacity", "allocatable", "available"):
        if kind in body["status"]["resourceUsage"]:
            yield f"resource usage {kind}"


def _binding_features(body: dict[str, Any], placements: set[str], fleet: dict[str, bool]) -> Iterator[str]:
    spec = body["spec"]
    yield f"binding {spec['state']}"
    if "deletionTimestamp" in body["metadata"]:
        yield "binding deleting"
    if not spec["schedulingPolicySnapshotName"].endswith("-0"):
        yield "binding obsolete"
    yield "binding with score" if "clusterScore" in spec["clusterDecision"] else "binding without score"
    yield f"binding of a {_whose(spec['targetCluster'], fleet)} cluster"
    if body["metadata"]["labels"]["kubernetes-fleet.io/parent-CRP"] not in placements:
        yield "binding of another CRP"
    if "annotations" in body["metadata"]:
        yield "binding with previous state"


def _features(case: Case) -> Counter[str]:
    found: Counter[str] = Counter()
    clusters = of_kind(case, "MemberCluster")
    fleet = {body["metadata"]["name"]: _eligibility(body, now_of(case)) is None for body in clusters}
    placements = of_kind(case, "ClusterResourcePlacement")
    for body in clusters:
        found.update(_cluster_features(body, now_of(case)))
    for body in placements:
        found.update(_policy_features(body["spec"].get("policy"), fleet))
    names = {body["metadata"]["name"] for body in placements}
    for body in of_kind(case, "ClusterResourceBinding"):
        found.update(_binding_features(body, names, fleet))
    found[f"{len(clusters)} clusters"] += 1
    return found


# every way upstream's eligibility checker refuses a cluster
INELIGIBLE = (
    "cluster has left the fleet",
    "member agent not online yet",
    "no recent heartbeat signals",
    "member agent not joined yet",
    "health condition from member agent is not available",
    "unhealthy for a prolonged period of time",
)
EXPECTED = [
    *("PickAll", "PickN", "PickFixed", "policy omitted"),
    *(
        "PickN 0",
        "PickN within fleet",
        "PickN above fleet",
        "PickFixed eligible name",
        "PickFixed ineligible name",
        "PickFixed missing name",
    ),
    *(f"required label {op}" for op in ("In", "NotIn", "Exists", "DoesNotExist")),
    *("required matchLabels", "required empty label selector", "required property range"),
    "required property contradiction",
    *(f"required property {op}" for op in ("Gt", "Ge", "Lt", "Le", "Eq", "Ne")),
    *(f"required resource {kind}" for kind in ("total", "allocatable", "available")),
    "required property",
    *("preferred", "preferred weight 0", "preferred weight negative", "preferred matchLabels"),
    *(f"preferred label {op}" for op in ("In", "NotIn", "Exists", "DoesNotExist")),
    *("sorter Ascending", "sorter Descending", "sorter property"),
    *(f"sorter resource {kind}" for kind in ("total", "allocatable", "available")),
    *(f"spread {when}" for when in ("DoNotSchedule", "ScheduleAnyway", "omitted")),
    *(f"spread maxSkew {skew}" for skew in (1, 2, 3, "omitted")),
    *("toleration Equal", "toleration Exists", "toleration omitted", "toleration without key", "taints"),
    "eligible",
    *(f"ineligible: {why[:25]}" for why in INELIGIBLE),
    "heartbeat exactly 5 minutes old",
    *("property kubernetes-fleet.io/node-count", "property kubernetes.azure.com/per-cpu-core-cost"),
    "property k8s.io/k8s-version",
    *(f"resource usage {kind}" for kind in ("capacity", "allocatable", "available")),
    *(f"binding {state}" for state in ("Scheduled", "Bound", "Unscheduled")),
    *("binding deleting", "binding obsolete", "binding with score", "binding without score"),
    *(
        *(f"binding of a {whose} cluster" for whose in ("eligible", "ineligible", "missing")),
        "binding of another CRP",
        "binding with previous state",
    ),
    *("1 clusters", "12 clusters"),
]


def test_every_feature_appears(cases: list[Case]) -> None:
    found: Counter[str] = Counter()
    for case in cases:
        found.update(_features(case))
    rare = {feature: found[feature] for feature in EXPECTED if found[feature] < MINIMUM}
    assert rare == {}
    assert set(GONE_CLUSTERS) <= {name for case in cases for name in _gone_targets(case)}


def _gone_targets(case: Case) -> set[str]:
    fleet = {body["metadata"]["name"] for body in of_kind(case, "MemberCluster")}
    return {
        body["spec"]["targetCluster"]
        for body in of_kind(case, "ClusterResourceBinding")
        if body["spec"]["targetCluster"] not in fleet
    }
