"""One reconcile end to end (filters, scores, decisions, conditions) and its explanations."""

import json
from datetime import timedelta

import numpy as np

from placement.scheduler.ocm.schedule import schedule_candidates, schedule_placement
from placement.scheduler.record import ClusterRecord
from tests.scheduler.ocm.builders import NOW, binding, cluster_set, decision, hub, member, placement, score

CLUSTERS = [
    member("aws-1", labels={"cloud": "Amazon"}),
    member("gcp-1", labels={"cloud": "Google"}),
    member(
        "aws-2",
        labels={"cloud": "Amazon"},
        taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSelect"}],
    ),
    member("dev-1", "dev", labels={"cloud": "Amazon"}),
    member("aws-3", labels={"cloud": "Amazon"}, deletion_timestamp="2021-12-31T00:00:00Z"),
]
AMAZON = [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"cloud": "Amazon"}}}}]


def _condition(result, kind):
    return next(c for c in result.conditions if c["type"] == kind)


def test_selects_filters_and_explains_every_cluster():
    result = schedule_placement(placement(predicates=AMAZON), hub(CLUSTERS), NOW)
    report = result.to_report()
    json.dumps(report)
    reasons = {c["name"]: c["filteredBy"] for c in report["clusters"]}
    assert report["selected"] == ["aws-1"]
    assert reasons["aws-1"] is None
    assert reasons["gcp-1"] == (
        "does not match any predicate: predicate[0] labelSelector cloud=Amazon does not match (cloud=Google)"
    )
    assert reasons["aws-2"] == "taint dedicated=gpu:NoSelect is not tolerated"
    assert reasons["aws-3"] == "is being deleted"
    assert (
        reasons["dev-1"]
        == "not a member of any ManagedClusterSet bound to namespace apps (eligible sets: prod)"
    )
    assert report["clusters"][0] == {
        "name": "aws-1",
        "selected": True,
        "filteredBy": None,
        "scores": {"Balance": 100, "Steady": 0},
        "total": 100,
        "rank": 1,
    }
    assert _condition(result, "PlacementSatisfied")["reason"] == "AllDecisionsScheduled"


def test_last_filter_record_shows_the_sorted_order_but_earlier_ones_the_input_order():
    inventory = hub(CLUSTERS[:2], decisions=[decision("other", ["aws-1"])])
    outcome = schedule_candidates(placement(), inventory, np.asarray([0, 1]), NOW)
    assert outcome.filter_results(inventory.names) == [
        {"name": "Predicate", "filteredClusters": ["aws-1", "gcp-1"]},
        {"name": "Predicate,TaintToleration", "filteredClusters": ["gcp-1", "aws-1"]},
    ]


def test_misconfigured_toleration_selects_nothing_and_rewrites_one_empty_decision():
    inventory = hub(CLUSTERS, decisions=[decision("web", ["aws-1"])])
    result = schedule_placement(placement(tolerations=[{"operator": "Equal", "value": "x"}]), inventory, NOW)
    assert result.selected == [] and result.prioritizer_results() == []
    assert [d["status"]["decisions"] for d in result.decisions] == [[]]
    assert _condition(result, "PlacementMisconfigured")["message"] == (
        "TaintToleration:If the key is empty, operator must be Exists."
    )
    assert _condition(result, "PlacementSatisfied")["reason"] == "NoManagedClusterMatched"
    assert result.filter_results() == [{"name": "Predicate", "filteredClusters": ["aws-1", "aws-2", "gcp-1"]}]
    assert result.explain("gcp-1")["filteredBy"].startswith("not scheduled: the placement is Misconfigured")


def test_number_of_clusters_zero_gives_no_managed_cluster_matched():
    result = schedule_placement(placement(numberOfClusters=0), hub(CLUSTERS), NOW)
    assert _condition(result, "PlacementSatisfied")["reason"] == "NoManagedClusterMatched"


def test_unscheduled_count_when_fewer_clusters_are_feasible():
    result = schedule_placement(placement(numberOfClusters=5), hub(CLUSTERS), NOW)
    assert _condition(result, "PlacementSatisfied")["message"] == "3 cluster decisions unscheduled"


def test_no_bindings_still_keeps_one_empty_decision():
    result = schedule_placement(placement(), hub(CLUSTERS, bindings=[]), NOW)
    assert _condition(result, "PlacementSatisfied")["reason"] == "NoManagedClusterSetBindings"
    assert [d["metadata"]["name"] for d in result.decisions] == ["web-decision-1"]
    assert result.explain("aws-1")["filteredBy"] == "no ManagedClusterSet is bound to namespace apps"


def test_bad_clusters_per_decision_group_is_misconfigured_without_decisions():
    spec = {"decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25"}}}
    inventory = hub(CLUSTERS, decisions=[decision("web", ["aws-1"])])
    result = schedule_placement(placement(**spec), inventory, NOW)
    assert result.decisions == []
    assert (
        _condition(result, "PlacementMisconfigured")["message"]
        == ":25 invalid type: string is not a percentage"
    )
    assert [e["reason"] for e in result.events] == ["DecisionDelete"]


def test_unknown_selector_type_errors_the_reconcile():
    result = schedule_placement(placement(), hub(CLUSTERS, cluster_sets=[cluster_set("prod", "Region")]), NOW)
    assert result.error and result.conditions == [] and result.decisions == []


def test_disable_annotation_skips_the_placement():
    annotations = {"cluster.open-cluster-management.io/experimental-scheduling-disable": "true"}
    assert schedule_placement(placement(annotations=annotations), hub(CLUSTERS), NOW).skipped


def test_requeue_after_toleration_expiry_of_decided_clusters():
    added = (NOW - timedelta(seconds=8)).isoformat()
    clusters = [member("c1", taints=[{"key": "maintenance", "effect": "NoSelect", "timeAdded": added}])]
    tolerations = [{"key": "maintenance", "operator": "Exists", "tolerationSeconds": 10}]
    inventory = hub(clusters, decisions=[decision("web", ["c1"])])
    result = schedule_placement(placement(tolerations=tolerations), inventory, NOW)
    assert result.requeue_after == timedelta(seconds=2)
    assert result.to_report()["requeueAfterSeconds"] == 2.0


def test_cluster_sets_spec_limits_the_eligible_sets():
    inventory = hub(
        CLUSTERS,
        cluster_sets=[cluster_set("prod"), cluster_set("dev")],
        bindings=[binding(), binding(name="dev")],
    )
    result = schedule_placement(placement(clusterSets=["dev"]), inventory, NOW)
    assert result.selected == ["dev-1"]
    result = schedule_placement(placement(clusterSets=["qa"]), inventory, NOW)
    assert _condition(result, "PlacementSatisfied")["reason"] == "NoIntersection"


def test_the_stored_record_agrees_with_the_report_row_by_row():
    clusters = [
        *CLUSTERS,
        member("aws-4", labels={"cloud": "Amazon"}, allocatable={"cpu": "4"}, capacity={"cpu": "8"}),
        member("aws-5", labels={"cloud": "Amazon"}, allocatable={"cpu": "2"}, capacity={"cpu": "8"}),
    ]
    cpu = {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "cpu"}}}
    # a duplicate AddOn config and a built-in score some clusters lack: sparse score columns
    allocatable = {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}}
    configurations = [allocatable, {**cpu, "weight": 1}, {**cpu, "weight": 2}]
    policy = {"mode": "Additive", "configurations": configurations}
    scores = [score("aws-1", "demo", {"cpu": 30}), score("aws-4", "demo", {"cpu": 50})]
    spec = {"predicates": AMAZON, "numberOfClusters": 2, "prioritizerPolicy": policy}
    result = schedule_placement(placement(**spec), hub(clusters, add_on_scores=scores), NOW)
    report = result.to_report(summarise_outside=True)
    stored, record = result.to_explanation()
    rows = report.pop("clusters")
    # feasible clusters and held decisions are listed by the report only (the stored rows and decisions
    # already say who passed the filters and what is to be written)
    assert report.pop("feasible") == ["aws-1", "aws-4", "aws-5"]  # aws-2: untolerated taint
    held = report.pop("heldDecisions")
    assert [(d["name"], d["clusters"]) for d in held] == [("web-decision-1", ["aws-1", "aws-4"])]
    assert stored == report  # every other key, `outside` included
    assert report["outside"] == {
        "count": 1,
        "reason": "not a member of any ManagedClusterSet bound to namespace apps (eligible sets: prod)",
    }
    assert [record.row(i) for i in range(len(record))] == rows
    assert ClusterRecord.unpack(record.pack()).rows() == rows  # as stored
    assert rows == [result.explain(r["name"]) for r in rows]
    assert sorted(len(r["scores"]) for r in rows if r["rank"]) == [3, 4, 4]  # aws-1 has no allocatable
    assert [(r["selected"], r["rank"] is not None, r["filteredBy"] is not None) for r in rows] == [
        (True, True, False),
        (True, True, False),
        (False, True, False),
        (False, False, True),
        (False, False, True),
        (False, False, True),
    ]
    # without the summary the outside cluster is a row of its own, as `schedule -o json` lists it
    assert "dev-1" in {r["name"] for r in result.to_report()["clusters"]} - {r["name"] for r in rows}
