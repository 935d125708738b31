"""Manifest parsing: SetPlacementDefaults, webhook rejections, and the doc-only `metricSorter` spelling."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.manifests import parse_fleet_object, parse_placement_policy
from placement.scheduler.fleet.schedule import schedule_crp
from placement.scheduler.fleet.types import (
    BindingCondition,
    ClusterResourceBinding,
    ClusterResourcePlacement,
    MemberCluster,
    OverrideSnapshots,
    PlacementPolicy,
)
from tests.scheduler.fleet.builders import NOW, member

SELECTORS = [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}]


def _crp(policy: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"resourceSelectors": SELECTORS, **spec}
    if policy is not None:
        body["policy"] = policy
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": body,
    }


def _parse(doc: dict[str, Any]) -> Any:
    return parse_fleet_object(doc, lambda message: None)


def _rejected(doc: dict[str, Any]) -> ManifestError:
    with pytest.raises(ManifestError) as caught:
        _parse(doc)
    return caught.value


def test_defaults_follow_set_placement_defaults() -> None:
    crp = _parse(_crp())
    assert isinstance(crp, ClusterResourcePlacement)
    assert crp.policy.placement_type == "PickAll"
    rolling = crp.strategy.rolling_update
    assert rolling is not None
    # upstream: 60 s, not the 10 s the Azure docs state
    assert (rolling.max_unavailable, rolling.max_surge, rolling.unavailable_period_seconds) == (
        "25%",
        "25%",
        60,
    )
    assert crp.revision_history_limit == 10
    assert crp.strategy.apply_strategy["comparisonOption"] == "PartialComparison"


def test_metric_sorter_is_read_as_property_sorter_with_a_warning() -> None:
    warnings: list[str] = []
    preferred = [
        {
            "weight": 40,
            "preference": {
                "metricSorter": {"name": "kubernetes-fleet.io/node-count", "sortOrder": "Ascending"}
            },
        }
    ]
    doc = _crp(
        {
            "placementType": "PickN",
            "numberOfClusters": 2,
            "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
        }
    )
    crp = parse_fleet_object(doc, warnings.append)
    assert crp.policy.affinity.preferred[0].preference.property_sorter.sort_order == "Ascending"  # type: ignore[union-attr]
    assert warnings == [
        "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
        ".metricSorter is not a KubeFleet field; read as propertySorter"
    ]


def test_preferred_terms_on_pick_all_are_rejected() -> None:
    preferred = [{"weight": 10, "preference": {"labelSelector": {}}}]
    error = _rejected(
        _crp(
            {"affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}}
        )
    )
    assert "will be ignored for placement policy type PickAll" in error.message


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        ({"placementType": "PickN"}, "spec.policy.numberOfClusters"),
        ({"placementType": "PickAll", "numberOfClusters": 2}, "spec.policy.numberOfClusters"),
        (
            {"placementType": "PickN", "numberOfClusters": 1, "clusterNames": ["a"]},
            "spec.policy.clusterNames",
        ),
        (
            {"placementType": "PickAll", "topologySpreadConstraints": [{"topologyKey": "zone"}]},
            "spec.policy.topologySpreadConstraints",
        ),
        ({"placementType": "PickFixed", "clusterNames": ["a"], "tolerations": []}, "spec.policy.tolerations"),
        ({"tolerations": [{"operator": "Exists", "value": "x"}]}, "spec.policy.tolerations[0].value"),
        ({"tolerations": [{"value": "x"}]}, "spec.policy.tolerations[0].key"),
        ({"tolerations": [{"key": "a"}, {"key": "a"}]}, "spec.policy.tolerations[1]"),
    ],
)
def test_webhook_rejections(policy: dict[str, Any], field: str) -> None:
    assert _rejected(_crp(policy)).field == field


def _required_with(*expressions: dict[str, Any]) -> dict[str, Any]:
    term = {"propertySelector": {"matchExpressions": list(expressions)}}
    return _crp(
        {
            "affinity": {
                "clusterAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [term]}
                }
            }
        }
    )


CPU = "resources.kubernetes-fleet.io/allocatable-cpu"
# a cluster on each side of, and on, every bound the contradicting requirements below use
CPUS = {f"cpu-{cpu}": cpu for cpu in ("1", "2", "3", "4", "5", "7", "10", "11")}


@pytest.mark.parametrize(
    "expressions",
    [
        [
            {"name": CPU, "operator": "Eq", "values": ["2"]},
            {"name": CPU, "operator": "Eq", "values": ["2000m"]},
            {"name": CPU, "operator": "Eq", "values": ["3"]},
        ],
        [
            {"name": CPU, "operator": "Eq", "values": ["2"]},
            {"name": CPU, "operator": "Ne", "values": ["2000m"]},
        ],
        [{"name": CPU, "operator": "Gt", "values": ["10"]}, {"name": CPU, "operator": "Lt", "values": ["5"]}],
        [{"name": CPU, "operator": "Gt", "values": ["4"]}, {"name": CPU, "operator": "Le", "values": ["4"]}],
        [{"name": CPU, "operator": "Eq", "values": ["1"]}, {"name": CPU, "operator": "Ge", "values": ["2"]}],
    ],
)
def test_contradicting_property_requirements_are_admitted_and_match_no_cluster(
    expressions: list[dict[str, Any]],
) -> None:
    # upstream's webhook leaves the contradiction check as a TODO; every requirement is still evaluated
    crp = _parse(_required_with(*expressions))
    assert isinstance(crp, ClusterResourcePlacement)
    inventory = FleetInventory(member(name, allocatable={"cpu": cpu}) for name, cpu in CPUS.items())
    assert schedule_crp(crp, inventory, [], NOW).selected == ()


@pytest.mark.parametrize(
    "expression",
    [
        {"name": CPU, "operator": "Eq", "values": ["1", "2"]},
        {"name": CPU, "operator": "In", "values": ["1"]},
        {"name": "resources.kubernetes-fleet.io/cpu", "operator": "Eq", "values": ["1"]},
        {"name": CPU, "operator": "Eq", "values": ["lots"]},
    ],
)
def test_invalid_property_requirements_are_rejected(expression: dict[str, Any]) -> None:
    _rejected(_required_with(expression))


def test_preferred_weight_range_and_rolling_update_pattern() -> None:
    preferred = [{"weight": 101, "preference": {}}]
    doc = _crp(
        {
            "placementType": "PickN",
            "numberOfClusters": 1,
            "affinity": {"clusterAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
        }
    )
    assert _rejected(doc).field.endswith("[0].weight")
    bad = _crp(strategy={"rollingUpdate": {"maxSurge": "101%"}})
    assert _rejected(bad).field == "spec.strategy.rollingUpdate.maxSurge"
    external = _crp(strategy={"type": "External", "rollingUpdate": {}})
    assert _rejected(external).field == "spec.strategy.rollingUpdate"


def test_member_cluster_and_binding() -> None:
    cluster = _parse(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "m1", "labels": {"zone": "a"}},
            "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
            "status": {
                "resourceUsage": {"allocatable": {"cpu": "3800m"}},
                "properties": {"kubernetes-fleet.io/node-count": {"value": "3"}},
            },
        }
    )
    assert isinstance(cluster, MemberCluster) and cluster.allocatable == {"cpu": "3800m"}
    bound = _parse(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {
                "name": "web-m1-1",
                "labels": {"kubernetes-fleet.io/parent-CRP": "web"},
                "annotations": {"kubernetes-fleet.io/previous-binding-state": "Bound"},
            },
            "spec": {"state": "Unscheduled", "targetCluster": "m1", "schedulingPolicySnapshotName": "web-0"},
        }
    )
    assert isinstance(bound, ClusterResourceBinding)
    assert (bound.placement_name, bound.previous_state) == ("web", "Bound")


def test_missing_name_and_bad_taint_effect() -> None:
    assert (
        _rejected(
            {
                "apiVersion": "placement.kubernetes-fleet.io/v1",
                "kind": "ClusterResourcePlacement",
                "metadata": {},
                "spec": {},
            }
        ).field
        == "metadata.name"
    )
    error = _rejected(
        {
            "apiVersion": "cluster.kubernetes-fleet.io/v1",
            "kind": "MemberCluster",
            "metadata": {"name": "m"},
            "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]},
        }
    )
    assert error.field == "spec.taints[0].effect"


def test_binding_carries_the_rollout_facts() -> None:
    bound = _parse(
        {
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {
                "name": "web-m1-1",
                "generation": 3,
                "labels": {"kubernetes-fleet.io/parent-CRP": "web"},
            },
            "spec": {
                "state": "Bound",
                "targetCluster": "m1",
                "resourceSnapshotName": "web-2-snapshot",
                "clusterResourceOverrideSnapshots": ["web-cro-0"],
                "resourceOverrideSnapshots": [{"name": "web-ro-1", "namespace": "team-a"}],
            },
            "status": {
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "WorkNotTrackable",
                        "observedGeneration": 3,
                        "lastTransitionTime": "2025-03-01T09:00:00Z",
                    },
                    {"type": "Applied", "status": "True"},
                ]
            },
        }
    )
    assert isinstance(bound, ClusterResourceBinding)
    assert (bound.generation, bound.resource_snapshot_name) == (3, "web-2-snapshot")
    assert bound.overrides == OverrideSnapshots(("web-cro-0",), ("team-a/web-ro-1",))
    assert bound.conditions == (
        BindingCondition("Available", "True", "WorkNotTrackable", 3, datetime(2025, 3, 1, 9, 0, tzinfo=UTC)),
        BindingCondition("Applied", "True"),
    )
    assert bound.condition("Available") is bound.conditions[0]


def _binding(spec: dict[str, Any], **doc: Any) -> dict[str, Any]:
    """A ClusterResourceBinding of placement `web` on member `m1`."""
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourceBinding",
        "metadata": {"name": "web-m1-1", "labels": {"kubernetes-fleet.io/parent-CRP": "web"}},
        "spec": {"targetCluster": "m1", **spec},
        **doc,
    }


def test_binding_without_rollout_facts_gets_the_defaults() -> None:
    bound = _parse(_binding({"state": "Scheduled"}))
    assert isinstance(bound, ClusterResourceBinding)
    assert (bound.generation, bound.overrides, bound.conditions) == (0, OverrideSnapshots(), ())


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"resourceOverrideSnapshots": [{"name": "ro"}]}, "spec.resourceOverrideSnapshots[0].namespace"),
        ({"clusterResourceOverrideSnapshots": [""]}, "spec.clusterResourceOverrideSnapshots[0]"),
    ],
)
def test_binding_override_snapshots_are_validated(spec: dict[str, Any], field: str) -> None:
    error = _rejected(_binding({"state": "Bound", **spec}))
    assert error.field == field


def test_binding_condition_generation_must_be_an_integer() -> None:
    conditions = [{"type": "Applied", "status": "True", "observedGeneration": "1"}]
    error = _rejected(_binding({"state": "Bound"}, status={"conditions": conditions}))
    assert error.field == "status.conditions[0].observedGeneration"


def test_crp_strategy_follows_the_webhook() -> None:
    # a digit string passes the CRD pattern, but the webhook's IntOrString scaling rejects it
    digits = _rejected(_crp(strategy={"rollingUpdate": {"maxSurge": "5"}}))
    assert (digits.field, digits.message.startswith("maxSurge `5` is invalid")) == (
        "spec.strategy.rollingUpdate.maxSurge",
        True,
    )
    negative = _rejected(_crp(strategy={"rollingUpdate": {"maxUnavailable": -1}}))
    assert negative.message == "maxUnavailable must be greater than or equal to 0, got `-1`"
    crp = _parse(_crp(strategy={"type": ""}))
    assert crp.strategy.type == "RollingUpdate" and crp.strategy.rolling_update is not None


def test_policy_parser_is_public_and_names_its_field_path() -> None:
    policy = parse_placement_policy({"placementType": "PickN", "numberOfClusters": 2}, lambda message: None)
    assert policy == PlacementPolicy("PickN", number_of_clusters=2)
    assert parse_placement_policy(None, lambda message: None) == PlacementPolicy()
    with pytest.raises(ManifestError) as caught:
        parse_placement_policy({"placementType": "PickN"}, lambda message: None, "input.policy")
    assert caught.value.field == "input.policy.numberOfClusters"
