"""The clusters left after every filter plugin (`feasible` of `schedule -o json`), or None when a filter
stopped the pipeline, as upstream's filter results of the full pipeline show them."""

from placement.scheduler.ocm.schedule import schedule_placement
from tests.scheduler.ocm.builders import NOW, hub, member, placement

CLUSTERS = [
    member("c2", labels={"env": "prod"}),
    member("c1", labels={"env": "prod"}),
    member("c3", labels={"env": "dev"}),
    member("c4", labels={"env": "prod"}, taints=[{"key": "gpu", "effect": "NoSelect"}]),
    member("c5", "other", labels={"env": "prod"}),
]
PROD = [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}]


def feasible(**spec):
    return schedule_placement(placement(**spec), hub(CLUSTERS), NOW).to_report()["feasible"]


def test_feasible_clusters_passed_set_membership_predicates_and_taints_in_name_order():
    assert feasible(predicates=PROD) == ["c1", "c2"]


def test_every_filtered_cluster_is_feasible_even_when_fewer_are_selected():
    assert feasible(predicates=PROD, numberOfClusters=1) == ["c1", "c2"]


def test_a_predicate_that_cannot_be_evaluated_stops_the_filters():
    broken = [{"requiredClusterSelector": {"celSelector": {"celExpressions": ["invalid.expression"]}}}]

    assert feasible(predicates=broken) is None


def test_a_misconfigured_prioritizer_comes_after_the_filters():
    policy = {"mode": "Additive", "configurations": [{"scoreCoordinate": {"builtIn": "Spread"}, "weight": 1}]}

    assert feasible(predicates=PROD, prioritizerPolicy=policy) == ["c1", "c2"]


def test_with_no_eligible_set_the_filters_run_on_no_clusters():
    assert feasible(clusterSets=["missing"]) == []
