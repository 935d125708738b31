"""ManagedClusterSet membership, valid bindings and eligible sets."""

import pytest

from placement.scheduler.ocm.clustersets import (
    ClusterSetSelectorError,
    cluster_set_members,
    eligible_cluster_sets,
    sets_of_cluster,
    valid_bindings,
)
from placement.scheduler.ocm.schedule import available_clusters
from tests.scheduler.ocm.builders import binding, cluster, cluster_set, hub, member

CLUSTERS = [
    member("east-1", "prod", labels={"vendor": "OpenShift"}),
    member("east-2", "dev"),
    cluster("west-1", labels={"vendor": "OpenShift"}),
]


def test_exclusive_set_matches_the_clusterset_label_exactly():
    assert cluster_set_members(cluster_set("prod"), CLUSTERS) == ["east-1"]


def test_empty_label_selector_matches_every_cluster_but_a_missing_one_matches_nothing():
    assert cluster_set_members(cluster_set("global", "LabelSelector", {}), CLUSTERS) == [
        "east-1",
        "east-2",
        "west-1",
    ]
    assert cluster_set_members(cluster_set("none", "LabelSelector"), CLUSTERS) == []


def test_label_selector_set():
    openshift = cluster_set("openshift", "LabelSelector", {"matchLabels": {"vendor": "OpenShift"}})
    assert cluster_set_members(openshift, CLUSTERS) == ["east-1", "west-1"]


def test_sets_of_cluster_lists_every_matching_set():
    sets = [cluster_set("prod"), cluster_set("global", "LabelSelector", {}), cluster_set("dev")]
    assert sets_of_cluster(CLUSTERS[0], sets) == ["global", "prod"]


def test_unknown_selector_type_is_an_error():
    with pytest.raises(ClusterSetSelectorError, match="selectorType is not right: Region"):
        cluster_set_members(cluster_set("odd", "Region"), CLUSTERS)


def test_binding_is_valid_when_a_set_with_its_name_exists():
    bindings = [binding("apps", "prod"), binding("apps", "gone"), binding("other", "prod")]
    assert [b.name for b in valid_bindings("apps", bindings, ["prod"])] == ["prod"]


def test_eligible_sets_intersect_spec_cluster_sets_and_sort():
    assert eligible_cluster_sets([], ["b", "a"]) == ["a", "b"]
    assert eligible_cluster_sets(["b", "c"], ["a", "b"]) == ["b"]
    assert eligible_cluster_sets(["c"], ["a", "b"]) == []


def test_available_clusters_union_sets_and_drop_deleting_ones():
    clusters = [*CLUSTERS, member("east-3", "prod", deletion_timestamp="2021-12-31T00:00:00Z")]
    inventory = hub(
        clusters,
        cluster_sets=[
            cluster_set("prod"),
            cluster_set("openshift", "LabelSelector", {"matchLabels": {"vendor": "OpenShift"}}),
        ],
    )
    positions = available_clusters(inventory, ["openshift", "prod", "removed-set"])
    assert [inventory.names[p] for p in positions] == ["east-1", "west-1"]
