"""Which placements a hub change re-queues, as upstream's event handlers."""

from dataclasses import replace

from placement.scheduler.ocm.triggers import (
    placements_affected_by_add_on_score,
    placements_affected_by_binding,
    placements_affected_by_cluster_change,
)
from tests.scheduler.ocm.builders import binding, cluster_set, hub, member, placement, score

ADDON = {
    "configurations": [
        {"scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "demo", "scoreName": "cpu"}}}
    ]
}
PLACEMENTS = [
    placement("any"),
    placement("prod-only", clusterSets=["prod"]),
    placement("dev-only", clusterSets=["dev"]),
    placement("elsewhere", namespace="other"),
    placement("scored", prioritizerPolicy=ADDON),
]


def _hub(clusters):
    return hub(
        clusters,
        cluster_sets=[cluster_set("prod"), cluster_set("dev")],
        bindings=[binding(), binding(name="dev")],
    )


def test_cluster_moving_between_sets_requeues_placements_of_both_sets():
    old = member("c1", "prod")
    new = replace(old, labels={"cluster.open-cluster-management.io/clusterset": "dev"})
    affected = placements_affected_by_cluster_change(old, new, _hub([new]), PLACEMENTS)
    assert affected == {("apps", "any"), ("apps", "prod-only"), ("apps", "dev-only"), ("apps", "scored")}


def test_cluster_update_without_label_change_uses_the_new_sets_only():
    old = member("c1", "prod")
    affected = placements_affected_by_cluster_change(old, old, _hub([old]), PLACEMENTS)
    assert ("apps", "dev-only") not in affected and ("apps", "prod-only") in affected


def test_binding_change_requeues_placements_naming_the_set_or_none():
    assert placements_affected_by_binding(binding(name="dev"), PLACEMENTS) == {
        ("apps", "any"),
        ("apps", "dev-only"),
        ("apps", "scored"),
    }


def test_add_on_score_requeues_placements_weighting_that_resource():
    inventory = _hub([member("c1", "prod")])
    assert placements_affected_by_add_on_score(score("c1", "demo", {"cpu": 1}), inventory, PLACEMENTS) == {
        ("apps", "scored")
    }
    assert (
        placements_affected_by_add_on_score(score("c1", "other", {"cpu": 1}), inventory, PLACEMENTS) == set()
    )
