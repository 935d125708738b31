"""Our verdicts for a hand-written case of each family, worked out from the upstream rules."""

from __future__ import annotations

import copy

import pytest

from conformance.verdict import our_result, seconds
from tests.conformance.cases import fleet_case, ocm_case

SATISFIED = [
    {"type": "PlacementMisconfigured", "status": "False", "reason": "Succeedconfigured"},
    {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled"},
]


def test_ocm_verdict_holds_the_filters_scores_decisions_and_requeue() -> None:
    result = our_result(ocm_case())

    assert result["placements"] == [
        {
            "kind": "Placement",
            "namespace": "web",
            "name": "frontend",
            "conditions": SATISFIED,
            # c4: untolerated taint, c5: predicate, c6: not in a set bound to `web`
            "feasible": ["c1", "c2", "c3"],
            "scores": {
                # nobody else decided anything: every cluster scores the maximum
                "Balance": {"c1": 100, "c2": 100, "c3": 100},
                # allocatable 4, 8, 6 spread over -100..100
                "ResourceAllocatableCPU": {"c1": -100, "c2": 100, "c3": 0},
                # c3 is in the placement's existing decision
                "Steady": {"c1": 0, "c2": 0, "c3": 100},
            },
            "totals": {"c1": -100, "c2": 300, "c3": 200},
            "decisions": [
                {"name": "frontend-decision-1", "groupName": "", "groupIndex": 0, "clusters": ["c2", "c3"]}
            ],
            "numberOfSelectedClusters": 2,
            "decisionGroups": [
                {
                    "decisionGroupIndex": 0,
                    "decisionGroupName": "",
                    "decisions": ["frontend-decision-1"],
                    "clusterCount": 2,
                }
            ],
            # c3 was decided before and its taint is tolerated until 11:59 + 300 s
            "requeueAfterSeconds": 240.0,
        }
    ]
    assert result["elapsedNs"] > 0


def test_ocm_placement_with_scheduling_disabled_keeps_its_decisions_and_runs_no_filter() -> None:
    case = ocm_case()
    placement = case["manifests"][9]
    placement["metadata"]["annotations"] = {
        "cluster.open-cluster-management.io/experimental-scheduling-disable": "true"
    }

    (verdict,) = our_result(case)["placements"]

    assert verdict["feasible"] is None
    assert verdict["conditions"] == []
    assert verdict["decisions"] == [
        {"name": "frontend-decision-1", "groupName": "", "groupIndex": 0, "clusters": ["c3"]}
    ]


@pytest.mark.parametrize(
    ("label", "index"), [("-1", -1), ("+2", 2), ("x", None), ("1.0", None), (" 1", None), ("1\n", None)]
)
def test_ocm_group_index_label_reads_as_strconv_atoi_does(label: str, index: int | None) -> None:
    case = ocm_case()
    placement = case["manifests"][9]
    # the controller leaves the decision (and its labels) as they are
    placement["metadata"]["annotations"] = {
        "cluster.open-cluster-management.io/experimental-scheduling-disable": "true"
    }
    decision = next(m for m in case["manifests"] if m["kind"] == "PlacementDecision")
    decision["metadata"]["labels"]["cluster.open-cluster-management.io/decision-group-index"] = label

    (verdict,) = our_result(case)["placements"]

    assert [d["groupIndex"] for d in verdict["decisions"]] == [index]


def test_fleet_verdict_holds_decisions_bindings_and_condition() -> None:
    (verdict,) = our_result(fleet_case())["placements"]

    assert verdict == {
        "kind": "ClusterResourcePlacement",
        "name": "web",
        "conditions": [{"type": "Scheduled", "status": "True", "reason": "SchedulingPolicyFulfilled"}],
        "decisions": [
            {
                "clusterName": "m1",
                "selected": True,
                "clusterScore": {"affinityScore": 10, "topologySpreadScore": 0},
            },
            {
                "clusterName": "m2",
                "selected": True,
                "clusterScore": {"affinityScore": 0, "topologySpreadScore": 0},
            },
            # filtered by its taint: listed unselected, without a score
            {"clusterName": "m3", "selected": False, "clusterScore": None},
        ],
        # the binding being deleted and the other placement's binding are not listed
        "bindings": [
            {
                "targetCluster": "m1",
                "state": "Scheduled",
                "clusterScore": {"affinityScore": 10, "topologySpreadScore": 0},
            },
            {
                "targetCluster": "m2",
                "state": "Scheduled",
                "clusterScore": {"affinityScore": 0, "topologySpreadScore": 0},
            },
        ],
        "requeueAfterSeconds": None,
        "error": None,
    }


def test_existing_bindings_the_scheduler_leaves_alone_stay_in_the_verdict() -> None:
    case = fleet_case()
    # a PickFixed of m2 only: the existing Bound binding of `web` on m1 is not the scheduler's to touch
    crp = case["manifests"][5]
    crp["spec"]["policy"] = {"placementType": "PickFixed", "clusterNames": ["m2"]}
    kept = copy.deepcopy(case["manifests"][3])
    kept["metadata"] = {"name": "web-m1", "labels": kept["metadata"]["labels"]}
    kept["spec"]["targetCluster"] = "m1"
    case["manifests"].append(kept)

    (verdict,) = our_result(case)["placements"]

    assert [(b["targetCluster"], b["state"]) for b in verdict["bindings"]] == [
        ("m1", "Bound"),
        ("m2", "Scheduled"),
    ]


def test_a_case_our_parser_refuses_is_an_error_result() -> None:
    case = ocm_case()
    case["manifests"][9]["spec"]["numberOfClusters"] = "two"

    result = our_result(case)

    assert set(result) == {"error"}
    assert "ocm-hand-1: document 10: spec.numberOfClusters" in result["error"]


@pytest.mark.parametrize(
    ("delay", "written"),
    [(60.9995, 61.0), (297.0005, 297.001), (0.0005, 0.001), (2.000499, 2.0), (240.0, 240.0), (None, None)],
)
def test_ocm_requeue_delay_rounds_half_milliseconds_away_from_zero(
    delay: float | None, written: float | None
) -> None:
    assert seconds(delay) == written
