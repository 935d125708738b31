"""PlacementMisconfigured / PlacementSatisfied conditions and SetStatusCondition."""

from datetime import UTC, datetime

import pytest

from placement.scheduler.ocm.status import (
    ERROR,
    MISCONFIGURED,
    WARNING,
    ScheduleStatus,
    misconfigured_condition,
    satisfied_condition,
    set_condition,
)

NOW = datetime(2022, 1, 1, tzinfo=UTC)


def test_misconfigured_condition_keeps_the_empty_plugin_prefix() -> None:
    condition = misconfigured_condition(
        ScheduleStatus(MISCONFIGURED, "", "incorrect prioritizer policy mode: Foo")
    )
    assert condition == {
        "type": "PlacementMisconfigured",
        "status": "True",
        "reason": "Misconfigured",
        "message": ":incorrect prioritizer policy mode: Foo",
    }


@pytest.mark.parametrize("code", ["Success", WARNING, ERROR])
def test_other_codes_are_succeedconfigured(code: str) -> None:
    condition = misconfigured_condition(ScheduleStatus(code, "plugin", "reasons"))
    assert (condition["status"], condition["reason"]) == ("False", "Succeedconfigured")
    assert condition["message"] == "Placement configurations check pass"


def _satisfied(**overrides: object) -> dict[str, str]:
    arguments: dict = {
        "cluster_sets_in_spec": [],
        "eligible_cluster_sets": ["set1"],
        "num_bindings": 1,
        "num_available_clusters": 3,
        "num_feasible_clusters": 2,
        "num_unscheduled": 0,
        "status": ScheduleStatus(),
    }
    return satisfied_condition(**{**arguments, **overrides})


@pytest.mark.parametrize(
    ("overrides", "status", "reason", "message"),
    [
        (
            {"num_bindings": 0},
            "False",
            "NoManagedClusterSetBindings",
            "No valid ManagedClusterSetBindings found in placement namespace",
        ),
        (
            {"cluster_sets_in_spec": ["a", "b"], "eligible_cluster_sets": []},
            "False",
            "NoIntersection",
            "None of ManagedClusterSets [a,b] is bound to placement namespace",
        ),
        (
            {"eligible_cluster_sets": ["a", "b"], "num_available_clusters": 0},
            "False",
            "AllManagedClusterSetsEmpty",
            "All ManagedClusterSets [a,b] have no member ManagedCluster",
        ),
        ({"status": ScheduleStatus(ERROR, "Balance", "boom")}, "False", "NotAllDecisionsScheduled", "boom"),
        (
            {"num_feasible_clusters": 0},
            "False",
            "NoManagedClusterMatched",
            "No ManagedCluster matches any of the cluster predicate",
        ),
        ({}, "True", "AllDecisionsScheduled", "All cluster decisions scheduled"),
        ({"num_unscheduled": 3}, "False", "NotAllDecisionsScheduled", "3 cluster decisions unscheduled"),
    ],
)
def test_satisfied_rows_in_order(overrides: dict, status: str, reason: str, message: str) -> None:
    assert _satisfied(**overrides) == {
        "type": "PlacementSatisfied",
        "status": status,
        "reason": reason,
        "message": message,
    }


def test_misconfigured_with_clusters_ends_at_no_cluster_matched() -> None:
    # upstream checks only Error before the selected count, so Misconfigured falls through: nothing selected
    misconfigured = ScheduleStatus(MISCONFIGURED, "Predicate", "compilation failed: x")
    assert _satisfied(status=misconfigured, num_feasible_clusters=0)["reason"] == "NoManagedClusterMatched"


def test_warning_does_not_change_the_satisfied_condition() -> None:
    assert (
        _satisfied(status=ScheduleStatus(WARNING, "AddOn/a/b", "expired"))["reason"]
        == "AllDecisionsScheduled"
    )


def test_set_condition_adds_with_now() -> None:
    new = {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled", "message": "m"}
    assert set_condition([], new, NOW) == [{**new, "lastTransitionTime": "2022-01-01T00:00:00Z"}]


def test_set_condition_keeps_transition_time_unless_status_flips() -> None:
    old = {
        "type": "T",
        "status": "False",
        "reason": "A",
        "message": "a",
        "lastTransitionTime": "2021-01-01T00:00:00Z",
    }
    same_status = set_condition([old], {"type": "T", "status": "False", "reason": "B", "message": "b"}, NOW)
    assert same_status == [{**old, "reason": "B", "message": "b"}]
    flipped = set_condition([old], {"type": "T", "status": "True", "reason": "B", "message": "b"}, NOW)
    assert flipped[0]["lastTransitionTime"] == "2022-01-01T00:00:00Z"
    assert old["reason"] == "A"  # the input is not mutated
