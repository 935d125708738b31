"""Small hand-written conformance cases, one per family, whose verdicts the tests work out from upstream,
and what the conformance tests read from any case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from conformance.cases import Case
from placement.scheduler.timeutil import parse_time

NOW = "2024-05-01T12:00:00Z"
OCM_API = "cluster.open-cluster-management.io"
FLEET_CLUSTER_API = "cluster.kubernetes-fleet.io/v1beta1"
FLEET_PLACEMENT_API = "placement.kubernetes-fleet.io/v1beta1"
SET_LABEL = f"{OCM_API}/clusterset"


def now_of(case: Case) -> datetime:
    """The case's scheduling time."""
    now = parse_time(case["now"])
    assert now is not None
    return now


def of_kind(case: Case, kind: str) -> list[dict[str, Any]]:
    """The case's manifests of one kind, in case order."""
    return [manifest for manifest in case["manifests"] if manifest["kind"] == kind]


def managed_cluster(
    name: str, clusterset: str, env: str, cpu: str, taints: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": f"{OCM_API}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": {SET_LABEL: clusterset, "env": env}},
        "spec": {"hubAcceptsClient": True, "taints": taints or []},
        "status": {"allocatable": {"cpu": cpu}, "capacity": {"cpu": cpu}},
    }


def ocm_case() -> Case:
    """Six clusters; the placement in `web` keeps three after set membership, predicate and taints.

    c1..c5 are in set `prod` (bound to `web`), c6 is in `other`. c5 is `env: dev` (predicate), c4 has a
    taint nobody tolerates, c3 one tolerated for 300 s from a minute ago and is already decided.
    """
    maintenance = {"key": "maint", "effect": "NoSelect", "timeAdded": "2024-05-01T11:59:00Z"}
    gpu = {"key": "gpu", "effect": "NoSelect", "timeAdded": "2024-05-01T10:00:00Z"}
    return {
        "id": "ocm-hand-1",
        "family": "ocm",
        "now": NOW,
        "manifests": [
            managed_cluster("c1", "prod", "prod", "4"),
            managed_cluster("c2", "prod", "prod", "8"),
            managed_cluster("c3", "prod", "prod", "6", [maintenance]),
            managed_cluster("c4", "prod", "prod", "8", [gpu]),
            managed_cluster("c5", "prod", "dev", "8"),
            managed_cluster("c6", "other", "prod", "8"),
            {"apiVersion": f"{OCM_API}/v1beta2", "kind": "ManagedClusterSet", "metadata": {"name": "prod"}},
            {"apiVersion": f"{OCM_API}/v1beta2", "kind": "ManagedClusterSet", "metadata": {"name": "other"}},
            {
                "apiVersion": f"{OCM_API}/v1beta2",
                "kind": "ManagedClusterSetBinding",
                "metadata": {"name": "prod", "namespace": "web"},
                "spec": {"clusterSet": "prod"},
            },
            {
                "apiVersion": f"{OCM_API}/v1beta1",
                "kind": "Placement",
                "metadata": {"name": "frontend", "namespace": "web"},
                "spec": {
                    "numberOfClusters": 2,
                    "predicates": [
                        {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}
                    ],
                    "tolerations": [{"key": "maint", "operator": "Exists", "tolerationSeconds": 300}],
                    "prioritizerPolicy": {
                        "mode": "Additive",
                        "configurations": [
                            {
                                "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                                "weight": 2,
                            }
                        ],
                    },
                },
            },
            {
                "apiVersion": f"{OCM_API}/v1beta1",
                "kind": "PlacementDecision",
                "metadata": {
                    "name": "frontend-decision-1",
                    "namespace": "web",
                    "labels": {
                        f"{OCM_API}/placement": "frontend",
                        f"{OCM_API}/decision-group-name": "",
                        f"{OCM_API}/decision-group-index": "0",
                    },
                },
                "status": {"decisions": [{"clusterName": "c3", "reason": ""}]},
            },
        ],
    }


def clusters_tainted(case: Case, key: str) -> list[dict[str, Any]]:
    """The ManagedClusters of `case` with a taint of that key."""
    return [
        manifest
        for manifest in case["manifests"]
        if manifest["kind"] == "ManagedCluster"
        and any(taint.get("key") == key for taint in (manifest.get("spec") or {}).get("taints") or [])
    ]


def member_cluster(name: str, region: str, taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    joined = {
        "type": "Joined",
        "status": "True",
        "reason": "Joined",
        "lastTransitionTime": "2024-05-01T10:00:00Z",
    }
    healthy = {
        "type": "Healthy",
        "status": "True",
        "reason": "Healthy",
        "lastTransitionTime": "2024-05-01T10:00:00Z",
    }
    return {
        "apiVersion": FLEET_CLUSTER_API,
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"region": region}},
        "spec": {
            "identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"},
            "heartbeatPeriodSeconds": 60,
            "taints": taints or [],
        },
        "status": {
            "agentStatus": [
                {
                    "type": "MemberAgent",
                    "conditions": [joined, healthy],
                    "lastReceivedHeartbeat": "2024-05-01T11:59:30Z",
                }
            ]
        },
    }


def binding(name: str, placement: str, cluster: str, *, deleting: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"kubernetes-fleet.io/parent-CRP": placement}}
    if deleting:
        metadata |= {"deletionTimestamp": "2024-05-01T11:00:00Z", "finalizers": ["kubernetes-fleet.io/x"]}
    return {
        "apiVersion": FLEET_PLACEMENT_API,
        "kind": "ClusterResourceBinding",
        "metadata": metadata,
        "spec": {
            "state": "Bound",
            "targetCluster": cluster,
            "schedulingPolicySnapshotName": f"{placement}-0",
        },
    }


def fleet_case() -> Case:
    """Three healthy members; a PickN of 2 preferring `region: east`, where m3 has an untolerated taint.

    The existing bindings are not the placement's to keep: one is being deleted, one is another CRP's.
    """
    return {
        "id": "fleet-hand-1",
        "family": "fleet",
        "now": NOW,
        "manifests": [
            member_cluster("m1", "east"),
            member_cluster("m2", "west"),
            member_cluster("m3", "east", [{"key": "gpu", "effect": "NoSchedule"}]),
            binding("web-m3-gone", "web", "m3", deleting=True),
            binding("api-m2", "api", "m2", deleting=False),
            {
                "apiVersion": FLEET_PLACEMENT_API,
                "kind": "ClusterResourcePlacement",
                "metadata": {"name": "web", "generation": 1},
                "spec": {
                    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
                    "policy": {
                        "placementType": "PickN",
                        "numberOfClusters": 2,
                        "affinity": {
                            "clusterAffinity": {
                                "preferredDuringSchedulingIgnoredDuringExecution": [
                                    {
                                        "weight": 10,
                                        "preference": {"labelSelector": {"matchLabels": {"region": "east"}}},
                                    }
                                ]
                            }
                        },
                    },
                },
            },
        ],
    }
