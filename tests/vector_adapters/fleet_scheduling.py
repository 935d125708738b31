"""Fleet scheduler vectors (`kind`: affinity, taints, topology spread, PickN ordering) on the product code."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from placement.scheduler.fleet.affinity import (
    interpolate_weight,
    observed_extremes,
    preferred_affinity_score,
    term_matches,
)
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.properties import Extremes
from placement.scheduler.fleet.schedule import ScoredCluster, pick_top_n, sort_scored_clusters
from placement.scheduler.fleet.taints import first_untolerated_taint
from placement.scheduler.fleet.topology import NO_VIOLATION, TopologySpread, violation_reason, will_violate
from placement.scheduler.fleet.types import (
    ClusterSelectorTerm,
    MemberCluster,
    PreferredClusterSelector,
    PropertySelectorRequirement,
    PropertySorter,
    PropertyValue,
    SchedulingError,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from placement.scheduler.labels import parse_label_selector
from placement.scheduler.quantity import approx_float, parse_quantity
from tests.vector_adapters.common import check


def _cluster(raw: Mapping[str, Any]) -> MemberCluster:
    usage = raw.get("resourceUsage") or {}
    return MemberCluster(
        name=raw["name"],
        labels=dict(raw.get("labels") or {}),
        taints=tuple(_taint(t) for t in raw.get("taints") or ()),
        properties={k: PropertyValue(str(v)) for k, v in (raw.get("properties") or {}).items()},
        capacity=dict(usage.get("capacity") or {}),
        allocatable=dict(usage.get("allocatable") or {}),
        available=dict(usage.get("available") or {}),
    )


def _taint(raw: Mapping[str, Any]) -> Taint:
    return Taint(raw["key"], raw.get("value", ""), raw.get("effect", "NoSchedule"))


def _term(raw: Mapping[str, Any]) -> ClusterSelectorTerm:
    """A term as the scheduler receives it (no webhook validation: the vectors probe scheduler errors)."""
    selector = raw.get("labelSelector")
    sorter = raw.get("propertySorter")
    return ClusterSelectorTerm(
        label_selector=None if selector is None else parse_label_selector(selector, "labelSelector"),
        property_selector=tuple(
            PropertySelectorRequirement(e["name"], e["operator"], tuple(e.get("values") or ()))
            for e in (raw.get("propertySelector") or {}).get("matchExpressions") or ()
        ),
        property_sorter=None
        if sorter is None
        else PropertySorter(sorter["name"], sorter.get("sortOrder") or ""),
    )


def _preferred(raw: list[Mapping[str, Any]]) -> list[PreferredClusterSelector]:
    return [PreferredClusterSelector(int(t["weight"]), _term(t.get("preference") or {})) for t in raw]


def _extremes(low: str, high: str) -> Extremes:
    return Extremes(parse_quantity(low), parse_quantity(high), approx_float(low), approx_float(high))


def _expect_error(vector: dict[str, Any], run: Callable[[], Any]) -> Any:
    """Run `run`; when the vector expects an error, assert a SchedulingError and return None."""
    if vector["expected"].get("error"):
        try:
            run()
        except SchedulingError:
            return None
        raise AssertionError(f"{vector.get('source')}: expected a scheduling error")
    return run()


def run_property_sorter_interpolation(vector: dict[str, Any]) -> None:
    data = vector["input"]
    extremes = None
    if data.get("observedMin") is not None:
        extremes = _extremes(data["observedMin"], data["observedMax"])
    weight = _expect_error(
        vector,
        lambda: interpolate_weight(
            _cluster(data["cluster"]),
            data["propertyName"],
            data.get("sortOrder") or "",
            data["weight"],
            extremes,
        ),
    )
    if weight is not None:
        check(vector, "weight", weight, vector["expected"]["weight"])


def run_affinity_score(vector: dict[str, Any]) -> None:
    data = vector["input"]
    extremes = {name: _extremes(*pair) for name, pair in (data.get("observedMinMax") or {}).items()}
    score = _expect_error(
        vector,
        lambda: preferred_affinity_score(_cluster(data["cluster"]), _preferred(data["preferred"]), extremes),
    )
    if score is not None:
        check(vector, "affinityScore", score, vector["expected"]["affinityScore"])


def run_affinity_prescore_minmax(vector: dict[str, Any]) -> None:
    data = vector["input"]
    inventory = FleetInventory(_cluster(c) for c in data["clusters"])
    preferred = [
        PreferredClusterSelector(1, ClusterSelectorTerm(property_sorter=PropertySorter(name, "Descending")))
        for name in data["sorterProperties"]
    ]
    found = observed_extremes(inventory, preferred)
    for name, expected in vector["expected"]["minMax"].items():
        bounds = found.get(name)
        actual = None if bounds is None else [bounds.minimum, bounds.maximum]
        wanted = None if expected is None else [parse_quantity(v) for v in expected]
        check(vector, f"minMax.{name}", actual, wanted)


def run_property_selector_match(vector: dict[str, Any]) -> None:
    data = vector["input"]
    matches = _expect_error(vector, lambda: term_matches(_cluster(data["cluster"]), _term(data["term"])))
    if matches is not None:
        check(vector, "matches", matches, vector["expected"]["matches"])


def run_taint_toleration_filter(vector: dict[str, Any]) -> None:
    data = vector["input"]
    tolerations = [
        Toleration(t.get("key", ""), t.get("operator") or "Equal", t.get("value", ""), t.get("effect", ""))
        for t in data["tolerations"]
    ]
    taint = first_untolerated_taint([_taint(t) for t in data["clusterTaints"]], tolerations)
    expected = vector["expected"]
    check(vector, "schedulable", taint is None, expected["schedulable"])
    wanted = expected["firstUntoleratedTaint"]
    check(vector, "firstUntoleratedTaint", None if wanted is None else _taint(wanted), taint)


def run_topology_will_violate(vector: dict[str, Any]) -> None:
    data = vector["input"]
    violated, change = will_violate(data["domainCounts"], data["domain"], data["maxSkew"])
    expected = vector["expected"]
    check(vector, "violated", violated, expected["violated"])
    check(vector, "skewChange", change, expected["skewChange"])
    for key, value in expected.items():
        if key.startswith("scoreContribution"):
            check(vector, key, -change, value)


def run_topology_evaluate_all(vector: dict[str, Any]) -> None:
    data = vector["input"]
    inventory = FleetInventory(_cluster(c) for c in data["clusters"])
    has_binding = np.array([False] * len(inventory))
    for raw in data["clusters"]:
        has_binding[inventory.index[raw["name"]]] = bool(raw.get("hasScheduledOrBoundBinding"))
    constraints = [
        TopologySpreadConstraint(
            c["topologyKey"], c.get("maxSkew", 1), c.get("whenUnsatisfiable") or "DoNotSchedule"
        )
        for c in data["constraints"]
    ]
    spread = TopologySpread(inventory, constraints, has_binding)
    violation, scores = spread.evaluate()
    violations = {
        name: [violation_reason(spread.constraints[violation[i]])]
        for i, name in enumerate(inventory.names)
        if violation[i] != NO_VIOLATION
    }
    expected = vector["expected"]
    check(vector, "violations", violations, expected["violations"])
    actual_scores = {
        name: int(scores[i]) for i, name in enumerate(inventory.names) if violation[i] == NO_VIOLATION
    }
    check(vector, "topologySpreadScores", actual_scores, expected["topologySpreadScores"])


def _scored(raw: list[Mapping[str, Any]]) -> list[ScoredCluster]:
    return [
        ScoredCluster(
            c["name"],
            c["topologySpreadScore"],
            c["affinityScore"],
            c.get("obsoletePlacementAffinityScore", 0),
        )
        for c in raw
    ]


def run_pickn_sort_order(vector: dict[str, Any]) -> None:
    ordered = sort_scored_clusters(_scored(vector["input"]["scored"]))
    check(vector, "descendingOrder", [c.name for c in ordered], vector["expected"]["descendingOrder"])


def run_pickn_pick_top_n(vector: dict[str, Any]) -> None:
    data = vector["input"]
    picked, not_picked = pick_top_n(_scored(data["scored"]), data["n"])
    check(vector, "picked", [c.name for c in picked], vector["expected"]["picked"])
    if "notPicked" in vector["expected"]:
        check(vector, "notPicked", [c.name for c in not_picked], vector["expected"]["notPicked"])


ADAPTERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "property_sorter_interpolation": run_property_sorter_interpolation,
    "affinity_score": run_affinity_score,
    "affinity_prescore_minmax": run_affinity_prescore_minmax,
    "property_selector_match": run_property_selector_match,
    "taint_toleration_filter": run_taint_toleration_filter,
    "topology_will_violate": run_topology_will_violate,
    "topology_evaluate_all": run_topology_evaluate_all,
    "pickn_sort_order": run_pickn_sort_order,
    "pickn_pick_top_n": run_pickn_pick_top_n,
}
