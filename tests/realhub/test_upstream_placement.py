"""The upstream OCM placement controller and the dashboard decide the same, on one real hub.

Clusters with labels, claims, resources and taints, label-selector and exclusive sets, bindings in five
namespaces, add-on scores and 26 Placements are created as an admin; the controller
(`var/realhub/bin/placement`) schedules them; the dashboard, registered with its least-privilege token,
syncs the hub and explains every placement with its own scheduler. Both must choose the same clusters
in the same decision groups, before and after labels, taints, scores and prioritizer weights change.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes
import pytest

from inventory.models import Hub
from inventory.sync import sync_hub
from placement.models import Placement
from tests.conftest import unavailable
from tests.realhub.conftest import api_client
from tests.realhub.hub import RealHub, process_exists
from tests.realhub.upstream import (
    CLUSTER_SETS,
    CLUSTERS,
    PLACEMENTS,
    SCORES,
    SET_BINDINGS,
    Decided,
    PlacementController,
    converge,
    decided,
    ensure_namespace,
)

pytestmark = pytest.mark.realhub

NOW = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
SET_LABEL = "cluster.open-cluster-management.io/clusterset"
PLATFORM = "platform.open-cluster-management.io"
ADD_ON = "resource-usage"
# taint ages far from every tolerationSeconds below, so neither scheduler's clock decides
FRESH, OLD = NOW - datetime.timedelta(minutes=5), NOW - datetime.timedelta(hours=2)
LATER = NOW + datetime.timedelta(days=1)
TOLERATE_FOR = 3600  # seconds: a FRESH taint is still tolerated, an OLD one no longer


def stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def taint(key: str, effect: str, added: datetime.datetime, value: str = "") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect, "timeAdded": stamp(added)}


TAINTS = {
    "c03": [taint("maintenance", "NoSelect", FRESH)],
    "c04": [taint("gpu", "PreferNoSelect", FRESH, "true")],
    "c06": [taint("cluster.open-cluster-management.io/unreachable", "NoSelect", OLD)],
    "c08": [taint("drain", "NoSelectIfNew", FRESH)],
    "c11": [taint("maintenance", "NoSelect", OLD)],
}


@dataclass(frozen=True)
class ClusterRow:
    labels: dict[str, str]
    platform: str  # its platform ClusterClaim
    cpu: int  # allocatable cores
    memory: int  # allocatable GiB
    taints: list[dict[str, str]]


def cluster_row(number: int) -> ClusterRow:
    """Cluster c<number>: 1-4 in us, 5-8 in eu, 9-12 in ap; odd ones prod; 1-6 in set-blue, the rest
    in set-green; resources and claims spread so that no two prioritizers agree by accident."""
    return ClusterRow(
        {
            "region": ("us", "eu", "ap")[(number - 1) // 4],
            "env": "prod" if number % 2 else "dev",
            "tier": "gold" if number in (1, 5, 9, 10) else "silver",
            SET_LABEL: "set-blue" if number <= 6 else "set-green",
        },
        ("Azure", "AWS", "GCP")[number % 3],
        2 + (number * 5) % 24,
        4 + (number * 7) % 48,
        TAINTS.get(f"c{number:02}", []),
    )


CLUSTER_TABLE = {f"c{number:02}": cluster_row(number) for number in range(1, 13)}

SETS: dict[str, dict[str, Any]] = {
    "set-blue": {"selectorType": "ExclusiveClusterSetLabel"},
    "set-green": {"selectorType": "ExclusiveClusterSetLabel"},
    "set-prod": {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": {"env": "prod"}}},
    "set-all": {"selectorType": "LabelSelector", "labelSelector": {}},
    "set-gold-far": {
        "selectorType": "LabelSelector",
        "labelSelector": {
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["gold"]},
                {"key": "region", "operator": "In", "values": ["eu", "ap"]},
            ]
        },
    },
}
# namespace -> the sets bound in it; team-d also binds a set that does not exist, team-e none
BINDINGS = {
    "team-a": ["set-all"],
    "team-b": ["set-blue", "set-prod"],
    "team-c": ["set-green"],
    "team-d": ["set-gold-far", "set-missing"],
    "team-e": [],
}


def labels(**match: str) -> dict[str, Any]:
    return {"requiredClusterSelector": {"labelSelector": {"matchLabels": match}}}


def built_in(name: str, weight: int = 1) -> dict[str, Any]:
    return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}


def add_on(score: str, weight: int = 1) -> dict[str, Any]:
    return {
        "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": ADD_ON, "scoreName": score}},
        "weight": weight,
    }


def policy(mode: str, *configurations: dict[str, Any]) -> dict[str, Any]:
    return {"prioritizerPolicy": {"mode": mode, "configurations": list(configurations)}}


def region_groups(per_group: int | str | None = None) -> dict[str, Any]:
    strategy: dict[str, Any] = {
        "decisionGroups": [
            {
                "groupName": f"{region}-group",
                "groupClusterSelector": {"labelSelector": {"matchLabels": {"region": region}}},
            }
            for region in ("us", "eu")
        ]
    }
    if per_group is not None:
        strategy["clustersPerDecisionGroup"] = per_group
    return {"decisionStrategy": {"groupStrategy": strategy}}


def tolerate(key: str, seconds: int | None = None) -> dict[str, Any]:
    toleration: dict[str, Any] = {"key": key, "operator": "Exists"}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return {"tolerations": [toleration]}


CEL_CLAIM = f'managedCluster.status.clusterClaims.exists(c, c.name == "{PLATFORM}" && c.value == "AWS")'

PLACEMENT_SPECS: dict[tuple[str, str], dict[str, Any]] = {
    ("team-a", "everything"): {},
    ("team-a", "prod-by-label"): {"predicates": [labels(env="prod")]},
    ("team-a", "aws-by-claim"): {
        "predicates": [
            {
                "requiredClusterSelector": {
                    "claimSelector": {
                        "matchExpressions": [{"key": PLATFORM, "operator": "In", "values": ["AWS"]}]
                    }
                }
            }
        ]
    },
    ("team-a", "us-eu-not-gcp"): {
        "predicates": [
            {
                "requiredClusterSelector": {
                    "labelSelector": {
                        "matchExpressions": [{"key": "region", "operator": "In", "values": ["us", "eu"]}]
                    },
                    "claimSelector": {
                        "matchExpressions": [{"key": PLATFORM, "operator": "NotIn", "values": ["GCP"]}]
                    },
                }
            }
        ]
    },
    ("team-a", "dev-ap-or-gold"): {"predicates": [labels(env="dev", region="ap"), labels(tier="gold")]},
    ("team-a", "cel-gold"): {
        "predicates": [
            {
                "requiredClusterSelector": {
                    "celSelector": {"celExpressions": ['managedCluster.metadata.labels["tier"] == "gold"']}
                }
            }
        ]
    },
    ("team-a", "cel-aws-outside-eu"): {
        "predicates": [
            {
                "requiredClusterSelector": {
                    "celSelector": {
                        "celExpressions": [CEL_CLAIM, 'managedCluster.metadata.labels["region"] != "eu"']
                    }
                }
            }
        ]
    },
    ("team-a", "tolerates-maintenance"): tolerate("maintenance"),
    ("team-a", "tolerates-maintenance-an-hour"): tolerate("maintenance", TOLERATE_FOR),
    ("team-a", "tolerates-unreachable-an-hour"): tolerate(
        "cluster.open-cluster-management.io/unreachable", TOLERATE_FOR
    ),
    ("team-a", "most-cpu-3"): {"numberOfClusters": 3, **policy("Exact", built_in("ResourceAllocatableCPU"))},
    ("team-a", "most-memory-2"): {
        "numberOfClusters": 2,
        **policy("Exact", built_in("ResourceAllocatableMemory")),
    },
    ("team-a", "addon-cpu-4"): {"numberOfClusters": 4, **policy("Exact", add_on("cpuAvailable"))},
    ("team-a", "addon-weighted-5"): {
        "numberOfClusters": 5,
        **policy("Additive", add_on("cpuAvailable", 2), add_on("memAvailable", 1)),
    },
    ("team-a", "steady-exact-2"): {"numberOfClusters": 2, **policy("Exact", built_in("Steady"))},
    ("team-a", "prod-more-than-there-are"): {"numberOfClusters": 50, "predicates": [labels(env="prod")]},
    ("team-a", "groups-by-region"): region_groups(),
    ("team-a", "groups-of-two"): region_groups(2),
    ("team-a", "groups-of-a-quarter"): {"numberOfClusters": 8, **region_groups("25%")},
    ("team-b", "blue-or-prod"): {},
    ("team-b", "blue-only-3"): {"clusterSets": ["set-blue"], "numberOfClusters": 3},
    ("team-b", "balanced"): {"numberOfClusters": 4, **policy("Exact", built_in("Balance"))},
    ("team-c", "green-cpu-2"): {
        "numberOfClusters": 2,
        **policy("Additive", built_in("ResourceAllocatableCPU", 2)),
    },
    ("team-d", "gold-far"): {},
    ("team-d", "only-the-missing-set"): {"clusterSets": ["set-missing"]},
    ("team-e", "nothing-bound"): {},
}


def score_values(number: int, shift: int = 0) -> list[dict[str, Any]]:
    return [
        {"name": "cpuAvailable", "value": (number * 37 + shift) % 200 - 100},
        {"name": "memAvailable", "value": (number * 53 + shift) % 200 - 100},
    ]


# scores past their validUntil count as none (0); c02's expire first, then c09's while c02's are renewed
SEEDED_VALID_UNTIL = {"c02": OLD, "c05": LATER}
CHANGED_VALID_UNTIL = {"c02": LATER, "c09": OLD}


class Seeder:
    """Creates and changes the hub's objects as an admin would (kubectl), status through its subresource."""

    def __init__(self, client: kubernetes.client.ApiClient) -> None:
        self.client = client
        self.objects = kubernetes.client.CustomObjectsApi(client)

    def cluster(self, name: str) -> None:
        row = CLUSTER_TABLE[name]
        self.objects.create_cluster_custom_object(
            *CLUSTERS,
            {
                "apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster",
                "metadata": {"name": name, "labels": row.labels},
                "spec": {"hubAcceptsClient": True, "taints": row.taints},
            },
        )
        self.cluster_status(name, row.cpu, row.memory, row.platform)

    def cluster_status(self, name: str, cpu: int, memory: int, platform: str) -> None:
        status = {
            "allocatable": {"cpu": str(cpu), "memory": f"{memory}Gi"},
            "capacity": {"cpu": "32", "memory": "64Gi"},
            "clusterClaims": [
                {"name": PLATFORM, "value": platform},
                {"name": "region.open-cluster-management.io", "value": CLUSTER_TABLE[name].labels["region"]},
            ],
        }
        self.objects.patch_cluster_custom_object_status(*CLUSTERS, name, {"status": status})

    def patch_cluster(self, name: str, patch: dict[str, Any]) -> None:
        self.objects.patch_cluster_custom_object(*CLUSTERS, name, patch)

    def scores(self, name: str, values: list[dict[str, Any]], valid_until: datetime.datetime | None) -> None:
        """The cluster's add-on scores, created when missing; without `valid_until` they never expire."""
        group, version, plural = SCORES
        try:
            self.objects.create_namespaced_custom_object(
                group,
                version,
                name,
                plural,
                {
                    "apiVersion": f"{group}/{version}",
                    "kind": "AddOnPlacementScore",
                    "metadata": {"name": ADD_ON, "namespace": name},
                },
            )
        except kubernetes.client.ApiException as exc:
            if exc.status != 409:
                raise
        status = {"scores": values, "validUntil": None if valid_until is None else stamp(valid_until)}
        self.objects.patch_namespaced_custom_object_status(
            group, version, name, plural, ADD_ON, {"status": status}
        )

    def cluster_set(self, name: str, selector: dict[str, Any]) -> None:
        self.objects.create_cluster_custom_object(
            *CLUSTER_SETS,
            {
                "apiVersion": "cluster.open-cluster-management.io/v1beta2",
                "kind": "ManagedClusterSet",
                "metadata": {"name": name},
                "spec": {"clusterSelector": selector},
            },
        )

    def binding(self, namespace: str, cluster_set: str) -> None:
        self.objects.create_namespaced_custom_object(
            *SET_BINDINGS[:2],
            namespace,
            SET_BINDINGS[2],
            {
                "apiVersion": "cluster.open-cluster-management.io/v1beta2",
                "kind": "ManagedClusterSetBinding",
                "metadata": {"name": cluster_set, "namespace": namespace},
                "spec": {"clusterSet": cluster_set},
            },
        )

    def placement(self, namespace: str, name: str, spec: dict[str, Any]) -> None:
        self.objects.create_namespaced_custom_object(
            *PLACEMENTS[:2],
            namespace,
            PLACEMENTS[2],
            {
                "apiVersion": "cluster.open-cluster-management.io/v1beta1",
                "kind": "Placement",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
            },
        )

    def patch_placement(self, namespace: str, name: str, patch: dict[str, Any]) -> None:
        self.objects.patch_namespaced_custom_object(*PLACEMENTS[:2], namespace, PLACEMENTS[2], name, patch)

    def seed(self) -> None:
        for number, name in enumerate(CLUSTER_TABLE, start=1):
            ensure_namespace(self.client, name)
            self.cluster(name)
            if name != "c12":  # a cluster without a score scores 0
                self.scores(name, score_values(number), SEEDED_VALID_UNTIL.get(name))
        for name, selector in SETS.items():
            self.cluster_set(name, selector)
        for namespace, sets in BINDINGS.items():
            ensure_namespace(self.client, namespace)
            for cluster_set in sets:
                self.binding(namespace, cluster_set)
        for (namespace, name), spec in PLACEMENT_SPECS.items():
            self.placement(namespace, name, spec)

    def nothing(self) -> None:
        """The hub as seeded."""

    def change(self) -> None:
        """Labels, taints (and their ages), resources, add-on scores and prioritizer weights move."""
        # tainted before it turns prod: placements that chose c02 keep it, prod-by-label may not take it
        self.patch_cluster("c02", {"spec": {"taints": [taint("drain", "NoSelectIfNew", FRESH)]}})
        self.patch_cluster("c02", {"metadata": {"labels": {"env": "prod"}}})
        self.patch_cluster("c07", {"metadata": {"labels": {"tier": "gold"}}})
        self.patch_cluster("c10", {"metadata": {"labels": {"region": None, SET_LABEL: "set-blue"}}})
        # the fresh maintenance taint grows old: an hour's toleration no longer covers it
        self.patch_cluster("c03", {"spec": {"taints": [taint("maintenance", "NoSelect", OLD)]}})
        self.patch_cluster("c05", {"spec": {"taints": [taint("maintenance", "NoSelect", FRESH)]}})
        self.patch_cluster("c06", {"spec": {"taints": []}})
        self.patch_cluster("c09", {"spec": {"taints": [taint("gpu", "PreferNoSelect", FRESH, "true")]}})
        self.cluster_status("c01", 30, 60, "AWS")
        self.cluster_status("c11", 1, 1, "GCP")
        for number, name in enumerate(CLUSTER_TABLE, start=1):
            if name != "c12":
                self.scores(name, score_values(number, shift=71), CHANGED_VALID_UNTIL.get(name))
        self.patch_placement(
            "team-a",
            "addon-weighted-5",
            {
                "spec": policy(
                    "Additive", add_on("cpuAvailable", 1), add_on("memAvailable", 3), built_in("Steady", 0)
                )
            },
        )
        self.patch_placement(
            "team-a", "most-cpu-3", {"spec": policy("Additive", built_in("ResourceAllocatableMemory", 2))}
        )
        self.patch_placement("team-b", "balanced", {"spec": {"numberOfClusters": 2}})


def running_controller(hub: RealHub) -> PlacementController:
    """The controller started on the hub; without its binary the test skips, or fails in CI."""
    controller = PlacementController(hub)
    if not controller.binary.exists():
        unavailable(f"no placement controller in {hub.bin_dir}: make realhub-bin builds it")
    with api_client(hub) as client:
        return controller.start_on(client)


@pytest.fixture(scope="module")
def placement_controller(real_hub: RealHub) -> Iterator[PlacementController]:
    """The upstream placement controller, running against the session's hub for this module's tests."""
    controller = running_controller(real_hub)
    try:
        yield controller
    finally:
        controller.stop()


def ours(hub: Hub) -> dict[tuple[str, str], Decided]:
    """The dashboard's decision for every hub-owned Placement, from the explanation its reschedule stored."""
    decisions = {}
    for placement in Placement.objects.filter(hub=hub, kind=Placement.Kind.PLACEMENT):
        explained = placement.explanation or {}
        assert "error" not in explained, (placement, explained["error"])
        decisions[(placement.namespace, placement.name)] = decided(
            explained.get("decisions") or [],
            explained.get("decisionGroups") or [],
            explained.get("conditions") or [],
        )
    return decisions


def compare(hub: Hub, upstream: dict[tuple[str, str], Decided]) -> dict[tuple[str, str], str]:
    """Sync the dashboard; (namespace, name) -> ours vs upstream, of every placement they disagree on."""
    sync_hub(hub, trigger="command")
    dashboard = ours(hub)
    assert dashboard.keys() == upstream.keys()
    return {
        key: f"{key[0]}/{key[1]}:\n  ours     {dashboard[key]}\n  upstream {upstream[key]}"
        for key in sorted(upstream)
        if dashboard[key] != upstream[key]
    }


def test_the_upstream_controller_and_the_dashboard_decide_alike(
    empty_hub: RealHub,
    hub_client: kubernetes.client.ApiClient,
    placement_controller: PlacementController,
    registered_hub: Hub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seeder = Seeder(hub_client)
    seeder.seed()
    problems: dict[tuple[str, str], list[str]] = {}
    rounds: list[dict[tuple[str, str], Decided]] = []
    for phase, act in (("as created", seeder.nothing), ("after changes", seeder.change)):
        act()
        upstream = converge(hub_client, placement_controller)
        rounds.append(upstream)
        for key, problem in compare(registered_hub, upstream).items():
            problems.setdefault(key, []).append(f"{phase}: {problem}")
    total = len(PLACEMENT_SPECS)
    with capsys.disabled():
        print(
            f"\nrealhub: upstream placement controller agreed on {total - len(problems)}/{total} placements"
        )
        print(
            f"realhub: placement controller started in {placement_controller.started_in:.1f} s, "
            f"RSS {placement_controller.rss_bytes() / 2**20:.0f} MiB"
        )
    assert not problems, "\n".join(
        [
            *(line for lines in problems.values() for line in lines),
            f"controller log: {placement_controller.log}",
        ]
    )
    assert total >= 20 and all(upstream.keys() == PLACEMENT_SPECS.keys() for upstream in rounds)
    # the comparison means something: most placements chose clusters, and the changes moved many of them
    first, second = rounds
    assert sum(bool(decision.clusters) for decision in first.values()) >= total - 2
    assert sum(first[key] != second[key] for key in first) >= total // 2


def test_the_controller_stops_and_leaves_nothing_running(real_hub: RealHub) -> None:
    controller = running_controller(real_hub)
    pid = controller.pid
    assert process_exists(pid)
    controller.stop()
    assert not process_exists(pid)
    # its self-signed serving certificate stayed in the hub's directory
    assert list(controller.directory.glob("serving-cert-*"))
