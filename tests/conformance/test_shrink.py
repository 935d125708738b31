"""Shrinking a disagreeing case: manifests, then list items and labels, then fields, while the check holds."""

from __future__ import annotations

from conformance.cases import Case
from conformance.shrink import Shrinker, shrink
from conformance.verdict import our_result
from tests.conformance.cases import clusters_tainted, ocm_case


def gpu_bug(case: Case) -> bool:
    """A pretend disagreement: a Placement in a case with a cluster tainted `gpu`, which our side accepts."""
    placements = [m for m in case["manifests"] if m["kind"] == "Placement"]
    return bool(placements and clusters_tainted(case, "gpu")) and "error" not in our_result(case)


def test_a_case_shrinks_to_the_manifests_and_fields_the_difference_needs() -> None:
    assert shrink(ocm_case(), gpu_bug)["manifests"] == [
        {
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": "c4"},
            # our parser refuses a taint without an effect, so the effect stays
            "spec": {"taints": [{"key": "gpu", "effect": "NoSelect"}]},
        },
        {
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {"name": "frontend"},
            # the CRD schemas require a spec, so an empty one stays
            "spec": {},
        },
    ]


def test_label_entries_are_dropped_one_by_one() -> None:
    def needs_env(case: Case) -> bool:
        return any(m["metadata"].get("labels", {}).get("env") == "dev" for m in case["manifests"])

    (left,) = shrink(ocm_case(), needs_env)["manifests"]

    assert left == {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "c5", "labels": {"env": "dev"}},
        "spec": {},
    }


def test_the_check_budget_bounds_the_work_and_keeps_what_was_found() -> None:
    shrinker = Shrinker(gpu_bug, max_checks=3)

    smaller = shrinker.shrink(ocm_case())

    assert shrinker.checks == 3
    assert gpu_bug(smaller)
    assert len(smaller["manifests"]) < len(ocm_case()["manifests"])


def test_a_case_nothing_can_be_taken_from_comes_back_unchanged() -> None:
    case = ocm_case()

    assert shrink(case, lambda candidate: candidate == case) == case


def test_fields_the_schemas_require_stay_whatever_the_check_says() -> None:
    member = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": "m1"},
        "spec": {"identity": {"kind": "ServiceAccount", "name": "m1"}, "taints": [{"key": "a"}]},
    }
    case: Case = {"id": "fleet-1", "family": "fleet", "now": "2024-05-01T00:00:00Z", "manifests": [member]}

    (left,) = shrink(case, lambda candidate: bool(candidate["manifests"]))["manifests"]

    assert left == {**member, "spec": {"identity": member["spec"]["identity"]}}
