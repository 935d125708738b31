"""A realistic synthetic fleet, the same for the same seed: OCM clusters, sets, bindings, placements,
add-on scores and, optionally, the Fleet side (MemberClusters, placements, a staged update run waiting
for approval). Field names follow the upstream OCM and KubeFleet APIs.
"""

import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from demohub.fleetsim import APPLY_SECONDS_LABEL, seed_rollout
from demohub.resources import FLEET_CLUSTER_GROUP, FLEET_PLACEMENT_GROUP, OCM_GROUP, RESOURCES
from demohub.store import Store, rfc3339
from placement.scheduler.labels import parse_label_selector

CLUSTERSET_LABEL = f"{OCM_GROUP}/clusterset"
ADDON_LABEL_PREFIX = "feature.open-cluster-management.io/addon-"
UNREACHABLE_TAINT = f"{OCM_GROUP}/unreachable"
UNAVAILABLE_TAINT = f"{OCM_GROUP}/unavailable"
SCORE_NAME = "resource-usage-score"
ADDONS = (
    "application-manager",
    "cert-policy-controller",
    "config-policy-controller",
    "governance-policy-framework",
    "search-collector",
    "work-manager",
)
KUBE_VERSIONS = ("v1.29.9", "v1.30.5", "v1.30.6", "v1.31.2")
CORES_PER_NODE = (4, 8, 16, 32)
ENVIRONMENT_SETS = {"prod": "production", "staging": "staging", "dev": "development"}
EUROPE = ("westeurope", "northeurope", "eu-central-1", "europe-west1")
UPDATE_RUN = "batch-jobs-rollout-1"
# Development members in this region apply for a day, so a rollout that reaches them is seen in progress.
SLOW_APPLY_REGION = "europe-west1"
SLOW_APPLY_SECONDS = "86400"
GIB_IN_KI = 1024 * 1024


@dataclass(frozen=True)
class Vendor:
    prefix: str
    name: str  # the OCM `vendor` label and platform claim
    cloud: str  # the OCM `cloud` label
    regions: tuple[str, ...]
    weight: int


VENDORS = (
    Vendor("aks", "AKS", "Azure", ("eastus", "westus2", "westeurope", "northeurope", "southeastasia"), 45),
    Vendor("eks", "EKS", "Amazon", ("us-east-1", "us-west-2", "eu-central-1", "ap-southeast-1"), 35),
    Vendor("gke", "GKE", "Google", ("us-central1", "europe-west1", "asia-east1"), 20),
)


@dataclass(frozen=True)
class SyntheticCluster:
    """Everything random about one cluster, drawn once so the object builders stay pure."""

    name: str
    vendor: Vendor
    region: str
    environment: str
    cluster_set: str
    availability: str  # ManagedClusterConditionAvailable: "True", "Unknown" or "False"
    gpu: bool
    maintenance: bool
    nodes: int
    cores_per_node: int
    kube_version: str
    addons: dict[str, str]
    cluster_id: str
    reserved_millicores_per_node: int
    reserved_ki_per_node: int
    usage: float
    scores: tuple[int, int]
    costs: tuple[float, float]
    minutes_ago: int

    @property
    def cpu_capacity(self) -> int:
        return self.nodes * self.cores_per_node

    @property
    def memory_capacity_ki(self) -> int:
        return (
            self.nodes * self.cores_per_node * 4 * GIB_IN_KI * 985 // 1000
        )  # 4 GiB per core, minus firmware

    @property
    def cpu_allocatable_m(self) -> int:
        return self.cpu_capacity * 1000 - self.nodes * self.reserved_millicores_per_node

    @property
    def memory_allocatable_ki(self) -> int:
        return self.memory_capacity_ki - self.nodes * self.reserved_ki_per_node


def _pick_weighted(rng: random.Random, options: dict[str, float]) -> str:
    return rng.choices(list(options), weights=list(options.values()))[0]


def _addon_states(rng: random.Random, availability: str) -> dict[str, str]:
    installed = sorted(rng.sample(ADDONS, rng.randint(3, len(ADDONS))))
    if availability != "True":
        return dict.fromkeys(installed, "unreachable")
    return {addon: "unhealthy" if rng.random() < 0.06 else "available" for addon in installed}


def synthesize_clusters(rng: random.Random, count: int) -> list[SyntheticCluster]:
    clusters = []
    for index in range(1, count + 1):
        vendor = rng.choices(VENDORS, weights=[v.weight for v in VENDORS])[0]
        region = rng.choice(vendor.regions)
        environment = _pick_weighted(rng, {"prod": 0.45, "staging": 0.2, "dev": 0.35})
        cluster_set = "default" if rng.random() < 0.1 else ENVIRONMENT_SETS[environment]
        availability = _pick_weighted(rng, {"True": 0.93, "Unknown": 0.05, "False": 0.02})
        clusters.append(
            SyntheticCluster(
                name=f"{vendor.prefix}-{region}-{environment}-{index:03d}",
                vendor=vendor,
                region=region,
                environment=environment,
                cluster_set=cluster_set,
                availability=availability,
                gpu=rng.random() < 0.08,
                maintenance=rng.random() < 0.03,
                nodes=rng.randint(3, 12),
                cores_per_node=rng.choice(CORES_PER_NODE),
                kube_version=rng.choice(KUBE_VERSIONS),
                addons=_addon_states(rng, availability),
                cluster_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                reserved_millicores_per_node=rng.randint(90, 250),
                reserved_ki_per_node=rng.randint(1_500_000, 3_200_000),
                usage=rng.uniform(0.15, 0.9),
                scores=(rng.randint(-100, 100), rng.randint(-100, 100)),
                costs=(rng.uniform(0.03, 0.12), rng.uniform(0.004, 0.016)),
                minutes_ago=rng.randint(5, 600),
            )
        )
    return clusters


# ---- OCM ---------------------------------------------------------------------------------------


def _condition(kind: str, status: str, reason: str, message: str, at: datetime) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": rfc3339(at),
    }


def _cluster_labels(cluster: SyntheticCluster) -> dict[str, str]:
    labels = {
        "name": cluster.name,
        "cloud": cluster.vendor.cloud,
        "vendor": cluster.vendor.name,
        "region": cluster.region,
        "environment": cluster.environment,
        CLUSTERSET_LABEL: cluster.cluster_set,
    }
    if cluster.gpu:
        labels["gpu"] = "true"
    labels.update({f"{ADDON_LABEL_PREFIX}{addon}": state for addon, state in cluster.addons.items()})
    return labels


def _taints(cluster: SyntheticCluster, now: datetime) -> list[dict[str, Any]]:
    since = rfc3339(now - timedelta(minutes=cluster.minutes_ago))
    taints = []
    if cluster.availability == "Unknown":
        taints.append({"key": UNREACHABLE_TAINT, "effect": "NoSelect", "timeAdded": since})
    if cluster.availability == "False":
        taints.append({"key": UNAVAILABLE_TAINT, "effect": "NoSelect", "timeAdded": since})
    if cluster.gpu:
        taints.append(
            {
                "key": "dedicated",
                "value": "gpu",
                "effect": "NoSelect",
                "timeAdded": rfc3339(now - timedelta(days=30)),
            }
        )
    if cluster.maintenance:
        taints.append(
            {"key": "maintenance", "value": "scheduled", "effect": "PreferNoSelect", "timeAdded": since}
        )
    return taints


def _availability_condition(cluster: SyntheticCluster, now: datetime) -> dict[str, Any]:
    since = now - timedelta(minutes=cluster.minutes_ago)
    if cluster.availability == "True":
        return _condition(
            "ManagedClusterConditionAvailable",
            "True",
            "ManagedClusterAvailable",
            "Managed cluster is available",
            since,
        )
    if cluster.availability == "Unknown":
        return _condition(
            "ManagedClusterConditionAvailable",
            "Unknown",
            "ManagedClusterLeaseUpdateStopped",
            "Registration agent stopped updating its lease.",
            since,
        )
    return _condition(
        "ManagedClusterConditionAvailable",
        "False",
        "ManagedClusterKubeAPIServerUnavailable",
        "The kube-apiserver is not ok",
        since,
    )


def managed_cluster(cluster: SyntheticCluster, now: datetime) -> dict[str, Any]:
    joined = now - timedelta(days=90)
    claims = {
        "id.k8s.io": cluster.cluster_id,
        "kubeversion.open-cluster-management.io": cluster.kube_version,
        "platform.open-cluster-management.io": cluster.vendor.name,
        "product.open-cluster-management.io": cluster.vendor.name,
        "region.open-cluster-management.io": cluster.region,
    }
    return {
        "apiVersion": f"{OCM_GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": cluster.name, "labels": _cluster_labels(cluster)},
        "spec": {
            "hubAcceptsClient": True,
            "leaseDurationSeconds": 60,
            "managedClusterClientConfigs": [{"url": f"https://api.{cluster.name}.example.net:6443"}],
            "taints": _taints(cluster, now),
        },
        "status": {
            "conditions": [
                _condition(
                    "HubAcceptedManagedCluster",
                    "True",
                    "HubClusterAdminAccepted",
                    "Accepted by hub cluster admin",
                    joined,
                ),
                _condition(
                    "ManagedClusterJoined", "True", "ManagedClusterJoined", "Managed cluster joined", joined
                ),
                _availability_condition(cluster, now),
            ],
            "clusterClaims": [{"name": name, "value": value} for name, value in claims.items()],
            "capacity": {"cpu": str(cluster.cpu_capacity), "memory": f"{cluster.memory_capacity_ki}Ki"},
            "allocatable": {
                "cpu": f"{cluster.cpu_allocatable_m}m",
                "memory": f"{cluster.memory_allocatable_ki}Ki",
            },
            "version": {"kubernetes": cluster.kube_version},
        },
    }


def addon_placement_score(cluster: SyntheticCluster, now: datetime) -> dict[str, Any]:
    """Reported by an add-on agent; a cluster whose agent went quiet has an expired score."""
    fresh = cluster.availability == "True"
    updated = now - timedelta(minutes=2 if fresh else cluster.minutes_ago)
    valid_until = now + timedelta(days=1) if fresh else updated + timedelta(minutes=5)
    cpu_score, memory_score = cluster.scores
    return {
        "apiVersion": f"{OCM_GROUP}/v1alpha1",
        "kind": "AddOnPlacementScore",
        "metadata": {"name": SCORE_NAME, "namespace": cluster.name},
        "status": {
            "conditions": [
                _condition(
                    "AddOnPlacementScoreUpdated",
                    "True",
                    "AddOnPlacementScoreUpdated",
                    "Scores updated",
                    updated,
                )
            ],
            "scores": [
                {"name": "cpuAvailable", "value": cpu_score},
                {"name": "memAvailable", "value": memory_score},
            ],
            "validUntil": rfc3339(valid_until),
        },
    }


def _set_selectors() -> dict[str, dict[str, Any]]:
    exclusive = {"selectorType": "ExclusiveClusterSetLabel"}
    return {
        "default": exclusive,
        "global": {"selectorType": "LabelSelector", "labelSelector": {}},
        "production": exclusive,
        "staging": exclusive,
        "development": exclusive,
        "azure": {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"cloud": "Azure"}}},
        "europe": {
            "selectorType": "LabelSelector",
            "labelSelector": {
                "matchExpressions": [{"key": "region", "operator": "In", "values": list(EUROPE)}]
            },
        },
        "gpu-clusters": {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"gpu": "true"}}},
    }


def _member_count(name: str, selector: dict[str, Any], clusters: list[dict[str, Any]]) -> int:
    if selector["selectorType"] == "ExclusiveClusterSetLabel":
        return sum(1 for c in clusters if c["metadata"]["labels"].get(CLUSTERSET_LABEL) == name)
    parsed = parse_label_selector(selector["labelSelector"])
    return sum(1 for c in clusters if parsed.matches(c["metadata"]["labels"]))


def cluster_sets(clusters: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    sets = []
    for name, selector in _set_selectors().items():
        members = _member_count(name, selector, clusters)
        condition = (
            _condition(
                "ClusterSetEmpty", "False", "ClustersSelected", f"{members} ManagedClusters selected", now
            )
            if members
            else _condition("ClusterSetEmpty", "True", "NoClusterMatched", "No ManagedCluster selected", now)
        )
        sets.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1beta2",
                "kind": "ManagedClusterSet",
                "metadata": {"name": name},
                "spec": {"clusterSelector": selector},
                "status": {"conditions": [condition]},
            }
        )
    return sets


def cluster_set_bindings(now: datetime) -> list[dict[str, Any]]:
    bound = {
        "default": ["global"],
        "apps-prod": ["production", "gpu-clusters", "global"],
        "apps-dev": ["development", "staging"],
        "argocd": ["global", "europe"],
    }
    return [
        {
            "apiVersion": f"{OCM_GROUP}/v1beta2",
            "kind": "ManagedClusterSetBinding",
            "metadata": {"name": cluster_set, "namespace": namespace},
            "spec": {"clusterSet": cluster_set},
            "status": {"conditions": [_condition("Bound", "True", "ClusterSetBound", "", now)]},
        }
        for namespace, sets in bound.items()
        for cluster_set in sets
    ]


def _placement(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{OCM_GROUP}/v1beta1",
        "kind": "Placement",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def placements() -> list[dict[str, Any]]:
    return [
        _placement(
            "apps-prod",
            "web-frontend",
            {
                "clusterSets": ["production"],
                "numberOfClusters": 5,
                "predicates": [
                    {
                        "requiredClusterSelector": {
                            "labelSelector": {
                                "matchExpressions": [
                                    {
                                        "key": "region",
                                        "operator": "In",
                                        "values": ["eastus", "westus2", "us-east-1", "us-west-2"],
                                    },
                                ]
                            }
                        }
                    }
                ],
                "prioritizerPolicy": {
                    "mode": "Additive",
                    "configurations": [
                        {
                            "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"},
                            "weight": 2,
                        },
                        {
                            "scoreCoordinate": {
                                "type": "AddOn",
                                "addOn": {"resourceName": SCORE_NAME, "scoreName": "cpuAvailable"},
                            },
                            "weight": 1,
                        },
                    ],
                },
                "tolerations": [{"key": UNREACHABLE_TAINT, "operator": "Exists", "tolerationSeconds": 300}],
            },
        ),
        _placement(
            "apps-prod",
            "gpu-training",
            {
                "clusterSets": ["gpu-clusters"],
                "numberOfClusters": 2,
                "tolerations": [
                    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSelect"}
                ],
                "prioritizerPolicy": {
                    "mode": "Exact",
                    "configurations": [
                        {
                            "scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"},
                            "weight": 1,
                        },
                    ],
                },
            },
        ),
        _placement(
            "apps-dev",
            "dev-sandbox",
            {
                "clusterSets": ["development", "staging"],
                "predicates": [
                    {
                        "requiredClusterSelector": {
                            "claimSelector": {
                                "matchExpressions": [
                                    {
                                        "key": "platform.open-cluster-management.io",
                                        "operator": "In",
                                        "values": ["AKS", "EKS"],
                                    },
                                ]
                            }
                        }
                    }
                ],
                "decisionStrategy": {"groupStrategy": {"clustersPerDecisionGroup": "25%"}},
            },
        ),
        _placement(
            "argocd",
            "guestbook",
            {
                "numberOfClusters": 3,
                "predicates": [
                    {
                        "requiredClusterSelector": {
                            "celSelector": {
                                "celExpressions": [
                                    'managedCluster.metadata.labels["environment"] == "prod"',
                                ]
                            }
                        }
                    }
                ],
            },
        ),
    ]


# ---- Fleet -------------------------------------------------------------------------------------


def _quantities(cpu_m: int, memory_ki: int) -> dict[str, str]:
    return {"cpu": f"{cpu_m}m", "memory": f"{memory_ki}Ki"}


def _agent_status(cluster: SyntheticCluster, now: datetime) -> list[dict[str, Any]]:
    joined = now - timedelta(days=60)
    since = now - timedelta(minutes=cluster.minutes_ago)
    heartbeat = now if cluster.availability == "True" else since
    healthy = (
        _condition(
            "Healthy", "False", "HealthCheckFailed", "the member agent cannot reach the API server", since
        )
        if cluster.availability == "False"
        else _condition("Healthy", "True", "HealthCheckSucceeded", "", joined)
    )
    conditions = [_condition("Joined", "True", "JoinSucceeded", "", joined), healthy]
    return [{"type": "MemberAgent", "conditions": conditions, "lastReceivedHeartbeat": rfc3339(heartbeat)}]


def _properties(cluster: SyntheticCluster, now: datetime) -> dict[str, dict[str, str]]:
    observed = rfc3339(now)
    values = {
        "kubernetes-fleet.io/node-count": str(cluster.nodes),
        "k8s.io/k8s-version": cluster.kube_version,
    }
    if cluster.vendor.cloud == "Azure":  # the Azure property provider only runs on AKS members
        values["kubernetes.azure.com/per-cpu-core-cost"] = f"{cluster.costs[0]:.3f}"
        values["kubernetes.azure.com/per-gb-memory-cost"] = f"{cluster.costs[1]:.3f}"
    return {name: {"value": value, "observationTime": observed} for name, value in values.items()}


def member_cluster(cluster: SyntheticCluster, now: datetime) -> dict[str, Any]:
    cpu_m, memory_ki = cluster.cpu_allocatable_m, cluster.memory_allocatable_ki
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if cluster.gpu else []
    joined = now - timedelta(days=60)
    labels = {"region": cluster.region, "environment": cluster.environment, "vendor": cluster.vendor.name}
    if cluster.region == SLOW_APPLY_REGION and cluster.environment == "dev":
        labels[APPLY_SECONDS_LABEL] = SLOW_APPLY_SECONDS
    return {
        "apiVersion": f"{FLEET_CLUSTER_GROUP}/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": cluster.name, "labels": labels},
        "spec": {
            "identity": {
                "kind": "ServiceAccount",
                "name": "fleet-member-agent-sa",
                "namespace": "fleet-system",
                "apiGroup": "",
            },
            "heartbeatPeriodSeconds": 60,
            "taints": taints,
        },
        "status": {
            "conditions": [
                _condition("ReadyToJoin", "True", "MemberClusterReadyToJoin", "", joined),
                _condition("Joined", "True", "MemberClusterJoined", "", joined),
            ],
            "agentStatus": _agent_status(cluster, now),
            "properties": _properties(cluster, now),
            "resourceUsage": {
                "capacity": {"cpu": str(cluster.cpu_capacity), "memory": f"{cluster.memory_capacity_ki}Ki"},
                "allocatable": _quantities(cpu_m, memory_ki),
                "available": _quantities(
                    int(cpu_m * (1 - cluster.usage)), int(memory_ki * (1 - cluster.usage))
                ),
                "observationTime": rfc3339(now),
            },
        },
    }


def _fleet_placement(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{FLEET_PLACEMENT_GROUP}/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": spec,
    }


def cluster_resource_placements(batch_clusters: list[str]) -> list[dict[str, Any]]:
    return [
        _fleet_placement(
            "web-frontend",
            {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "web-frontend"}
                ],
                "policy": {
                    "placementType": "PickN",
                    "numberOfClusters": 3,
                    "affinity": {
                        "clusterAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "clusterSelectorTerms": [
                                    {"labelSelector": {"matchLabels": {"environment": "prod"}}},
                                ]
                            },
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 50,
                                    "preference": {
                                        "propertySorter": {
                                            "name": "kubernetes.azure.com/per-cpu-core-cost",
                                            "sortOrder": "Ascending",
                                        },
                                    },
                                }
                            ],
                        }
                    },
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "maxUnavailable": "25%",
                        "maxSurge": "25%",
                        "unavailablePeriodSeconds": 60,
                    },
                },
                "revisionHistoryLimit": 10,
            },
        ),
        _fleet_placement(
            "batch-jobs",
            {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "batch-jobs"}
                ],
                "policy": {"placementType": "PickFixed", "clusterNames": batch_clusters},
                "strategy": {"type": "External"},
                "revisionHistoryLimit": 10,
            },
        ),
    ]


def _batch_clusters(clusters: list[SyntheticCluster]) -> tuple[list[str], list[str]]:
    """Up to three staging and three prod clusters for the externally rolled-out placement."""
    staging = sorted(c.name for c in clusters if c.environment == "staging")[:3]
    prod = sorted(c.name for c in clusters if c.environment == "prod")[:3]
    return staging, prod


def cluster_resource_bindings(
    rng: random.Random, staging: list[str], prod: list[str]
) -> list[dict[str, Any]]:
    """As the scheduler leaves them: Scheduled, waiting for the staged update run to bind them, with no
    resource snapshot yet (an empty name, which the upstream CRD requires to be present)."""
    return [
        {
            "apiVersion": f"{FLEET_PLACEMENT_GROUP}/v1beta1",
            "kind": "ClusterResourceBinding",
            "metadata": {
                "name": f"batch-jobs-{cluster_name}-{rng.getrandbits(32):08x}",
                "labels": {"kubernetes-fleet.io/parent-CRP": "batch-jobs"},
            },
            "spec": {
                "state": "Scheduled",
                "targetCluster": cluster_name,
                "resourceSnapshotName": "",
                "schedulingPolicySnapshotName": "batch-jobs-0",
                "clusterDecision": {
                    "clusterName": cluster_name,
                    "selected": True,
                    "reason": "picked by scheduling policy",
                },
            },
        }
        for cluster_name in staging + prod
    ]


def staged_update_strategy() -> dict[str, Any]:
    return {
        "apiVersion": f"{FLEET_PLACEMENT_GROUP}/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "staging-then-prod"},
        "spec": {
            "stages": [
                {
                    "name": "staging",
                    "labelSelector": {"matchLabels": {"environment": "staging"}},
                    "afterStageTasks": [{"type": "Approval"}],
                },
                {
                    "name": "prod",
                    "labelSelector": {"matchLabels": {"environment": "prod"}},
                    "afterStageTasks": [{"type": "TimedWait", "waitTime": "1h"}],
                },
            ]
        },
    }


def staged_update_run() -> dict[str, Any]:
    """Created without status: seeding plays the hub's controllers on it (see `fleetsim.seed_rollout`)."""
    return {
        "apiVersion": f"{FLEET_PLACEMENT_GROUP}/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": UPDATE_RUN},
        "spec": {
            "placementName": "batch-jobs",
            "resourceSnapshotIndex": "1",
            "stagedRolloutStrategyName": "staging-then-prod",
            "state": "Run",
        },
    }


# ---- assembly ----------------------------------------------------------------------------------


def fleet_objects(clusters: int, *, fleet: bool, seed: int, now: datetime) -> list[dict[str, Any]]:
    """Every object seeding creates, in order (approval requests come from the played controllers);
    the same arguments give the same objects."""
    rng = random.Random(seed)
    synthetic = synthesize_clusters(rng, clusters)
    ocm_clusters = [managed_cluster(c, now) for c in synthetic]
    objects = [
        *cluster_sets(ocm_clusters, now),
        *ocm_clusters,
        *(addon_placement_score(c, now) for c in synthetic),
        *cluster_set_bindings(now),
        *placements(),
    ]
    if fleet:
        staging, prod = _batch_clusters(synthetic)
        objects += [
            *(member_cluster(c, now) for c in synthetic),
            *cluster_resource_placements(staging + prod),
            *cluster_resource_bindings(rng, staging, prod),
            staged_update_strategy(),
            staged_update_run(),
        ]
    return objects


def _is_placement_kind(obj: dict[str, Any]) -> bool:
    api_version: str = obj["apiVersion"]
    return api_version.startswith(f"{FLEET_PLACEMENT_GROUP}/")


def seed_store(store: Store, clusters: int, *, fleet: bool = False, seed: int = 0) -> dict[str, int]:
    """Create the synthetic fleet in `store`, statuses included; answers the count per kind.

    The placement objects are created earlier and played forward with the hub's controllers, so the
    staged update run is exactly what the controller would have made of them by now.
    """
    objects = fleet_objects(clusters, fleet=fleet, seed=seed, now=store.clock())
    rollout = [obj for obj in objects if _is_placement_kind(obj)]
    for obj in objects:
        if not _is_placement_kind(obj):
            store.create(obj)
    if rollout:
        seed_rollout(store, rollout)
    return {resource.kind: count for resource in RESOURCES if (count := store.count(resource))}
