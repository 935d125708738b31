"""Scheduler benchmark: milliseconds per placement at fleet scale, and the ratio to a bare numpy pass.

    .venv/bin/python bench/scheduler.py [--sizes 1000 10000] [--repeat 100]

Cases (targets: <= 10 ms per placement at 10k clusters, ratio <= 3):
- OCM: one Placement with Balance + Steady + ResourceAllocatableMemory + AddOn (numberOfClusters 10) over
  a hub with 100 other placements' PlacementDecisions, through `schedule_placement` (the whole reconcile:
  sets, filters, scores, sort, decision groups, bind plan, conditions). The inventory is built once and
  warmed, as the reschedule service keeps it between placements.
- Fleet: one PickN (numberOfClusters 10) with two preferred property sorters and a topology spread
  constraint, through `schedule_crp` (one scheduling cycle, as the controller runs it).
"Bare numpy" is the same arithmetic written directly against the same arrays with nothing else:
no explanations, no objects, no conditions. The ratio says what the product's bookkeeping costs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from placement.scheduler.fleet.inventory import FleetInventory  # noqa: E402
from placement.scheduler.fleet.manifests import (  # noqa: E402
    parse_cluster_resource_placement,
    parse_member_cluster,
)
from placement.scheduler.fleet.schedule import schedule_crp  # noqa: E402
from placement.scheduler.ocm.inventory import OcmInventory, epoch_micros  # noqa: E402
from placement.scheduler.ocm.manifests import parse_placement  # noqa: E402
from placement.scheduler.ocm.schedule import schedule_placement  # noqa: E402
from placement.scheduler.ocm.types import (  # noqa: E402
    CLUSTER_SET_LABEL,
    PLACEMENT_LABEL,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    PlacementDecision,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
REGIONS = ("eastus", "westus", "westeurope", "northeurope", "japaneast", "australiaeast")
VENDORS = ("AKS", "EKS", "GKE", "OpenShift")


def _elapsed_ms(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def paired_ms(
    product: Callable[[], object], bare: Callable[[], object], repeat: int
) -> tuple[float, float, float]:
    """Medians of the product's and the bare pass's wall time, and the median of their per-pair ratio.

    The two run alternately after a warm-up, so machine noise hits both sides of each ratio alike.
    """
    product(), bare()
    pairs = [(_elapsed_ms(product), _elapsed_ms(bare)) for _ in range(repeat)]
    return (
        statistics.median(p for p, _ in pairs),
        statistics.median(b for _, b in pairs),
        statistics.median(p / b for p, b in pairs),
    )


# --- OCM -------------------------------------------------------------------------------------------


def ocm_inventory(size: int, rng: random.Random) -> OcmInventory:
    names = [f"cluster-{i:05d}" for i in range(size)]
    clusters = [
        ManagedCluster(
            name,
            labels={CLUSTER_SET_LABEL: "prod", "region": rng.choice(REGIONS), "vendor": rng.choice(VENDORS)},
            allocatable={"cpu": str(rng.randint(4, 96)), "memory": f"{rng.randint(8, 512)}Gi"},
            capacity={"cpu": "96", "memory": "512Gi"},
        )
        for name in names
    ]
    scores = [
        AddOnPlacementScore(
            name,
            "resource-usage-score",
            (("memAvailable", rng.randint(-100, 100)),),
            NOW + timedelta(hours=1),
        )
        for name in names
    ]
    decisions = [
        PlacementDecision(
            "apps", f"app-{j}-decision-1", {PLACEMENT_LABEL: f"app-{j}"}, tuple(rng.sample(names, 10))
        )
        for j in range(100)
    ]
    return OcmInventory(
        clusters,
        [ManagedClusterSet("prod")],
        [ManagedClusterSetBinding("apps", "prod", "prod")],
        scores,
        decisions,
    )


OCM_PLACEMENT = {
    "apiVersion": "cluster.open-cluster-management.io/v1beta1",
    "kind": "Placement",
    "metadata": {"namespace": "apps", "name": "app-7"},
    "spec": {
        "numberOfClusters": 10,
        "prioritizerPolicy": {
            "mode": "Additive",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 1},
                {
                    "scoreCoordinate": {
                        "type": "AddOn",
                        "addOn": {"resourceName": "resource-usage-score", "scoreName": "memAvailable"},
                    },
                    "weight": 1,
                },
            ],
        },
    },
}


def ocm_bare_numpy(inventory: OcmInventory) -> Callable[[], np.ndarray]:
    """The same four prioritizers, total and top-10 sort, straight on the inventory's arrays."""
    counts, max_count = inventory.balance_counts("apps", "app-7")
    steady = np.zeros(inventory.size, dtype=bool)
    memory = inventory.resource("memory").allocatable
    add_on = inventory.add_on("resource-usage-score")
    values, _ = add_on.score("memAvailable", inventory.size)
    rank = np.arange(inventory.size)
    now_us = epoch_micros(NOW)

    def run() -> np.ndarray:
        balance = np.where(counts > 0, 2 * np.trunc(100.0 * (0.5 - counts / max_count)), 100).astype(np.int64)
        low, high = memory.min(), memory.max()
        resource = np.trunc(((memory - low) / (high - low) - 0.5) * 2.0 * 100.0).astype(np.int64)
        expired = add_on.has_valid_until & (now_us > add_on.valid_until_us)
        total = balance + np.where(steady, 100, 0) + resource + np.where(expired, 0, values)
        return np.lexsort((rank, -total))[:10]

    return run


def bench_ocm(size: int, repeat: int) -> tuple[float, float, float]:
    inventory = ocm_inventory(size, random.Random(size))
    placement = parse_placement(OCM_PLACEMENT, print)
    return paired_ms(lambda: schedule_placement(placement, inventory, NOW), ocm_bare_numpy(inventory), repeat)


# --- Fleet ----------------------------------------------------------------------------------------

NODE_COUNT = "kubernetes-fleet.io/node-count"
CORE_COST = "kubernetes.azure.com/per-cpu-core-cost"


def member_cluster(name: str, rng: random.Random) -> dict[str, Any]:
    heartbeat = (NOW - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    joined = {"type": "Joined", "status": "True", "lastTransitionTime": "2026-11-01T00:00:00Z"}
    healthy = {"type": "Healthy", "status": "True", "lastTransitionTime": "2026-11-01T00:00:00Z"}
    return {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"region": rng.choice(REGIONS), "environment": "production"}},
        "status": {
            "properties": {
                NODE_COUNT: {"value": str(rng.randint(3, 200))},
                CORE_COST: {"value": f"{rng.uniform(0.01, 0.2):.3f}"},
            },
            "agentStatus": [
                {"type": "MemberAgent", "conditions": [joined, healthy], "lastReceivedHeartbeat": heartbeat}
            ],
        },
    }


FLEET_PLACEMENT = {
    "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
    "kind": "ClusterResourcePlacement",
    "metadata": {"name": "web-app"},
    "spec": {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web-app"}],
        "policy": {
            "placementType": "PickN",
            "numberOfClusters": 10,
            "affinity": {
                "clusterAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 40,
                            "preference": {"propertySorter": {"name": NODE_COUNT, "sortOrder": "Descending"}},
                        },
                        {
                            "weight": 20,
                            "preference": {"propertySorter": {"name": CORE_COST, "sortOrder": "Ascending"}},
                        },
                    ]
                }
            },
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        },
    },
}


def _half_away_from_zero(values: np.ndarray) -> np.ndarray:
    return np.where(values >= 0, np.floor(values + 0.5), -np.floor(-values + 0.5)).astype(np.int64)


def fleet_bare_numpy(inventory: FleetInventory, picks: int) -> Callable[[], list[int]]:
    """Two interpolated sorters, then `picks` greedy topology-spread picks (upstream's one pick per cycle)."""
    nodes = np.array([float(c.properties[NODE_COUNT].value) for c in inventory.clusters])
    cost = np.array([float(c.properties[CORE_COST].value) for c in inventory.clusters])
    regions, domain = np.unique([c.labels["region"] for c in inventory.clusters], return_inverse=True)
    rank = np.arange(len(nodes))

    def run() -> list[int]:
        affinity = _half_away_from_zero(40 * (nodes - nodes.min()) / (nodes.max() - nodes.min()))
        affinity += _half_away_from_zero(20 * (1 - (cost - cost.min()) / (cost.max() - cost.min())))
        # best first: affinity descending, ties to the larger name (upstream's reverse sort)
        order = np.lexsort((rank, affinity))[::-1]
        counts = np.zeros(len(regions), dtype=np.int64)
        available = np.ones(len(nodes), dtype=bool)
        picked = []
        for _ in range(picks):
            ordered = np.sort(counts)
            smallest, largest = ordered[0], ordered[-1]
            # skew change per domain: -1 for the single smallest domain, +1 for the largest (or all equal)
            change = np.where(counts == largest, 1, 0)
            change = np.where((counts == smallest) & (ordered[1] != smallest), -1, change)
            score = np.where((largest - smallest + change) > 1, np.iinfo(np.int64).min, -change)
            wanted = available[order] & (score == score.max())[domain[order]]
            best = int(order[np.argmax(wanted)])
            picked.append(best)
            available[best] = False
            counts[domain[best]] += 1
        return picked

    return run


def bench_fleet(size: int, repeat: int) -> tuple[float, float, float]:
    rng = random.Random(size)
    inventory = FleetInventory(
        [parse_member_cluster(member_cluster(f"member-{i:05d}", rng)) for i in range(size)]
    )
    crp = parse_cluster_resource_placement(FLEET_PLACEMENT, print)
    picks = crp.policy.number_of_clusters
    assert picks is not None, "the benchmark placement is a PickN with numberOfClusters"
    bare = fleet_bare_numpy(inventory, picks)
    return paired_ms(lambda: schedule_crp(crp, inventory, (), NOW), bare, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    print(f"{'clusters':>8}  {'case':<44} {'ms/placement':>12} {'bare numpy ms':>14} {'ratio':>6}")
    for size in args.sizes:
        cases = (
            ("OCM Balance+Steady+Memory+AddOn, 100 PDs", bench_ocm),
            ("Fleet PickN 10, 2 property sorters, spread", bench_fleet),
        )
        for case, bench in cases:
            product, bare, ratio = bench(size, args.repeat)
            print(f"{size:>8}  {case:<44} {product:>12.2f} {bare:>14.3f} {ratio:>6.1f}")


if __name__ == "__main__":
    main()
