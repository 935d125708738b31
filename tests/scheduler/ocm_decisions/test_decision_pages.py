"""PlacementDecision pages, manifests and Placement status.decisionGroups."""

from placement.scheduler.ocm.decisions import (
    DecisionGroup,
    DecisionPage,
    build_decision_pages,
    decision_manifest,
    status_decision_groups,
)


def test_pages_hold_at_most_100_clusters_in_byte_order() -> None:
    names = tuple(sorted(f"cluster{i}" for i in range(1, 102)))
    pages = build_decision_pages("placement1", [DecisionGroup(0, "", names)])
    assert [page.name for page in pages] == ["placement1-decision-1", "placement1-decision-2"]
    assert pages[0].cluster_names[:4] == ("cluster1", "cluster10", "cluster100", "cluster101")
    assert pages[1].cluster_names == ("cluster99",)
    assert {page.group_index for page in pages} == {0}


def test_page_numbers_count_across_groups_and_empty_groups_get_a_page() -> None:
    groups = [DecisionGroup(0, "canary", ("a",)), DecisionGroup(1, "", ())]
    assert build_decision_pages("p", groups) == [
        DecisionPage("p-decision-1", 0, "canary", ("a",)),
        DecisionPage("p-decision-2", 1, "", ()),
    ]


def test_manifest_carries_the_three_labels_and_empty_reasons() -> None:
    manifest = decision_manifest("ns1", "placement1", DecisionPage("placement1-decision-3", 2, "", ("c1",)))
    assert manifest == {
        "apiVersion": "cluster.open-cluster-management.io/v1beta1",
        "kind": "PlacementDecision",
        "metadata": {
            "name": "placement1-decision-3",
            "namespace": "ns1",
            "labels": {
                "cluster.open-cluster-management.io/placement": "placement1",
                "cluster.open-cluster-management.io/decision-group-name": "",
                "cluster.open-cluster-management.io/decision-group-index": "2",
            },
        },
        "status": {"decisions": [{"clusterName": "c1", "reason": ""}]},
    }


def test_status_decision_groups_use_the_clustercount_key() -> None:
    names = tuple(f"c{i:03}" for i in range(150))
    groups = [DecisionGroup(0, "canary", ("x",)), DecisionGroup(1, "", names)]
    pages = build_decision_pages("p", groups)
    assert status_decision_groups(pages, groups) == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "canary",
            "decisions": ["p-decision-1"],
            "clusterCount": 1,
        },
        {
            "decisionGroupIndex": 1,
            "decisionGroupName": "",
            "decisions": ["p-decision-2", "p-decision-3"],
            "clusterCount": 150,
        },
    ]
