"""Clusters parsed with equal taints share one tuple of them, and the stored record's filter reasons,
computed once per tuple and decided flag, are what `explain` says of each cluster."""

from placement.scheduler.ocm.schedule import schedule_placement
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement


def test_equal_taints_share_a_tuple_and_reasons_follow_each_cluster() -> None:
    new_only = [{"key": "gpu", "value": "", "effect": "NoSelectIfNew", "timeAdded": None}]
    blocked = [{"key": "disk", "value": "", "effect": "NoSelect", "timeAdded": None}]
    clusters = [
        member("c1", taints=new_only),
        member("c2", taints=new_only),
        member("c3", taints=blocked),
        member("c4", taints=blocked),
        member("c5"),
    ]
    assert clusters[0].taints is clusters[1].taints and clusters[2].taints is clusters[3].taints
    inventory = hub(clusters, decisions=[decision("web", ["c1"])])
    result = schedule_placement(placement(numberOfClusters=5), inventory, NOW)
    record, _ = result.cluster_record()
    reasons = dict(zip(record.names, record.reasons.tolist(), strict=True))
    assert reasons == {name: result.explain(name)["filteredBy"] for name in inventory.names}
    assert reasons["c1"] is None and reasons["c5"] is None
    assert "not already decided" in reasons["c2"]
    assert reasons["c3"] == reasons["c4"] == "taint disk:NoSelect is not tolerated"
