"""Label and claim selectors the hub admits but apimachinery cannot convert (upstream OCM behaviour).

The CRD schema checks only a selector's JSON types, so a hub stores an unknown operator, values with
Exists, In without values or a malformed key or value. The scheduling controller meets them when it
converts the selector: in a predicate or a decision group it reports PlacementMisconfigured; in a
ManagedClusterSet it cannot list the set's members and the whole reconcile errors.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from placement.scheduler.documents import Document
from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.offline import run_offline
from placement.scheduler.timeutil import parse_time
from tests.scheduler.ocm.builders import NOW, cluster_set, hub, member, placement

REGRESSIONS = Path(__file__).parents[2] / "vectors" / "regressions" / "ocm-selectors.json"

PROD = member("east-1", labels={"env": "prod"})


def _conditions(result: Any) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in result.conditions}


def _predicate(**selector: Any) -> list[dict[str, Any]]:
    return [{"requiredClusterSelector": selector}]


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "Equals", "values": ["a"]}]}},
            '"Equals" is not a valid label selector operator',
        ),
        (
            {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["a"]}]}},
            'values: Invalid value: ["a"]: values set must be empty for exists and does not exist',
        ),
        (
            {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "In"}]}},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"claimSelector": {"matchExpressions": [{"key": "", "operator": "Exists"}]}},
            'key: Invalid value: "": name part must be non-empty',
        ),
        ({"labelSelector": {"matchLabels": {"env": "-prod"}}}, 'values[0][env]: Invalid value: "-prod": '),
    ],
)
def test_a_predicate_selector_that_does_not_convert_is_misconfigured(selector, message):
    result = schedule_placement(placement(predicates=_predicate(**selector)), hub([PROD]), NOW)

    misconfigured, satisfied = _conditions(result).values()
    assert misconfigured[:2] == ("True", "Misconfigured")
    assert misconfigured[2].startswith(f"Predicate:{message}")
    assert satisfied[:2] == ("False", "NoManagedClusterMatched")
    assert result.outcome is not None and result.outcome.halted
    assert [d["status"]["decisions"] for d in result.decisions] == [[]]


def test_several_problems_in_one_requirement_are_listed_together():
    bad = {"matchExpressions": [{"key": "-env", "operator": "In"}]}
    result = schedule_placement(placement(predicates=_predicate(labelSelector=bad)), hub([PROD]), NOW)

    message = _conditions(result)["PlacementMisconfigured"][2]
    assert message.startswith('Predicate:[key: Invalid value: "-env": ')
    assert message.endswith(
        ", values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty]"
    )


def test_the_label_selector_is_converted_before_the_claim_selector_and_cel():
    predicates = _predicate(
        labelSelector={"matchExpressions": [{"key": "env", "operator": "Foo"}]},
        claimSelector={"matchExpressions": [{"key": "id", "operator": "Bar"}]},
        celSelector={"celExpressions": ["this is not CEL"]},
    )
    result = schedule_placement(placement(predicates=predicates), hub([PROD]), NOW)

    assert (
        _conditions(result)["PlacementMisconfigured"][2]
        == 'Predicate:"Foo" is not a valid label selector operator'
    )


def test_predicates_are_built_in_order_so_earlier_cel_errors_come_first():
    predicates = [
        {"requiredClusterSelector": {"celSelector": {"celExpressions": ["this is not CEL"]}}},
        *_predicate(labelSelector={"matchExpressions": [{"key": "env", "operator": "Foo"}]}),
    ]
    result = schedule_placement(placement(predicates=predicates), hub([PROD]), NOW)

    message = _conditions(result)["PlacementMisconfigured"][2]
    assert message.startswith("Predicate:") and "valid label selector operator" not in message


def test_without_candidate_clusters_the_predicates_are_never_built():
    bad = {"matchExpressions": [{"key": "env", "operator": "Foo"}]}
    result = schedule_placement(placement(predicates=_predicate(labelSelector=bad)), hub([]), NOW)

    assert _conditions(result)["PlacementMisconfigured"][:2] == ("False", "Succeedconfigured")


def test_a_bad_decision_group_selector_keeps_the_groups_built_before_it():
    groups = [
        {"groupName": "prod", "groupClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}},
        {"groupName": "odd", "groupClusterSelector": {"labelSelector": {"matchLabels": {"bad key": "x"}}}},
    ]
    strategy = {"groupStrategy": {"decisionGroups": groups}}
    dev = member("east-2", labels={"env": "dev"})
    result = schedule_placement(placement(decisionStrategy=strategy), hub([PROD, dev]), NOW)

    conditions = _conditions(result)
    # upstream: the group error has no plugin name, hence the leading ":"
    assert conditions["PlacementMisconfigured"][:2] == ("True", "Misconfigured")
    assert conditions["PlacementMisconfigured"][2].startswith(':key: Invalid value: "bad key": ')
    # the scheduler selected both clusters; only the groups before the bad one became decisions
    assert conditions["PlacementSatisfied"][:2] == ("True", "AllDecisionsScheduled")
    assert [(d["metadata"]["name"], d["status"]["decisions"]) for d in result.decisions] == [
        ("web-decision-1", [{"clusterName": "east-1", "reason": ""}])
    ]
    assert [(g["decisionGroupName"], g["clusterCount"]) for g in result.decision_groups] == [("prod", 1)]


def test_a_cluster_set_whose_selector_does_not_convert_fails_the_reconcile():
    broken = cluster_set("prod", "LabelSelector", {"matchExpressions": [{"key": "env", "operator": "Foo"}]})
    result = schedule_placement(placement(), hub([PROD], cluster_sets=[broken]), NOW)

    assert result.error == (
        'failed to get clusterset: prod, clusters, Error: "Foo" is not a valid label selector operator'
    )
    assert result.conditions == [] and result.decisions == []


def test_the_dashboard_lists_every_problem_of_a_placement_in_spec_order():
    groups = [
        {
            "groupName": "odd",
            "groupClusterSelector": {"claimSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
        }
    ]
    parsed = placement(
        predicates=_predicate(labelSelector={"matchLabels": {"env": "-x"}}),
        decisionStrategy={"groupStrategy": {"decisionGroups": groups}},
    )

    assert [problem.field for problem in parsed.selector_problems] == [
        "spec.predicates[0].requiredClusterSelector.labelSelector",
        "spec.decisionStrategy.groupStrategy.decisionGroups[0].groupClusterSelector.claimSelector",
    ]


def _regression_reports(vector_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A vector of the known-disagreement file, and our `schedule` reports for its manifests."""
    vectors = json.loads(REGRESSIONS.read_text())["vectors"]
    (vector,) = [v for v in vectors if v["id"] == vector_id]
    documents = [Document(vector_id, number, body) for number, body in enumerate(vector["manifests"], 1)]
    run = run_offline(documents, parse_time(vector["now"]))
    return vector, list(run.reports)


@pytest.mark.parametrize("vector_id", ["ocm-known-invalid-selectors", "ocm-known-invalid-set-selector"])
def test_the_regression_vectors_hold_upstreams_conditions_and_decisions(vector_id: str) -> None:
    vector, reports = _regression_reports(vector_id)

    for expected, report in zip(vector["expected"]["placements"], reports, strict=True):
        assert report["name"] == expected["name"]
        conditions = sorted((c["type"], c["status"], c["reason"]) for c in report["conditions"])
        assert conditions == [(c["type"], c["status"], c["reason"]) for c in expected["conditions"]]
        clusters = [[d["clusterName"] for d in page["status"]["decisions"]] for page in report["decisions"]]
        assert clusters == [decision["clusters"] for decision in expected["decisions"]]
        assert report["numberOfSelectedClusters"] == expected["numberOfSelectedClusters"]
        assert report["decisionGroups"] == expected["decisionGroups"]
        assert report["requeueAfterSeconds"] == expected["requeueAfterSeconds"]
