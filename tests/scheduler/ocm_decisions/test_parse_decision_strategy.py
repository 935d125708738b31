"""spec.decisionStrategy parsing: CRD rejections only, everything else is a scheduling matter."""

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.labels import LabelSelector, Requirement
from placement.scheduler.ocm.decisions import DecisionGroupSpec, DecisionStrategy, parse_decision_strategy


def test_missing_strategy_is_one_group_of_100_percent() -> None:
    assert parse_decision_strategy(None) == DecisionStrategy("100%", ())
    assert parse_decision_strategy({"groupStrategy": {}}) == DecisionStrategy("100%", ())


def test_groups_with_label_and_claim_selectors() -> None:
    raw = {
        "groupStrategy": {
            "clustersPerDecisionGroup": 150,
            "decisionGroups": [
                {
                    "groupName": "prod-canary-west",
                    "groupClusterSelector": {
                        "labelSelector": {
                            "matchExpressions": [{"key": "prod-canary-west", "operator": "Exists"}]
                        },
                        "claimSelector": {
                            "matchExpressions": [{"key": "region", "operator": "In", "values": ["w"]}]
                        },
                    },
                }
            ],
        }
    }
    assert parse_decision_strategy(raw) == DecisionStrategy(
        150,
        (
            DecisionGroupSpec(
                "prod-canary-west",
                LabelSelector(match_expressions=(Requirement("prod-canary-west", "Exists"),)),
                (Requirement("region", "In", ("w",)),),
            ),
        ),
    )


def test_non_percentage_string_is_accepted_for_the_scheduler_to_report() -> None:
    assert (
        parse_decision_strategy(
            {"groupStrategy": {"clustersPerDecisionGroup": "25"}}
        ).clusters_per_decision_group
        == "25"
    )


_GROUPS = "spec.decisionStrategy.groupStrategy"
_MISSING_OPERATOR = {"matchExpressions": [{"key": "a"}]}


@pytest.mark.parametrize(
    ("group_strategy", "field"),
    [
        ({"clustersPerDecisionGroup": True}, f"{_GROUPS}.clustersPerDecisionGroup"),
        ({"clustersPerDecisionGroup": [1]}, f"{_GROUPS}.clustersPerDecisionGroup"),
        ({"decisionGroups": [{"groupClusterSelector": {}}]}, f"{_GROUPS}.decisionGroups[0].groupName"),
        (
            {"decisionGroups": [{"groupName": "x", "groupClusterSelector": {}}]},
            f"{_GROUPS}.decisionGroups[0].groupName",
        ),
        ({"decisionGroups": [{"groupName": "canary"}]}, f"{_GROUPS}.decisionGroups[0].groupClusterSelector"),
        (
            {
                "decisionGroups": [
                    {"groupName": "canary", "groupClusterSelector": {"labelSelector": _MISSING_OPERATOR}}
                ]
            },
            f"{_GROUPS}.decisionGroups[0].groupClusterSelector.labelSelector.matchExpressions[0].operator",
        ),
    ],
)
def test_crd_rejections_name_the_field(group_strategy: dict, field: str) -> None:
    with pytest.raises(ManifestError) as raised:
        parse_decision_strategy({"groupStrategy": group_strategy})
    assert raised.value.field == field
