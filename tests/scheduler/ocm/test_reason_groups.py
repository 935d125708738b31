"""The stored record computes each filter reason once per group of clusters the reason cannot tell apart
(coded per inventory): every cluster's recorded reason is still what `explain` says of it, whether the
groups join clusters (taints stamped at different times, label values a predicate does not read) or
must keep them apart (an expiring toleration, a CEL verdict, a claim)."""

from typing import Any

from placement.scheduler.ocm.schedule import schedule_placement
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement


def _taint(key: str, effect: str, stamped: str) -> list[dict[str, Any]]:
    return [{"key": key, "value": "", "effect": effect, "timeAdded": stamped}]


def _recorded_and_explained(inventory: Any, place: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    result = schedule_placement(place, inventory, NOW)
    record, _ = result.cluster_record()
    recorded = dict(zip(record.names, record.reasons.tolist(), strict=True))
    return recorded, {name: result.explain(name)["filteredBy"] for name in inventory.names}


def _tainted_hub() -> Any:
    clusters = [
        member("c1", taints=_taint("down", "NoSelect", "2021-12-31T23:00:00Z")),
        member("c2", taints=_taint("down", "NoSelect", "2021-12-31T23:30:00Z")),
        member("c3", taints=_taint("gpu", "NoSelectIfNew", "2021-12-31T23:00:00Z")),
        member("c4", taints=_taint("gpu", "NoSelectIfNew", "2021-12-31T23:30:00Z")),
        member("c5"),
    ]
    return hub(clusters, decisions=[decision("web", ["c3"])])


def test_taints_stamped_at_different_times_share_a_reason_without_an_expiring_toleration() -> None:
    recorded, explained = _recorded_and_explained(_tainted_hub(), placement(numberOfClusters=5))
    assert recorded == explained
    assert recorded["c1"] == recorded["c2"] == "taint down:NoSelect is not tolerated"
    assert recorded["c3"] is None and "not already decided" in recorded["c4"]


def test_an_expiring_toleration_keeps_each_taints_expiry() -> None:
    tolerations = [{"key": "down", "operator": "Exists", "tolerationSeconds": 600}]
    recorded, explained = _recorded_and_explained(
        _tainted_hub(), placement(numberOfClusters=5, tolerations=tolerations)
    )
    assert recorded == explained
    assert "expired at 2021-12-31T23:10:00Z" in recorded["c1"]
    assert "expired at 2021-12-31T23:40:00Z" in recorded["c2"]


def test_predicate_reasons_follow_the_values_the_predicates_read() -> None:
    clusters = [
        member("c1", labels={"env": "dev", "team": "a"}),
        member("c2", labels={"env": "dev", "team": "b"}),
        member("c3", labels={"env": "test"}),
        member("c4", labels={"team": "a"}),
        member("c5", labels={"env": "prod", "team": "a"}, claims={"region": "eu"}),
        member("c6", labels={"env": "prod", "team": "b"}, claims={"region": "us"}),
        member("c7", labels={"env": "prod", "team": "c"}, claims={"region": "us"}),
        member("c8", labels={"env": "prod", "team": "a"}, claims={"region": "us"}),
    ]
    in_us = {"key": "region", "operator": "In", "values": ["us"]}
    predicates = [
        {
            "requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"env": "prod"}},
                "claimSelector": {"matchExpressions": [in_us]},
                "celSelector": {"celExpressions": ['managedCluster.metadata.labels["team"] == "a"']},
            }
        }
    ]
    recorded, explained = _recorded_and_explained(
        hub(clusters), placement(numberOfClusters=8, predicates=predicates)
    )
    assert recorded == explained
    assert recorded["c8"] is None
    assert recorded["c1"] == recorded["c2"] and recorded["c1"] != recorded["c3"] != recorded["c4"]
    assert "claimSelector" in recorded["c5"] and recorded["c6"] == recorded["c7"]
    assert "celSelector" in recorded["c6"]
