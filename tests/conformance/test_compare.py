"""Comparing the oracle's result with ours: one readable line per differing field."""

from __future__ import annotations

import copy
from typing import Any

from conformance.compare import compare, differences


def ocm_verdict() -> dict[str, Any]:
    return {
        "kind": "Placement",
        "namespace": "web",
        "name": "frontend",
        "conditions": [{"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled"}],
        "feasible": ["c1", "c2"],
        "scores": {"Balance": {"c1": 100, "c2": 100}},
        "totals": {"c1": 100, "c2": 100},
        "decisions": [{"name": "frontend-decision-1", "groupName": "", "groupIndex": 0, "clusters": ["c1"]}],
        "numberOfSelectedClusters": 1,
        "decisionGroups": [],
        "requeueAfterSeconds": None,
    }


def fleet_verdict() -> dict[str, Any]:
    return {"kind": "ClusterResourcePlacement", "name": "web", "decisions": [], "requeueAfterSeconds": 25}


def test_equal_results_agree_whatever_the_oracle_adds_around_them() -> None:
    upstream = {"id": "ocm-1", "placements": [ocm_verdict()], "error": "", "elapsedNs": 1234}

    assert differences(upstream, {"placements": [ocm_verdict()], "elapsedNs": 99}) == []


def test_each_differing_field_is_one_line_with_its_path_and_both_values() -> None:
    ours = ocm_verdict()
    ours["scores"]["Balance"]["c1"] = 0
    ours["decisions"][0]["clusters"] = ["c2"]

    assert differences({"placements": [ocm_verdict()]}, {"placements": [ours]}) == [
        "Placement web/frontend: scores.Balance.c1: upstream 100, ours 0",
        'Placement web/frontend: decisions[0].clusters[0]: upstream "c1", ours "c2"',
    ]


def test_lists_of_different_lengths_are_shown_whole_and_missing_keys_as_null() -> None:
    ours = ocm_verdict()
    ours["feasible"] = ["c1"]
    del ours["totals"]["c2"]

    assert differences({"placements": [ocm_verdict()]}, {"placements": [ours]}) == [
        'Placement web/frontend: feasible: upstream ["c1", "c2"], ours ["c1"]',
        "Placement web/frontend: totals.c2: upstream 100, ours null",
    ]


def test_a_whole_number_agrees_with_its_float_but_a_boolean_is_no_number() -> None:
    ours = fleet_verdict()
    ours["requeueAfterSeconds"] = 25.0
    assert differences({"placements": [fleet_verdict()]}, {"placements": [ours]}) == []

    upstream, mine = fleet_verdict(), fleet_verdict()
    upstream["decisions"], mine["decisions"] = [{"selected": True}], [{"selected": 1}]
    assert differences({"placements": [upstream]}, {"placements": [mine]}) == [
        "ClusterResourcePlacement web: decisions[0].selected: upstream true, ours 1"
    ]


def test_an_error_on_one_side_only_is_a_difference_and_on_both_sides_agreement() -> None:
    accepted = {"placements": [ocm_verdict()], "error": ""}

    assert differences({"error": "bad selector"}, accepted) == ['case: upstream "bad selector", ours null']
    assert differences(accepted, {"error": "document 3: bad"}) == [
        'case: upstream null, ours "document 3: bad"'
    ]
    assert differences({"placements": None, "error": "refused"}, {"error": "other words"}) == []


def test_placements_that_do_not_pair_up_are_one_difference() -> None:
    other = copy.deepcopy(ocm_verdict()) | {"name": "backend"}

    assert differences({"placements": [ocm_verdict()]}, {"placements": [other]}) == [
        'case: placements: upstream ["Placement web/frontend"], ours ["Placement web/backend"]'
    ]


def test_each_difference_has_the_kind_of_field_it_is() -> None:
    ours = ocm_verdict()
    ours["totals"]["c1"] = 5
    ours["conditions"][0]["reason"] = "NotAllDecisionsScheduled"
    ours["decisions"] = []

    found = compare({"placements": [ocm_verdict()]}, {"placements": [ours]})

    assert [difference.kind for difference in found] == ["conditions.reason", "totals.c1", "decisions"]
    assert [difference.kind for difference in compare({"error": "x"}, {"placements": []})] == ["error"]


def test_an_aborted_cycle_agrees_whatever_each_side_says_about_it() -> None:
    upstream = fleet_verdict() | {"error": "unexpected behavior: invalid property x"}
    ours = fleet_verdict() | {"error": "ClusterAffinity: invalid property x"}
    carried_on = fleet_verdict() | {"error": None}

    assert differences({"placements": [upstream]}, {"placements": [ours]}) == []
    assert differences({"placements": [upstream]}, {"placements": [carried_on]}) == [
        'ClusterResourcePlacement web: error: upstream "unexpected behavior: invalid property x", ours null'
    ]
