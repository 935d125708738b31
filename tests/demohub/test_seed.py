"""The seeded fleet: deterministic per seed, the right counts, and fields a real hub would accept."""

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from demohub.resources import RESOURCES
from demohub.seed import (
    ADDON_LABEL_PREFIX,
    CLUSTERSET_LABEL,
    SCORE_NAME,
    UNAVAILABLE_TAINT,
    UNREACHABLE_TAINT,
    seed_store,
)
from demohub.store import Store
from placement.scheduler.labels import label_value_error, parse_label_selector, qualified_name_error
from placement.scheduler.quantity import parse_quantity

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
CLUSTER_NAME = re.compile(r"^(aks|eks|gke)-[a-z0-9-]+-(prod|staging|dev)-\d{3,}$")
COST = re.compile(r"^\d+\.\d{3}$")
CLAIMS = {
    "id.k8s.io",
    "region.open-cluster-management.io",
    "platform.open-cluster-management.io",
    "kubeversion.open-cluster-management.io",
}


def _seeded(seed: int = 11, clusters: int = 200, fleet: bool = True) -> Store:
    store = Store(seed=seed, clock=lambda: NOW)
    seed_store(store, clusters, fleet=fleet, seed=seed)
    return store


def _everything(store: Store) -> dict[str, list[dict[str, Any]]]:
    return {resource.kind: store.list(resource).items for resource in RESOURCES}


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _condition(conditions: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(c for c in conditions if c["type"] == kind)


@pytest.fixture(scope="module")
def fleet() -> dict[str, list[dict[str, Any]]]:
    return _everything(_seeded())


def test_the_same_seed_gives_the_same_fleet() -> None:
    assert _everything(_seeded(seed=5, clusters=40)) == _everything(_seeded(seed=5, clusters=40))


def test_another_seed_gives_another_fleet() -> None:
    first = [c["metadata"]["name"] for c in _seeded(seed=5, clusters=40).list("ManagedCluster").items]
    second = [c["metadata"]["name"] for c in _seeded(seed=6, clusters=40).list("ManagedCluster").items]

    assert first != second


def test_counts_per_kind(fleet: dict[str, list[dict[str, Any]]]) -> None:
    counts = {kind: len(items) for kind, items in fleet.items()}

    assert counts == {
        "ManagedCluster": 200,
        "AddOnPlacementScore": 200,
        "ManagedClusterSet": 8,
        "ManagedClusterSetBinding": 8,
        "Placement": 4,
        "PlacementDecision": 0,
        "MemberCluster": 200,
        "ClusterResourcePlacement": 2,
        "ClusterResourceBinding": 6,
        "ClusterStagedUpdateStrategy": 1,
        "ClusterStagedUpdateRun": 1,
        "ClusterApprovalRequest": 1,
    }


def test_without_fleet_only_ocm_kinds_are_seeded() -> None:
    store = _seeded(clusters=10, fleet=False)

    assert store.count("ManagedCluster") == 10
    assert all(store.count(r) == 0 for r in RESOURCES if "kubernetes-fleet.io" in r.group)


def test_cluster_names_and_labels_are_valid(fleet: dict[str, list[dict[str, Any]]]) -> None:
    exclusive_sets = {
        s["metadata"]["name"]
        for s in fleet["ManagedClusterSet"]
        if s["spec"]["clusterSelector"]["selectorType"] == "ExclusiveClusterSetLabel"
    }
    for cluster in fleet["ManagedCluster"]:
        name, labels = cluster["metadata"]["name"], cluster["metadata"]["labels"]
        assert CLUSTER_NAME.match(name), name
        assert {"cloud", "vendor", "region", "environment", CLUSTERSET_LABEL} <= labels.keys()
        assert labels[CLUSTERSET_LABEL] in exclusive_sets
        assert all(
            qualified_name_error(k) is None and label_value_error(v) is None for k, v in labels.items()
        )
        addon_states = {v for k, v in labels.items() if k.startswith(ADDON_LABEL_PREFIX)}
        assert addon_states and addon_states <= {"available", "unhealthy", "unreachable"}


def test_quantities_parse_and_allocatable_fits_capacity(fleet: dict[str, list[dict[str, Any]]]) -> None:
    for cluster in fleet["ManagedCluster"]:
        status = cluster["status"]
        for resource in ("cpu", "memory"):
            assert (
                0
                < parse_quantity(status["allocatable"][resource])
                < parse_quantity(status["capacity"][resource])
            )


def test_claims_are_present_and_agree_with_labels(fleet: dict[str, list[dict[str, Any]]]) -> None:
    for cluster in fleet["ManagedCluster"]:
        claims = {c["name"]: c["value"] for c in cluster["status"]["clusterClaims"]}
        assert claims.keys() >= CLAIMS
        assert claims["region.open-cluster-management.io"] == cluster["metadata"]["labels"]["region"]
        assert claims["platform.open-cluster-management.io"] == cluster["metadata"]["labels"]["vendor"]


def test_built_in_taints_follow_the_available_condition(fleet: dict[str, list[dict[str, Any]]]) -> None:
    seen = set()
    for cluster in fleet["ManagedCluster"]:
        available = _condition(cluster["status"]["conditions"], "ManagedClusterConditionAvailable")["status"]
        taints = {t["key"]: t for t in cluster["spec"]["taints"]}
        seen.add(available)
        assert (UNREACHABLE_TAINT in taints) == (available == "Unknown")
        assert (UNAVAILABLE_TAINT in taints) == (available == "False")
        assert all(_time(t["timeAdded"]) <= NOW for t in taints.values())
    gpu_taints = [
        t
        for c in fleet["ManagedCluster"]
        for t in c["spec"]["taints"]
        if (t["key"], t.get("value")) == ("dedicated", "gpu")
    ]

    assert seen == {"True", "Unknown", "False"}
    assert gpu_taints and {t["effect"] for t in gpu_taints} == {"NoSelect"}


def test_addon_scores_are_in_range_and_fresh_only_for_available_clusters(
    fleet: dict[str, list[dict[str, Any]]],
) -> None:
    available = {
        c["metadata"]["name"]: _condition(c["status"]["conditions"], "ManagedClusterConditionAvailable")[
            "status"
        ]
        for c in fleet["ManagedCluster"]
    }
    for score in fleet["AddOnPlacementScore"]:
        assert score["metadata"]["name"] == SCORE_NAME
        values = {s["name"]: s["value"] for s in score["status"]["scores"]}
        assert values.keys() == {"cpuAvailable", "memAvailable"}
        assert all(-100 <= v <= 100 for v in values.values())
        fresh = _time(score["status"]["validUntil"]) > NOW
        assert fresh == (available[score["metadata"]["namespace"]] == "True")


def test_sets_include_the_built_ins_and_their_status_counts_members(
    fleet: dict[str, list[dict[str, Any]]],
) -> None:
    sets = {s["metadata"]["name"]: s for s in fleet["ManagedClusterSet"]}
    clusters = fleet["ManagedCluster"]

    assert sets["default"]["spec"]["clusterSelector"] == {"selectorType": "ExclusiveClusterSetLabel"}
    assert sets["global"]["spec"]["clusterSelector"] == {"selectorType": "LabelSelector", "labelSelector": {}}
    for name, cluster_set in sets.items():
        selector = cluster_set["spec"]["clusterSelector"]
        if selector["selectorType"] == "LabelSelector":
            parsed = parse_label_selector(selector["labelSelector"])
            members = sum(parsed.matches(c["metadata"]["labels"]) for c in clusters)
        else:
            members = sum(c["metadata"]["labels"][CLUSTERSET_LABEL] == name for c in clusters)
        message = _condition(cluster_set["status"]["conditions"], "ClusterSetEmpty")["message"]
        assert message == (f"{members} ManagedClusters selected" if members else "No ManagedCluster selected")


def test_bindings_are_named_after_existing_sets(fleet: dict[str, list[dict[str, Any]]]) -> None:
    sets = {s["metadata"]["name"] for s in fleet["ManagedClusterSet"]}

    for binding in fleet["ManagedClusterSetBinding"]:
        assert binding["metadata"]["name"] == binding["spec"]["clusterSet"]
        assert binding["spec"]["clusterSet"] in sets
    assert {b["metadata"]["namespace"] for b in fleet["ManagedClusterSetBinding"]} >= {
        "apps-prod",
        "apps-dev",
    }


def test_member_clusters_have_fleet_properties_and_usage(fleet: dict[str, list[dict[str, Any]]]) -> None:
    for member in fleet["MemberCluster"]:
        status, name = member["status"], member["metadata"]["name"]
        properties = {key: value["value"] for key, value in status["properties"].items()}
        assert int(properties["kubernetes-fleet.io/node-count"]) >= 3
        has_costs = name.startswith("aks-")
        for cost in ("kubernetes.azure.com/per-cpu-core-cost", "kubernetes.azure.com/per-gb-memory-cost"):
            assert (cost in properties) == has_costs
            assert not has_costs or COST.match(properties[cost])
        usage = status["resourceUsage"]
        for resource in ("cpu", "memory"):
            available, allocatable, capacity = (
                parse_quantity(usage[k][resource]) for k in ("available", "allocatable", "capacity")
            )
            assert 0 < available <= allocatable <= capacity
        agent = status["agentStatus"][0]
        assert agent["type"] == "MemberAgent"
        assert {c["type"] for c in agent["conditions"]} == {"Joined", "Healthy"}
        assert _time(agent["lastReceivedHeartbeat"]) <= NOW
        assert all(t["effect"] == "NoSchedule" for t in member["spec"]["taints"])


def test_staged_rollout_waits_on_a_pending_approval(fleet: dict[str, list[dict[str, Any]]]) -> None:
    placements = {p["metadata"]["name"]: p for p in fleet["ClusterResourcePlacement"]}
    (run,) = fleet["ClusterStagedUpdateRun"]
    (strategy,) = fleet["ClusterStagedUpdateStrategy"]
    (request,) = fleet["ClusterApprovalRequest"]
    run_name, stage = run["metadata"]["name"], request["spec"]["targetStage"]

    assert placements[run["spec"]["placementName"]]["spec"]["strategy"]["type"] == "External"
    assert run["spec"]["stagedRolloutStrategyName"] == strategy["metadata"]["name"]
    assert stage in [s["name"] for s in strategy["spec"]["stages"]]
    assert request["metadata"]["name"] == f"{run_name}-after-{stage}"
    assert request["metadata"]["labels"] == {
        "kubernetes-fleet.io/targetUpdateRun": run_name,
        "kubernetes-fleet.io/targetUpdatingStage": stage,
        "kubernetes-fleet.io/taskType": "afterStage",
        "kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
    }
    assert "status" not in request
    stage_status = next(s for s in run["status"]["stagesStatus"] if s["stageName"] == stage)
    assert stage_status["afterStageTaskStatus"][0]["approvalRequestName"] == request["metadata"]["name"]


def test_bindings_target_the_external_placements_clusters(fleet: dict[str, list[dict[str, Any]]]) -> None:
    batch = next(p for p in fleet["ClusterResourcePlacement"] if p["metadata"]["name"] == "batch-jobs")
    members = {m["metadata"]["name"] for m in fleet["MemberCluster"]}
    targets = [b["spec"]["targetCluster"] for b in fleet["ClusterResourceBinding"]]

    assert sorted(targets) == sorted(batch["spec"]["policy"]["clusterNames"])
    assert set(targets) <= members
    assert {b["spec"]["state"] for b in fleet["ClusterResourceBinding"]} == {"Bound", "Scheduled"}
