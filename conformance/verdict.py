"""Our side of a conformance case: run our scheduler offline and shape its reports as verdicts.

The verdict shapes are those of conformance/README.md, so our result and the oracle's compare with
plain equality. A case our parser rejects yields `{"error": ...}` instead of verdicts: the comparison
counts that as a disagreement only when upstream accepted the case.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from conformance.cases import Case
from placement.scheduler.documents import Document, Family, ManifestProblems, shape_problems
from placement.scheduler.fleet.types import ClusterResourceBinding
from placement.scheduler.intstr import go_atoi
from placement.scheduler.ocm.decisions import DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL
from placement.scheduler.offline import (
    CLUSTER_RESOURCE_PLACEMENT,
    PLACEMENT,
    ParsedManifests,
    parse_documents,
    run_offline,
)
from placement.scheduler.timeutil import parse_time

# the controller writes these two conditions; others on an existing status are not compared
OCM_CONDITION_TYPES = ("PlacementMisconfigured", "PlacementSatisfied")


def case_documents(case: Case) -> list[Document]:
    """The case's manifests as Documents, numbered from 1 in case order, the source named by the case id."""
    return [Document(case["id"], number, body) for number, body in enumerate(case["manifests"], 1)]


def our_result(case: Case) -> dict[str, Any]:
    """Our verdicts for every Placement / CRP of the case, or `{"error": ...}` when we refuse the case.

    `elapsedNs` counts the offline run only (parsing included, as a `schedule` run pays it too).
    """
    now = parse_time(case["now"])
    if now is None:
        return {"error": "the case has no scheduling time"}
    documents = case_documents(case)
    shape = [problem for document in documents for problem in shape_problems(document)]
    if shape:
        return {"error": str(ManifestProblems(shape))}
    started = time.perf_counter_ns()
    try:
        run = run_offline(documents, now)
    except ManifestProblems as exc:
        return {"error": str(exc)}
    elapsed = time.perf_counter_ns() - started
    parsed = parse_documents(documents, lambda _warning: None)
    placements = [_verdict(report, parsed) for report in run.reports]
    return {"placements": placements, "elapsedNs": elapsed}


def _verdict(report: Mapping[str, Any], parsed: ParsedManifests) -> dict[str, Any]:
    if report["kind"] == PLACEMENT:
        return ocm_verdict(report)
    return fleet_verdict(report, parsed.of_kind(Family.FLEET, "ClusterResourceBinding"))


def seconds(value: float | None) -> float | None:
    """A delay as both oracles write it: whole milliseconds rounded half away from zero (Go's
    math.Round), read from the decimal digits of our microsecond delay so that a half millisecond is a
    tie and not a float a hair below or above one; None for no delay."""
    if value is None:
        return None
    milliseconds = (Decimal(repr(value)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return float(milliseconds / 1000)


def ocm_verdict(report: Mapping[str, Any]) -> dict[str, Any]:
    """The OCM verdict of one `schedule -o json` Placement report.

    A placement the controller does not schedule (skipped, or an error before scheduling) runs no
    filter and writes nothing: it has no feasible clusters and keeps the decisions it had.
    """
    ran = not report.get("skipped") and "error" not in report
    scored = [row for row in report["clusters"] if row["rank"] is not None]
    # every prioritizer that ran is listed, even over no feasible cluster
    scores: dict[str, dict[str, int]] = {prioritizer: {} for prioritizer in report["weights"]}
    for row in scored:
        for prioritizer, value in row["scores"].items():
            scores[prioritizer][row["name"]] = value
    feasible = report["feasible"] if ran else None
    return {
        "kind": PLACEMENT,
        "namespace": report["namespace"],
        "name": report["name"],
        "conditions": _conditions(c for c in report["conditions"] if c["type"] in OCM_CONDITION_TYPES),
        "feasible": None if feasible is None else sorted(feasible),
        "scores": {
            prioritizer: dict(sorted(values.items())) for prioritizer, values in sorted(scores.items())
        },
        "totals": {row["name"]: row["total"] for row in sorted(scored, key=lambda row: row["name"])},
        "decisions": [_decision(held) for held in report["heldDecisions"]],
        "numberOfSelectedClusters": report["numberOfSelectedClusters"],
        "decisionGroups": [dict(group) for group in report["decisionGroups"]],
        "requeueAfterSeconds": seconds(report["requeueAfterSeconds"]),
    }


def _decision(held: Mapping[str, Any]) -> dict[str, Any]:
    labels = held["labels"]
    return {
        "name": held["name"],
        "groupName": labels.get(DECISION_GROUP_NAME_LABEL, ""),
        "groupIndex": _group_index(labels.get(DECISION_GROUP_INDEX_LABEL)),
        "clusters": held["clusters"],
    }


def _group_index(label: str | None) -> int | None:
    """The group index label as the oracle reads it with strconv.Atoi: null when it is missing or no
    integer (a decision the controller kept without relabelling it, when it only patched the status)."""
    if label is None:
        return None
    try:
        return go_atoi(label)
    except ValueError:
        return None


def _conditions(conditions: Any) -> list[dict[str, str]]:
    kept = [{key: condition[key] for key in ("type", "status", "reason")} for condition in conditions]
    return sorted(kept, key=lambda condition: condition["type"])


def fleet_verdict(report: Mapping[str, Any], existing: Sequence[ClusterResourceBinding]) -> dict[str, Any]:
    """The Fleet verdict of one `schedule -o json` CRP report.

    The report lists only the bindings the scheduler changed; the verdict holds every binding of the
    CRP that is not being deleted afterwards, so the unchanged existing ones are laid under the changes.
    """
    name = report["name"]
    bindings = {b.name: b.to_manifest() for b in existing if b.placement_name == name and not b.deleting}
    bindings.update({b["metadata"]["name"]: b for b in report["bindings"]})
    return {
        "kind": CLUSTER_RESOURCE_PLACEMENT,
        "name": name,
        "conditions": _conditions(report["conditions"]),
        "decisions": sorted(
            (
                {
                    "clusterName": decision["clusterName"],
                    "selected": decision["selected"],
                    "clusterScore": _score(decision.get("clusterScore")),
                }
                for decision in report["decisions"]
            ),
            key=lambda decision: decision["clusterName"],
        ),
        "bindings": sorted(
            (_binding(binding["spec"]) for binding in bindings.values()),
            key=lambda binding: binding["targetCluster"],
        ),
        "requeueAfterSeconds": seconds(report.get("requeueAfterSeconds")),
        "error": report.get("error"),
    }


def _binding(spec: Mapping[str, Any]) -> dict[str, Any]:
    decision = spec.get("clusterDecision") or {}
    return {
        "targetCluster": spec["targetCluster"],
        "state": spec["state"],
        "clusterScore": _score(decision.get("clusterScore")),
    }


def _score(wire: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A wire `clusterScore` (topology score named `priorityScore`) in the contract's names."""
    if wire is None:
        return None
    return {"affinityScore": wire.get("affinityScore"), "topologySpreadScore": wire.get("priorityScore")}
