"""TaintToleration, including where the API docs and the code disagree."""

from datetime import timedelta

import numpy as np

from placement.scheduler.ocm.taints import filter_taints, placement_requeue_time, taint_verdict
from placement.scheduler.ocm.types import Taint, Toleration
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement


def _filter(place, clusters, decisions=()):
    inventory = hub(clusters, decisions=list(decisions))
    candidates = np.arange(inventory.size)
    filtered, status = filter_taints(place, inventory, candidates, NOW)
    return (None if filtered is None else [inventory.names[p] for p in filtered]), status


def _taint(effect="NoSelect", key="gpu", value="", seconds_ago=None):
    added = None if seconds_ago is None else (NOW - timedelta(seconds=seconds_ago)).isoformat()
    return {"key": key, "value": value, "effect": effect, "timeAdded": added}


def test_prefer_no_select_has_no_effect_at_all():
    assert _filter(placement(), [member("c1", taints=[_taint("PreferNoSelect")])])[0] == ["c1"]


def test_no_select_if_new_keeps_already_decided_clusters_only():
    clusters = [
        member("c1", taints=[_taint("NoSelectIfNew")]),
        member("c2", taints=[_taint("NoSelectIfNew")]),
    ]
    assert _filter(placement(), clusters, [decision("web", ["c1"])])[0] == ["c1"]


def test_toleration_seconds_also_apply_to_no_select_if_new():
    # docs say only NoSelect/PreferNoSelect; the code applies it to any effect reaching the toleration walk
    place = placement(tolerations=[{"key": "gpu", "operator": "Exists", "tolerationSeconds": 10}])
    clusters = [member("c1", taints=[_taint("NoSelectIfNew", seconds_ago=20)])]
    assert _filter(place, clusters)[0] == []


def test_expiry_equal_to_now_is_not_tolerated():
    tolerations = (Toleration("gpu", "Exists", toleration_seconds=10),)
    assert not taint_verdict(
        Taint("gpu", "NoSelect", time_added=NOW - timedelta(seconds=10)), tolerations, False, NOW
    ).tolerated
    assert taint_verdict(
        Taint("gpu", "NoSelect", time_added=NOW - timedelta(seconds=9)), tolerations, False, NOW
    ).tolerated


def test_zero_time_added_with_toleration_seconds_has_always_expired():
    tolerations = (Toleration("gpu", "Exists", toleration_seconds=10**9),)
    assert not taint_verdict(Taint("gpu", "NoSelect"), tolerations, False, NOW).tolerated


def test_an_expired_toleration_is_skipped_and_the_next_one_may_tolerate():
    tolerations = (Toleration("gpu", "Exists", toleration_seconds=1), Toleration("gpu", "Exists"))
    verdict = taint_verdict(
        Taint("gpu", "NoSelect", time_added=NOW - timedelta(seconds=5)), tolerations, False, NOW
    )
    assert verdict.tolerated and verdict.expires is None


def test_empty_key_with_empty_or_equal_operator_is_misconfigured():
    filtered, status = _filter(placement(tolerations=[{"key": "", "operator": "Equal"}]), [member("c1")])
    assert filtered is None
    assert (status.code, status.plugin, status.message) == (
        "Misconfigured",
        "TaintToleration",
        "If the key is empty, operator must be Exists.",
    )


def test_validation_is_skipped_without_candidates():
    inventory = hub([])
    filtered, status = filter_taints(
        placement(tolerations=[{"operator": "Equal"}]), inventory, np.arange(0), NOW
    )
    assert status.code == "Success" and len(filtered) == 0


def test_requeue_only_considers_clusters_already_decided():
    place = placement(tolerations=[{"key": "gpu", "operator": "Exists", "tolerationSeconds": 10}])
    clusters = [
        member("c1", taints=[_taint(seconds_ago=8)]),
        member("c2", taints=[_taint(seconds_ago=9)]),
        member("c3", taints=[_taint(seconds_ago=1)]),
    ]
    assert placement_requeue_time(place, hub(clusters), NOW) is None
    inventory = hub(clusters, decisions=[decision("web", ["c1", "c2"])])
    assert placement_requeue_time(place, inventory, NOW) == NOW + timedelta(seconds=1)
