"""Prioritizer weights and scores: Go's float truncation, Balance counting, AddOn quirks."""

from datetime import timedelta

import numpy as np
import pytest

from placement.scheduler.ocm.prioritizers import (
    PrioritizerMisconfigured,
    balance_scores,
    prioritizers_for,
    resource_scores,
    score,
)
from placement.scheduler.quantity import approx_float
from tests.scheduler.ocm.builders import NOW, cluster, decision, hub, placement
from tests.scheduler.ocm.builders import score as addon_score


def _policy(mode="Additive", *configs):
    return placement(prioritizerPolicy={"mode": mode, "configurations": list(configs)}).prioritizer_policy


def _builtin(name, weight=1):
    return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}


def _addon(resource, score_name, weight=1):
    return {
        "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": resource, "scoreName": score_name}},
        "weight": weight,
    }


def test_additive_starts_from_balance_and_steady_and_a_later_duplicate_wins():
    weights = {
        p.name: p.weight
        for p in prioritizers_for(_policy("", _builtin("Balance", 3), _builtin("Balance", 2)))
    }
    assert weights == {"Balance": 2, "Steady": 1}


def test_exact_uses_only_the_configured_prioritizers():
    assert [p.name for p in prioritizers_for(_policy("Exact", _builtin("ResourceAllocatableCPU")))] == [
        "ResourceAllocatableCPU"
    ]


def test_weight_zero_removes_a_prioritizer_before_its_name_is_checked():
    assert [
        p.name for p in prioritizers_for(_policy("Additive", _builtin("Steady", 0), _builtin("Spread", 0)))
    ] == ["Balance"]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (("Foo",), "incorrect prioritizer policy mode: Foo"),
        (("Additive", _builtin("Spread")), "incorrect builtin prioritizer: Spread"),
        (("Additive", {"weight": 1}), "scoreCoordinate field is required"),
        (("Additive", {"scoreCoordinate": {"type": "AddOn"}}), "addOn should not be empty"),
    ],
)
def test_misconfigured_policies(policy, message):
    with pytest.raises(PrioritizerMisconfigured, match=f"^{message}$"):
        prioritizers_for(_policy(*policy))


def test_identical_addon_configs_are_separate_prioritizers_and_double_count():
    prioritizers = prioritizers_for(_policy("Exact", _addon("demo", "cpu"), _addon("demo", "cpu", 2)))
    assert [(p.name, p.weight) for p in prioritizers] == [("AddOn/demo/cpu", 1), ("AddOn/demo/cpu", 2)]


def _memory_scores(values):
    """Scores of clusters c0, c1, ... in that order (the inventory itself keeps name order)."""
    clusters = [
        cluster(f"c{i}", allocatable={"memory": v}, capacity={"memory": "100"}) for i, v in enumerate(values)
    ]
    inventory = hub(clusters)
    return resource_scores("memory", inventory, np.asarray([inventory.position[c.name] for c in clusters]))


def test_resource_score_truncates_go_float_error_toward_zero():
    # ((80-50)/(100-50)-0.5)*2*100 == 19.999999999999996 in IEEE double: Go's int64() gives 19
    values, _ = _memory_scores(["50", "90", "80", "100"])
    assert values.tolist() == [-100, 60, 19, 100]
    ratio = (80.0 - 50.0) / (100.0 - 50.0)
    assert int((ratio - 0.5) * 2.0 * 100.0) == 19


def test_resource_scores_are_bit_exact_with_the_scalar_formula():
    rng = np.random.default_rng(7)
    raw = [f"{v}m" for v in rng.integers(0, 10**7, 300)]
    values, scored = _memory_scores(raw)
    floats = [approx_float(v) for v in raw]
    low, high = min(floats), max(floats)
    assert values.tolist() == [int(((f - low) / (high - low) - 0.5) * 2.0 * 100.0) for f in floats]
    assert scored.all()


def test_resource_needs_both_allocatable_and_capacity_and_equal_values_score_100():
    clusters = [
        cluster("c1", allocatable={"cpu": "0"}, capacity={"cpu": "8"}),
        cluster("c2", allocatable={"cpu": "0"}, capacity={"cpu": "8"}),
        cluster("c3", allocatable={"cpu": "4"}),
    ]
    inventory = hub(clusters)
    values, scored = resource_scores("cpu", inventory, np.arange(3))
    assert values[scored].tolist() == [100, 100] and scored.tolist() == [True, True, False]


def test_balance_truncates_before_doubling_and_counts_every_other_decision():
    clusters = [cluster(n) for n in "abcd"]
    decisions = [
        decision("p1", ["a", "b", "c"], namespace="other"),
        decision("p2", ["a", "b"], namespace="other"),
        decision(None, ["a"], name="unlabelled"),
        decision("web", ["a", "b", "c", "d"]),  # the placement's own decisions are not counted
        decision("web", ["a"], namespace="elsewhere", name="same-name-other-namespace"),
    ]
    inventory = hub(clusters, decisions=decisions)
    values, _ = balance_scores(placement("web"), inventory, np.arange(4))
    # counts a=4, b=2, c=1, d=0 with max 4
    assert values.tolist() == [-100, 0, 2 * int(100.0 * (0.5 - 1 / 4)), 100]


def test_balance_max_count_includes_clusters_outside_the_candidates():
    inventory = hub([cluster("a")], decisions=[decision("p1", ["a", "gone"]), decision("p2", ["gone"])])
    values, _ = balance_scores(placement("web"), inventory, np.arange(1))
    assert values.tolist() == [0]


def test_addon_score_expires_strictly_after_valid_until_with_a_warning():
    clusters = [cluster("c1"), cluster("c2"), cluster("c3")]
    scores = [
        addon_score("c1", "demo", {"cpu": 30}, valid_until=NOW),
        addon_score("c2", "demo", {"cpu": 40, "mem": 1}, valid_until=NOW - timedelta(seconds=1)),
        addon_score("c3", "demo", {"cpu": 50, "cpu ": 0}),
    ]
    inventory = hub(clusters, add_on_scores=scores)
    (prioritizer,) = prioritizers_for(_policy("Exact", _addon("demo", "cpu")))
    result = score(prioritizer, placement(), inventory, np.arange(3), NOW)
    assert result.values.tolist() == [30, 0, 50]
    assert result.warning == "AddOnPlacementScores c2/demo expired"
