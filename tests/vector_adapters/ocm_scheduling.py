"""Vector adapters for the OCM scheduler core: prioritizers, filters, Schedule and set membership.

Vector objects are turned into hub manifests and parsed by the product's `parse_ocm_object`, then run
through the same functions a reconcile uses.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np

from placement.scheduler.ocm.clustersets import ClusterSetSelectorError, eligible_cluster_sets, valid_bindings
from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.manifests import parse_ocm_object
from placement.scheduler.ocm.predicate import filter_predicates
from placement.scheduler.ocm.prioritizers import prioritizers_for, score
from placement.scheduler.ocm.schedule import available_clusters, schedule_candidates
from placement.scheduler.ocm.status import ScheduleStatus
from placement.scheduler.ocm.taints import filter_taints, placement_requeue_time
from placement.scheduler.ocm.types import (
    EXACT,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    Placement,
    PlacementDecision,
    PrioritizerConfig,
    PrioritizerPolicy,
    ScoreCoordinate,
)
from placement.scheduler.ocm.types import AddOnScoreCoordinate as AddOnCoordinate
from placement.scheduler.timeutil import parse_time
from tests.vector_adapters.common import check

API = "cluster.open-cluster-management.io"
DEFAULT_NOW = "2022-01-01T00:00:00Z"  # meta.conventions.now


def _parse(doc: dict[str, Any]) -> Any:
    return parse_ocm_object(doc, lambda _message: None)


def _now(vector: dict[str, Any]) -> datetime:
    moment = parse_time(vector.get("now") or DEFAULT_NOW)
    assert moment is not None
    return moment


def _deletion_timestamp(value: Any, vector: dict[str, Any]) -> str | None:
    """`"deletionTimestamp": "set"` in vectors only says the field is set."""
    if not value:
        return None
    try:
        return value if parse_time(value) else None
    except ValueError:
        return vector.get("now") or DEFAULT_NOW


def _cluster(raw: dict[str, Any], vector: dict[str, Any]) -> ManagedCluster:
    claims = raw.get("claims") or {}
    claim_list = [{"name": k, "value": v} for k, v in claims.items()] if isinstance(claims, dict) else claims
    metadata: dict[str, Any] = {"name": raw["name"], "labels": raw.get("labels") or {}}
    if (deleted := _deletion_timestamp(raw.get("deletionTimestamp"), vector)) is not None:
        metadata["deletionTimestamp"] = deleted
    doc = {
        "apiVersion": f"{API}/v1",
        "kind": "ManagedCluster",
        "metadata": metadata,
        "spec": {"taints": raw.get("taints") or []},
        "status": {
            "clusterClaims": claim_list,
            "allocatable": raw.get("allocatable") or {},
            "capacity": raw.get("capacity") or {},
            "conditions": raw.get("conditions") or [],
        },
    }
    return _parse(doc)


def _placement(raw: dict[str, Any]) -> Placement:
    spec = {k: v for k, v in raw.items() if k not in ("namespace", "name", "annotations")}
    metadata = {"namespace": raw.get("namespace", "default"), "name": raw["name"]}
    if raw.get("annotations"):
        metadata["annotations"] = raw["annotations"]
    return _parse({"apiVersion": f"{API}/v1beta1", "kind": "Placement", "metadata": metadata, "spec": spec})


def _decision(raw: dict[str, Any]) -> PlacementDecision:
    metadata = {"namespace": raw["namespace"], "name": raw["name"], "labels": raw.get("labels") or {}}
    decisions = [{"clusterName": name, "reason": ""} for name in raw.get("decisions") or []]
    doc = {"apiVersion": f"{API}/v1beta1", "kind": "PlacementDecision", "metadata": metadata}
    return _parse(doc | {"status": {"decisions": decisions}})


def _add_on_score(raw: dict[str, Any]) -> AddOnPlacementScore:
    status: dict[str, Any] = {"scores": raw.get("scores") or []}
    if raw.get("validUntil"):
        status["validUntil"] = raw["validUntil"]
    metadata = {"namespace": raw["namespace"], "name": raw["name"]}
    return _parse(
        {"apiVersion": f"{API}/v1alpha1", "kind": "AddOnPlacementScore", "metadata": metadata}
        | {"status": status}
    )


def _cluster_set(raw: dict[str, Any] | str) -> ManagedClusterSet:
    raw = {"name": raw} if isinstance(raw, str) else raw
    selector: dict[str, Any] = {"selectorType": raw.get("selectorType", "")}
    if "labelSelector" in raw:
        selector["labelSelector"] = raw["labelSelector"]
    doc = {"apiVersion": f"{API}/v1beta2", "kind": "ManagedClusterSet", "metadata": {"name": raw["name"]}}
    return _parse(doc | {"spec": {"clusterSelector": selector}})


def _binding(raw: dict[str, Any]) -> ManagedClusterSetBinding:
    # built directly: the scheduler reads only the name, whatever the webhook would have said
    return ManagedClusterSetBinding(raw["namespace"], raw["name"], raw.get("clusterSet", raw["name"]))


def _inventory(vector: dict[str, Any]) -> OcmInventory:
    return OcmInventory(
        clusters=[_cluster(c, vector) for c in vector.get("clusters") or []],
        cluster_sets=[_cluster_set(s) for s in vector.get("clusterSets") or []],
        bindings=[_binding(b) for b in vector.get("bindings") or []],
        add_on_scores=[_add_on_score(s) for s in vector.get("addon_placement_scores") or []],
        decisions=[_decision(d) for d in vector.get("existing_decisions") or []],
    )


def _candidates(vector: dict[str, Any], inventory: OcmInventory) -> np.ndarray:
    """The vector's clusters, in the vector's order, as inventory positions."""
    return np.asarray([inventory.position[c["name"]] for c in vector.get("clusters") or []], dtype=np.int64)


def _check_status(vector: dict[str, Any], status: ScheduleStatus) -> None:
    for key, expected in (vector.get("expected_status") or {}).items():
        check(vector, f"expected_status.{key}", getattr(status, key), expected)


def _names(inventory: OcmInventory, positions: np.ndarray | None) -> list[str]:
    return [] if positions is None else [inventory.names[p] for p in positions]


def _coordinate(plugin: str) -> ScoreCoordinate:
    if plugin.startswith("AddOn/"):
        _, resource, score_name = plugin.split("/", 2)
        return ScoreCoordinate("AddOn", add_on=AddOnCoordinate(resource, score_name))
    return ScoreCoordinate("BuiltIn", plugin)


def run_prioritizer(vector: dict[str, Any]) -> None:
    """Balance / Steady / ResourceAllocatable* / AddOn/<res>/<score>: one prioritizer's score map."""
    inventory = _inventory(vector)
    placement = _placement(vector["placement"])
    policy = PrioritizerPolicy(EXACT, (PrioritizerConfig(_coordinate(vector["plugin"]), 1),))
    (prioritizer,) = prioritizers_for(policy)
    candidates = _candidates(vector, inventory)
    result = score(prioritizer, placement, inventory, candidates, _now(vector))
    scores = {
        inventory.names[p]: int(v)
        for p, v, s in zip(candidates, result.values, result.scored, strict=True)
        if s
    }
    check(vector, "expected_scores", scores, vector["expected_scores"])
    if "expected_status" in vector:
        status = (
            ScheduleStatus("Warning", prioritizer.name, result.warning)
            if result.warning
            else ScheduleStatus()
        )
        _check_status(vector, status)


def run_taint_toleration(vector: dict[str, Any]) -> None:
    """TaintToleration Filter + RequeueAfter."""
    inventory = _inventory(vector)
    placement = _placement(vector["placement"])
    now = _now(vector)
    filtered, status = filter_taints(placement, inventory, _candidates(vector, inventory), now)
    check(
        vector, "expected_selected", sorted(_names(inventory, filtered)), sorted(vector["expected_selected"])
    )
    _check_status(vector, status)
    if "expected_requeue_time" in vector:
        requeue = placement_requeue_time(placement, inventory, now)
        expected = vector["expected_requeue_time"]
        if isinstance(expected, int | float):
            # a number is the delay after `now` in seconds
            actual: Any = None if requeue is None else (requeue - now).total_seconds()
            check(vector, "expected_requeue_time", actual, float(expected))
        else:
            check(vector, "expected_requeue_time", requeue, parse_time(expected))


def run_predicate(vector: dict[str, Any]) -> None:
    """Predicate Filter."""
    inventory = _inventory(vector)
    placement = _placement(vector["placement"])
    result = filter_predicates(placement, inventory, _candidates(vector, inventory))
    check(
        vector,
        "expected_selected",
        sorted(_names(inventory, result.filtered)),
        sorted(vector["expected_selected"]),
    )
    _check_status(vector, result.status)


def run_scheduler(vector: dict[str, Any]) -> None:
    """Schedule(ctx, placement, clusters) with the vector's clusters as the candidate list."""
    inventory = _inventory(vector)
    placement = _placement(vector["placement"])
    outcome = schedule_candidates(placement, inventory, _candidates(vector, inventory), _now(vector))
    selected = _names(inventory, outcome.selected)
    if "expected_decisions_in_score_order" in vector:
        check(
            vector, "expected_decisions_in_score_order", selected, vector["expected_decisions_in_score_order"]
        )
    if "expected_selected" in vector:
        check(vector, "expected_selected", sorted(selected), sorted(vector["expected_selected"]))
    if "expected_filter_results" in vector:
        actual = outcome.filter_results(inventory.names)
        check(vector, "expected_filter_results", actual, vector["expected_filter_results"])
    results = sorted(outcome.prioritizer_results(inventory.names), key=lambda r: r["name"])
    if "expected_prioritizer_results" in vector:
        expected = sorted(vector["expected_prioritizer_results"], key=lambda r: r["name"])
        check(vector, "expected_prioritizer_results", results, expected)
    if "derived_prioritizer_scores" in vector:
        actual_scores = {r["name"]: r["scores"] for r in results}
        for name, expected_scores in vector["derived_prioritizer_scores"].items():
            check(vector, "derived_prioritizer_scores", actual_scores.get(name), expected_scores)
    if "derived_total_scores" in vector:
        check(
            vector,
            "derived_total_scores",
            dict(outcome.total_scores(inventory.names)),
            vector["derived_total_scores"],
        )
    if "expected_unscheduled" in vector:
        check(vector, "expected_unscheduled", outcome.unscheduled, vector["expected_unscheduled"])
    _check_status(vector, outcome.status)


_ERROR_KEYS = ("expected_error", "expect_error", "expected_err")


def run_get_available_clusters(vector: dict[str, Any]) -> None:
    """Members of the named sets, deduplicated, without deleting clusters; unknown selectorType errors.

    Upstream's test ignores the error and expects no clusters; an explicit error key is checked too.
    """
    inventory = _inventory(vector)
    errored = False
    try:
        names = _names(inventory, available_clusters(inventory, vector.get("clusterSetNames") or []))
    except ClusterSetSelectorError:
        errored, names = True, []
    for key in _ERROR_KEYS:
        if key in vector:
            check(vector, key, errored, bool(vector[key]))
    if vector.get("expected") is not None:
        check(vector, "expected", sorted(names), sorted(vector["expected"]))


def run_get_eligible_cluster_sets(vector: dict[str, Any]) -> None:
    """Bound set names intersected with spec.clusterSets, sorted."""
    bound = [b if isinstance(b, str) else b["name"] for b in vector.get("valid_bindings") or []]
    actual = eligible_cluster_sets(vector.get("placement_clusterSets") or [], bound)
    check(vector, "expected", actual, vector["expected"])


def run_get_valid_bindings(vector: dict[str, Any]) -> None:
    """Bindings of the placement namespace whose name is an existing ManagedClusterSet."""
    bindings = [_binding(b) for b in vector.get("bindings") or []]
    namespace = vector.get("namespace") or (vector.get("placement") or {}).get("namespace")
    namespace = namespace or (bindings[0].namespace if bindings else "default")
    set_names = [_cluster_set(s).name for s in vector.get("clusterSets") or []]
    actual = [b.name for b in valid_bindings(namespace, bindings, set_names)]
    expected = [e if isinstance(e, str) else e["name"] for e in vector["expected"]]
    check(vector, "expected", sorted(actual), sorted(expected))


ADAPTERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Balance": run_prioritizer,
    "Steady": run_prioritizer,
    "ResourceAllocatableCPU": run_prioritizer,
    "ResourceAllocatableMemory": run_prioritizer,
    "AddOn/": run_prioritizer,
    "TaintToleration": run_taint_toleration,
    "Predicate": run_predicate,
    "Scheduler": run_scheduler,
    "GetAvailableClusters": run_get_available_clusters,
    "GetEligibleClusterSets": run_get_eligible_cluster_sets,
    "GetValidManagedClusterSetBindings": run_get_valid_bindings,
}
