"""Affinity label selectors apimachinery cannot convert, as KubeFleet's scheduler meets them.

Without the validating webhook the CRD schema admits an unknown operator or a malformed key. The
ClusterAffinity plugin converts a term's selector each time a cluster reaches the term: a required
term errors in Filter, a preferred one (weight not 0) in Score, and the error aborts the whole cycle.
A term no cluster reaches errors nowhere.
"""

from __future__ import annotations

from typing import Any

import pytest

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import parse_placement_policy
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import SchedulingError
from tests.scheduler.fleet.builders import NOW, binding, member, placement

BAD = {"matchExpressions": [{"key": "env", "operator": "Equals", "values": ["prod"]}]}
PROD = {"matchLabels": {"env": "prod"}}
INVENTORY = FleetInventory([member("a", {"env": "prod"}), member("b", {"env": "dev"})])


def _schedule(policy: dict[str, Any], bindings: list[Any] | None = None) -> Any:
    parsed = parse_placement_policy(policy, lambda message: None)
    return schedule_crp(placement(parsed), INVENTORY, bindings or [], NOW)


def _affinity(
    required: list[dict[str, Any]], preferred: list[tuple[int, dict[str, Any]]] = ()
) -> dict[str, Any]:
    affinity: dict[str, Any] = {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": weight, "preference": {"labelSelector": selector}} for weight, selector in preferred
        ]
    }
    if required:
        terms = [{"labelSelector": selector} for selector in required]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"clusterSelectorTerms": terms}
    return {"clusterAffinity": affinity}


@pytest.mark.parametrize("placement_type", ["PickAll", "PickN"])
def test_a_required_term_every_cluster_reaches_aborts_the_cycle(placement_type: str) -> None:
    policy = {"placementType": placement_type, "numberOfClusters": 1, "affinity": _affinity([BAD])}
    if placement_type == "PickAll":
        del policy["numberOfClusters"]

    with pytest.raises(SchedulingError) as raised:
        _schedule(policy)

    assert raised.value.plugin == "ClusterAffinity"
    assert raised.value.message.endswith(
        'failed to parse label selector: "Equals" is not a valid label selector operator'
    )


def test_a_required_term_after_one_every_cluster_matches_is_never_reached() -> None:
    policy = {"placementType": "PickAll", "affinity": _affinity([{}, BAD])}

    assert _schedule(policy).selected == ("a", "b")


def test_a_required_term_reached_by_some_clusters_still_aborts() -> None:
    policy = {"placementType": "PickAll", "affinity": _affinity([PROD, BAD])}

    with pytest.raises(SchedulingError):
        _schedule(policy)


def test_a_preferred_term_aborts_scoring_unless_its_weight_is_zero() -> None:
    with pytest.raises(SchedulingError, match="affinity score"):
        _schedule({"placementType": "PickN", "numberOfClusters": 1, "affinity": _affinity([], [(10, BAD)])})

    zero = _schedule({"placementType": "PickN", "numberOfClusters": 1, "affinity": _affinity([], [(0, BAD)])})
    assert zero.selected == ("b",)


def test_a_preferred_term_is_not_reached_when_every_passing_cluster_is_already_selected() -> None:
    policy = {"placementType": "PickN", "numberOfClusters": 3, "affinity": _affinity([PROD], [(5, BAD)])}

    result = _schedule(policy, [binding("a")])

    assert result.selected == ("a",)


def test_pick_fixed_never_converts_affinity() -> None:
    policy = {"placementType": "PickFixed", "clusterNames": ["a"]}

    assert _schedule(policy).selected == ("a",)


def test_the_dashboard_lists_the_problems_of_a_policy() -> None:
    policy = {"placementType": "PickN", "numberOfClusters": 1, "affinity": _affinity([BAD], [(1, BAD)])}
    parsed = placement(parse_placement_policy(policy, lambda message: None))

    assert [problem.field for problem in parsed.selector_problems] == [
        "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".clusterSelectorTerms[0].labelSelector",
        "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
        ".preference.labelSelector",
    ]
