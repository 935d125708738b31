"""The OCM case generator: its cases parse and schedule here, a seed replays them, and every feature appears.

The features are read back from the generated manifests, not from the generator's own tables, so a
feature the generator stops producing fails the coverage test.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from conformance.cases import Case
from conformance.generate_ocm import (
    CLUSTER_SET_LABEL,
    GO_DURATION_SECONDS,
    GROUP_NAME_LABEL,
    INVALID_REQUIREMENTS,
    PLACEMENT_LABEL,
    PROBABILITIES,
    generate_case,
    timestamp,
)
from conformance.verdict import case_documents
from placement.scheduler.offline import run_offline
from placement.scheduler.timeutil import parse_time
from tests.conformance.cases import now_of, of_kind

CASES = 300
MIN_COUNT = 5

# one pattern per CEL library upstream registers, matched against the generated expressions
CEL_LIBRARIES = {
    "macros": r"\.(exists|exists_one|all|map|filter)\(|\bhas\(",
    "strings": r"\.(lowerAscii|upperAscii|replace|split|substring|charAt|indexOf|lastIndexOf|trim|join|"
    r"format|reverse)\(|strings\.quote\(",
    "lists": r"\.(isSorted|sum|min|max)\(\)|\.(indexOf|lastIndexOf)\(",
    "regex": r"\.(find|findAll)\(",
    "ip": r"\bip\(|isIP\(|ip\.isCanonical\(",
    "cidr": r"\bcidr\(|isCIDR\(",
    "url": r"\burl\(|isURL\(",
    "format": r"\bformat\.[a-zA-Z0-9]+\(",
    "optional": r"\[\?|\.\?|\boptional\.|\.orValue\(|\.hasValue\(",
    "quantity": r"\bquantity\(|isQuantity\(",
    "json": r"\.parseJSON\(\)",
    "scores": r"managedCluster\.scores\(",
    "semver": r"\bsemver\(|isSemver\(",
}


def generated(count: int = CASES, probabilities: Any = PROBABILITIES) -> Iterator[Case]:
    for seed in range(count):
        yield generate_case(random.Random(seed), f"ocm-test-{seed}", probabilities)


def test_cases_parse_and_schedule_here() -> None:
    for case in generated():
        run = run_offline(case_documents(case), now_of(case))
        assert len(run.reports) == len(of_kind(case, "Placement")), case["id"]


def test_invalid_selectors_are_generated_and_admitted() -> None:
    """Selectors upstream reports as Misconfigured at scheduling time still parse, as the CRD admits them."""
    invalid = 0
    for case in generated():
        for placement in of_kind(case, "Placement"):
            text = json.dumps(placement["spec"].get("predicates", []))
            invalid += sum(text.count(json.dumps(requirement)) for requirement in INVALID_REQUIREMENTS)
        run_offline(case_documents(case), now_of(case))
    assert invalid >= MIN_COUNT


def test_a_seed_replays_the_same_case() -> None:
    assert generate_case(random.Random(7), "a") == generate_case(random.Random(7), "a")
    assert generate_case(random.Random(7), "a") != generate_case(random.Random(8), "a")


def test_sizes_stay_within_bounds() -> None:
    for case in generated():
        assert case["family"] == "ocm"
        assert 1 <= len(of_kind(case, "ManagedCluster")) <= 12
        assert len(of_kind(case, "ManagedClusterSet")) <= 4
        assert 1 <= len(of_kind(case, "Placement")) <= 3
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", case["now"])


@pytest.fixture(scope="module")
def features() -> Counter[str]:
    counts: Counter[str] = Counter()
    for case in generated():
        counts.update(case_features(case))
    return counts


def test_every_feature_appears_often(features: Counter[str]) -> None:
    rare = {name: features[name] for name in EXPECTED_FEATURES if features[name] < MIN_COUNT}
    assert not rare, f"features seen fewer than {MIN_COUNT} times in {CASES} cases: {rare}"


EXPECTED_FEATURES = (
    # sets and bindings
    "set:ExclusiveClusterSetLabel",
    "set:selectorType omitted",
    "set:LabelSelector",
    "set:LabelSelector nil",
    "set:global",
    "cluster:set label",
    "cluster:set label of a missing set",
    "binding:placement namespace",
    "binding:other namespace",
    "binding:missing set",
    "placement:clusterSets",
    "placement:no clusterSets",
    # selectors
    *(f"label:{op}" for op in ("In", "NotIn", "Exists", "DoesNotExist")),
    "label:matchLabels",
    *(f"claim:{op}" for op in ("In", "NotIn", "Exists", "DoesNotExist")),
    *(f"cel:{library}" for library in CEL_LIBRARIES),
    # taints and tolerations
    *(f"taint:{effect}" for effect in ("NoSelect", "PreferNoSelect", "NoSelectIfNew")),
    "taint:no timeAdded",
    "taint:timeAdded after now",
    "taint:fractional timeAdded",
    *(f"toleration:{op}" for op in ("Equal", "Exists", "operator omitted")),
    "toleration:no key",
    "toleration:value",
    "toleration:effect",
    "toleration:no effect",
    *(f"toleration expiry:{when}" for when in ("before now", "at now", "after now")),
    "toleration:seconds past Go's longest Duration",
    # prioritizers and scores
    *(f"mode:{mode}" for mode in ("Additive", "Exact", "omitted")),
    *(f"prioritizer:{name}" for name in ("Balance", "Steady", "ResourceAllocatableCPU")),
    "prioritizer:ResourceAllocatableMemory",
    "prioritizer:AddOn",
    *(f"weight:{sign}" for sign in ("negative", "zero", "positive", "omitted")),
    *(f"score validUntil:{when}" for when in ("before now", "at now", "after now", "absent")),
    "resource:cpu",
    "resource:memory",
    "resource:no capacity",
    # selection and groups
    *(f"numberOfClusters:{kind}" for kind in ("absent", "0", "within fleet", "above fleet")),
    "group size:int",
    "group size:percent",
    "decisionGroups",
    # existing decisions and clusters
    "decision:own",
    "decision:group label",
    "decision:other placement",
    *(f"condition:{status}" for status in ("True", "False", "Unknown")),
    "cluster:deleting",
)


def case_features(case: Case) -> set[str]:
    """The features one case exercises, read from its manifests."""
    found: set[str] = set()
    now = now_of(case)
    for cluster_set in of_kind(case, "ManagedClusterSet"):
        found |= _set_features(cluster_set)
    found |= _binding_features(case)
    set_names = {cluster_set["metadata"]["name"] for cluster_set in of_kind(case, "ManagedClusterSet")}
    for cluster in of_kind(case, "ManagedCluster"):
        found |= _cluster_features(cluster, set_names, now)
    for score in of_kind(case, "AddOnPlacementScore"):
        found.add(f"score validUntil:{_when(score['status'].get('validUntil'), now)}")
    fleet_size = len(of_kind(case, "ManagedCluster"))
    for placement in of_kind(case, "Placement"):
        found |= _placement_features(placement["spec"], fleet_size)
    found |= _expiry_features(case, now)
    found |= _decision_features(case)
    return found


def _when(stamp: str | None, now: datetime) -> str:
    if stamp is None:
        return "absent"
    moment = parse_time(stamp)
    assert moment is not None
    return "before now" if moment < now else "at now" if moment == now else "after now"


def _set_features(cluster_set: dict[str, Any]) -> set[str]:
    selector = cluster_set["spec"].get("clusterSelector")
    if selector is None:
        return {"set:selectorType omitted"}
    if selector["selectorType"] == "ExclusiveClusterSetLabel":
        return {"set:ExclusiveClusterSetLabel"}
    if "labelSelector" not in selector:
        return {"set:LabelSelector nil"}
    return {"set:global" if selector["labelSelector"] == {} else "set:LabelSelector"}


def _binding_features(case: Case) -> set[str]:
    found = set()
    set_names = {s["metadata"]["name"] for s in of_kind(case, "ManagedClusterSet")}
    placement_namespaces = {p["metadata"]["namespace"] for p in of_kind(case, "Placement")}
    for binding in of_kind(case, "ManagedClusterSetBinding"):
        inside = binding["metadata"]["namespace"] in placement_namespaces
        found.add("binding:placement namespace" if inside else "binding:other namespace")
        if binding["spec"]["clusterSet"] not in set_names:
            found.add("binding:missing set")
    return found


def _cluster_features(cluster: dict[str, Any], set_names: set[str], now: datetime) -> set[str]:
    found = set()
    set_label = cluster["metadata"]["labels"].get(CLUSTER_SET_LABEL)
    if set_label is not None:
        found.add("cluster:set label" if set_label in set_names else "cluster:set label of a missing set")
    if "deletionTimestamp" in cluster["metadata"]:
        found.add("cluster:deleting")
    for taint in cluster["spec"].get("taints", []):
        found.add(f"taint:{taint['effect']}")
        if "timeAdded" not in taint:
            found.add("taint:no timeAdded")
        elif _when(taint["timeAdded"], now) == "after now":
            found.add("taint:timeAdded after now")
        if "." in taint.get("timeAdded", ""):
            found.add("taint:fractional timeAdded")
    status = cluster["status"]
    for resource in status.get("allocatable", {}):
        found.add(f"resource:{resource}")
        if resource not in status.get("capacity", {}):
            found.add("resource:no capacity")
    for condition in status.get("conditions", []):
        found.add(f"condition:{condition['status']}")
    return found


def _placement_features(spec: dict[str, Any], fleet_size: int) -> set[str]:
    found = {"placement:clusterSets" if spec.get("clusterSets") else "placement:no clusterSets"}
    number = spec.get("numberOfClusters")
    if number is None:
        found.add("numberOfClusters:absent")
    else:
        found.add(
            "numberOfClusters:0"
            if number == 0
            else "numberOfClusters:within fleet"
            if number <= fleet_size
            else "numberOfClusters:above fleet"
        )
    for predicate in spec.get("predicates", []):
        found |= _selector_features(predicate["requiredClusterSelector"])
    found |= _prioritizer_features(spec.get("prioritizerPolicy"))
    for toleration in spec.get("tolerations", []):
        found.add(f"toleration:{toleration.get('operator', 'operator omitted')}")
        found.add("toleration:no key" if "key" not in toleration else "toleration:key")
        found.add("toleration:effect" if "effect" in toleration else "toleration:no effect")
        if "value" in toleration:
            found.add("toleration:value")
    group_strategy = spec.get("decisionStrategy", {}).get("groupStrategy", {})
    size = group_strategy.get("clustersPerDecisionGroup")
    if isinstance(size, int):
        found.add("group size:int")
    elif isinstance(size, str) and size.endswith("%"):
        found.add("group size:percent")
    if group_strategy.get("decisionGroups"):
        found.add("decisionGroups")
    return found


def _selector_features(selector: dict[str, Any]) -> set[str]:
    found = set()
    labels = selector.get("labelSelector", {})
    if labels.get("matchLabels"):
        found.add("label:matchLabels")
    found |= {f"label:{r['operator']}" for r in labels.get("matchExpressions", [])}
    found |= {f"claim:{r['operator']}" for r in selector.get("claimSelector", {}).get("matchExpressions", [])}
    for expression in selector.get("celSelector", {}).get("celExpressions", []):
        found |= {f"cel:{name}" for name, pattern in CEL_LIBRARIES.items() if re.search(pattern, expression)}
    return found


def _prioritizer_features(policy: dict[str, Any] | None) -> set[str]:
    if policy is None:
        return set()
    found = {f"mode:{policy.get('mode', 'omitted')}"}
    for config in policy["configurations"]:
        coordinate = config["scoreCoordinate"]
        if coordinate.get("type") == "AddOn":
            found.add("prioritizer:AddOn")
        else:
            found.add(f"prioritizer:{coordinate.get('builtIn')}")
        weight = config.get("weight")
        found.add(
            "weight:omitted"
            if weight is None
            else "weight:negative"
            if weight < 0
            else "weight:zero"
            if weight == 0
            else "weight:positive"
        )
    return found


def _expiry_features(case: Case, now: datetime) -> set[str]:
    """Where taint.timeAdded + tolerationSeconds falls against `now`, for tolerations aimed at a taint."""
    added = [
        parse_time(taint["timeAdded"])
        for cluster in of_kind(case, "ManagedCluster")
        for taint in cluster["spec"].get("taints", [])
        if "timeAdded" in taint
    ]
    found = set()
    for placement in of_kind(case, "Placement"):
        for toleration in placement["spec"].get("tolerations", []):
            if "tolerationSeconds" not in toleration:
                continue
            if abs(toleration["tolerationSeconds"]) > GO_DURATION_SECONDS:
                found.add("toleration:seconds past Go's longest Duration")
                continue
            for moment in added:
                assert moment is not None
                expiry = moment + timedelta(seconds=toleration["tolerationSeconds"])
                found.add(f"toleration expiry:{_when(timestamp(expiry), now)}")
    return found


def _decision_features(case: Case) -> set[str]:
    placements = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in of_kind(case, "Placement")}
    found = set()
    for decision in of_kind(case, "PlacementDecision"):
        labels = decision["metadata"]["labels"]
        owner = (decision["metadata"]["namespace"], labels.get(PLACEMENT_LABEL))
        found.add("decision:own" if owner in placements else "decision:other placement")
        if labels.get(GROUP_NAME_LABEL):
            found.add("decision:group label")
    return found
