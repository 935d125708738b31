"""Scheduler benchmark: milliseconds per placement, against a full-work numpy reference and upstream.

    .venv/bin/python bench/scheduler.py [--sizes 10000 50000] [--repeat 30] [--upstream-runs 1]

Cases (targets: ratio to the reference <= 3, faster than upstream from 10,000 clusters):
- OCM: one Placement over two bound sets (a tenth of the clusters in none, a few deleting), two ORed
  predicates (a label In with a claim NotIn; a matchLabels), three tolerations (one of them with
  tolerationSeconds) against a fifth of the clusters tainted NoSelect, PreferNoSelect and NoSelectIfNew
  at various ages, Balance + Steady + ResourceAllocatableCPU + ResourceAllocatableMemory + AddOn (a few
  scores expired), numberOfClusters 10, over a hub with 100 placements' PlacementDecisions (its own
  among them), through `schedule_placement` (the whole reconcile: sets, filters, scores, sort,
  decision groups, bind plan, conditions). The inventory is built once and warmed, as the reschedule
  service keeps it between placements.
- Fleet: one PickN (numberOfClusters 10) with a required affinity term (a tenth of the members are in
  staging), two tolerations against a fifth of the members tainted, two preferred property sorters and
  a topology spread constraint, over members a few of which have a stale heartbeat or have been
  unhealthy for a while, through `schedule_crp` (every cycle to the fixed point, one pick each).

Each reference does all of upstream's scheduling for its case directly on numpy arrays encoded from the
case's raw numbers (OCM: set membership, selectors, taints, every prioritizer, sort, top N; Fleet:
eligibility, required affinity, taints, both sorters, the spread picks), with no explanations, objects
or conditions; the run stops if a reference selects other clusters than the scheduler. "upstream" is
the upstream scheduler (OCM's scheduling controller, KubeFleet's scheduler) on the same case through
the conformance oracle: the median over `--upstream-runs` runs (0 leaves it out: it is the same
program before and after a change to ours, and takes minutes at 50,000 members) of its scheduling
calls alone (no decoding, no process start), after checking it selects the same clusters.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.cases import Case  # noqa: E402
from conformance.oracle import Oracle, build  # noqa: E402
from placement.scheduler.fleet.inventory import FleetInventory  # noqa: E402
from placement.scheduler.fleet.manifests import (  # noqa: E402
    parse_cluster_resource_placement,
    parse_member_cluster,
)
from placement.scheduler.fleet.schedule import schedule_crp  # noqa: E402
from placement.scheduler.ocm.inventory import OcmInventory, epoch_micros  # noqa: E402
from placement.scheduler.ocm.manifests import parse_ocm_object  # noqa: E402
from placement.scheduler.ocm.schedule import schedule_placement  # noqa: E402
from placement.scheduler.ocm.types import (  # noqa: E402
    CLUSTER_SET_LABEL,
    PLACEMENT_LABEL,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    Placement,
    PlacementDecision,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
REGIONS = ("eastus", "westus", "westeurope", "northeurope", "japaneast", "australiaeast")
VENDORS = ("AKS", "EKS", "GKE", "OpenShift")
# one upstream run of the 50,000-member Fleet case takes minutes on a loaded 2-core machine
UPSTREAM_TIMEOUT = 1800.0


@dataclass(frozen=True, slots=True)
class Figures:
    """Medians of one case: ours and the reference's ms, their per-pair ratio, and upstream's ms (None
    when not timed)."""

    product: float
    reference: float
    ratio: float
    upstream: float | None


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

OCM_GROUP = "cluster.open-cluster-management.io"
PLATFORM_CLAIM = "platform.open-cluster-management.io"
PLATFORMS = ("AWS", "Azure", "GCP", "IBM")
UNREACHABLE = "cluster.open-cluster-management.io/unreachable"
SCORE_RESOURCE = "resource-usage-score"
OCM_PICKS = 10
OCM_PLACEMENT_NAME = "app-7"


@dataclass(frozen=True, slots=True)
class OcmFleet:
    """The case's manifests, plus the raw numbers they were written from (what the reference reads)."""

    manifests: list[dict[str, Any]]
    placement: dict[str, Any]
    # per cluster, in name order: set label ("" for none), region, vendor, platform claim, deleting
    cluster_set: list[str]
    region: list[str]
    vendor: list[str]
    platform: list[str]
    deleting: np.ndarray
    cpu: np.ndarray
    memory_gi: np.ndarray
    # one row per taint: owning cluster, key, value, effect, timeAdded in epoch microseconds
    taints: list[tuple[int, str, str, str, int]]
    # the add-on score: present, memAvailable value, validUntil in epoch microseconds
    score_present: np.ndarray
    score_value: np.ndarray
    score_valid_until_us: np.ndarray
    # cluster positions named by every PlacementDecision, and by the benchmarked placement's own
    decided_positions: np.ndarray
    own_positions: np.ndarray


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cluster_taints(rng: random.Random) -> list[tuple[str, str, str, int]]:
    """One or two taints as (key, value, effect, age in seconds): tolerated forever, for a while,
    never, only where already decided, or merely preferred against."""
    pool = (
        ("maintenance", "", "NoSelect"),
        ("gpu", rng.choice(("shared", "dedicated")), "NoSelect"),
        (UNREACHABLE, "", "NoSelect"),
        ("spot", "true", "PreferNoSelect"),
        ("draining", "", "NoSelectIfNew"),
    )
    return [(*taint, rng.randint(0, 7200)) for taint in rng.sample(pool, rng.randint(1, 2))]


def ocm_fleet(size: int, rng: random.Random) -> OcmFleet:
    """`size` clusters over two bound sets (a tenth in none, a few deleting), a fifth tainted, add-on
    scores (a few expired), 100 placements' PlacementDecisions and the benchmarked placement."""
    names = [f"cluster-{i:05d}" for i in range(size)]
    cluster_set = [rng.choices(("prod", "staging", ""), (6, 3, 1))[0] for _ in names]
    region = [rng.choice(REGIONS) for _ in names]
    vendor = [rng.choice(VENDORS) for _ in names]
    platform = [rng.choice(PLATFORMS) for _ in names]
    deleting = np.array([rng.random() < 0.005 for _ in names])
    cpu = np.array([rng.randint(4, 96) for _ in names], dtype=np.float64)
    memory_gi = np.array([rng.randint(8, 512) for _ in names], dtype=np.float64)
    score_present = np.array([rng.random() < 0.98 for _ in names])
    score_value = np.array([rng.randint(-100, 100) for _ in names], dtype=np.int64)
    valid_hours = [1 if rng.random() < 0.99 else -1 for _ in names]
    score_valid_until_us = np.array([epoch_micros(NOW + timedelta(hours=h)) for h in valid_hours])
    taints: list[tuple[int, str, str, str, int]] = []
    manifests: list[dict[str, Any]] = []
    for position, name in enumerate(names):
        labels = {"region": region[position], "vendor": vendor[position]}
        if cluster_set[position]:
            labels[CLUSTER_SET_LABEL] = cluster_set[position]
        metadata: dict[str, Any] = {"name": name, "labels": labels}
        if deleting[position]:
            metadata["deletionTimestamp"] = _stamp(NOW - timedelta(minutes=5))
            metadata["finalizers"] = [f"{OCM_GROUP}/api-resource-cleanup"]
        spec_taints = []
        if rng.random() < 0.2:
            for key, value, effect, age in _cluster_taints(rng):
                added = NOW - timedelta(seconds=age)
                taints.append((position, key, value, effect, epoch_micros(added)))
                taint = {"key": key, "effect": effect, "timeAdded": _stamp(added)}
                spec_taints.append({**taint, "value": value} if value else taint)
        allocatable = {"cpu": str(int(cpu[position])), "memory": f"{int(memory_gi[position])}Gi"}
        manifests.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1",
                "kind": "ManagedCluster",
                "metadata": metadata,
                "spec": {"hubAcceptsClient": True, "taints": spec_taints},
                "status": {
                    "allocatable": allocatable,
                    "capacity": {"cpu": "96", "memory": "512Gi"},
                    "clusterClaims": [{"name": PLATFORM_CLAIM, "value": platform[position]}],
                },
            }
        )
    for set_name in ("prod", "staging"):
        selector = {"selectorType": "ExclusiveClusterSetLabel"}
        manifests.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1beta2",
                "kind": "ManagedClusterSet",
                "metadata": {"name": set_name},
                "spec": {"clusterSelector": selector},
            }
        )
        manifests.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1beta2",
                "kind": "ManagedClusterSetBinding",
                "metadata": {"namespace": "apps", "name": set_name},
                "spec": {"clusterSet": set_name},
            }
        )
    for position in np.flatnonzero(score_present).tolist():
        manifests.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1alpha1",
                "kind": "AddOnPlacementScore",
                "metadata": {"namespace": names[position], "name": SCORE_RESOURCE},
                "status": {
                    "scores": [{"name": "memAvailable", "value": int(score_value[position])}],
                    "validUntil": _stamp(NOW + timedelta(hours=valid_hours[position])),
                },
            }
        )
    # the benchmarked placement's own decisions include clusters tainted NoSelectIfNew, which it keeps
    draining = sorted({taint[0] for taint in taints if taint[1] == "draining"})
    own = sorted(rng.sample(draining, min(5, len(draining))) + rng.sample(range(size), 5))
    decided = [own] + [sorted(rng.sample(range(size), OCM_PICKS)) for _ in range(99)]
    for index, positions in enumerate(decided):
        placement_name = OCM_PLACEMENT_NAME if index == 0 else f"app-{100 + index}"
        manifests.append(
            {
                "apiVersion": f"{OCM_GROUP}/v1beta1",
                "kind": "PlacementDecision",
                "metadata": {
                    "namespace": "apps",
                    "name": f"{placement_name}-decision-1",
                    "labels": {PLACEMENT_LABEL: placement_name},
                },
                "status": {"decisions": [{"clusterName": names[p], "reason": ""} for p in positions]},
            }
        )
    manifests.append(OCM_PLACEMENT)
    return OcmFleet(
        manifests=manifests,
        placement=OCM_PLACEMENT,
        cluster_set=cluster_set,
        region=region,
        vendor=vendor,
        platform=platform,
        deleting=deleting,
        cpu=cpu,
        memory_gi=memory_gi,
        taints=taints,
        score_present=score_present,
        score_value=score_value,
        score_valid_until_us=score_valid_until_us,
        decided_positions=np.concatenate([np.asarray(p, dtype=np.int64) for p in decided]),
        own_positions=np.asarray(own, dtype=np.int64),
    )


OCM_PLACEMENT: dict[str, Any] = {
    "apiVersion": f"{OCM_GROUP}/v1beta1",
    "kind": "Placement",
    "metadata": {"namespace": "apps", "name": OCM_PLACEMENT_NAME},
    "spec": {
        "clusterSets": ["prod", "staging"],
        "numberOfClusters": OCM_PICKS,
        "predicates": [
            {
                "requiredClusterSelector": {
                    "labelSelector": {
                        "matchExpressions": [{"key": "region", "operator": "In", "values": list(REGIONS[:4])}]
                    },
                    "claimSelector": {
                        "matchExpressions": [{"key": PLATFORM_CLAIM, "operator": "NotIn", "values": ["IBM"]}]
                    },
                }
            },
            {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"vendor": "OpenShift"}}}},
        ],
        "prioritizerPolicy": {
            "mode": "Additive",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}, "weight": 1},
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 2},
                {
                    "scoreCoordinate": {
                        "type": "AddOn",
                        "addOn": {"resourceName": SCORE_RESOURCE, "scoreName": "memAvailable"},
                    },
                    "weight": 1,
                },
            ],
        },
        "tolerations": [
            {"key": "maintenance", "operator": "Exists", "effect": "NoSelect", "tolerationSeconds": 3600},
            {"key": "gpu", "operator": "Equal", "value": "shared"},
            {"key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 300},
        ],
    },
}


def _codes(values: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
    """Each distinct value's code, and the codes of `values`."""
    table = {value: code for code, value in enumerate(sorted(set(values)))}
    return table, np.array([table[value] for value in values], dtype=np.int64)


def _wanted(table: dict[str, int], values: Sequence[str]) -> np.ndarray:
    return np.array([table[value] for value in values if value in table], dtype=np.int64)


def ocm_reference(fleet: OcmFleet) -> Callable[[], np.ndarray]:
    """Upstream's whole Schedule for the case, straight on numpy arrays: set membership, both
    predicates (labels and claims), taints and tolerations, Balance, Steady, both resource prioritizers
    over the feasible clusters, the add-on score with its expiry, the weighted total, and every feasible
    cluster ranked by total then name (the first N are the selection).

    Only the encoding of the fleet as arrays happens before timing, as a scheduler keeps its inventory
    between placements; everything that depends on the placement runs in the timed call.
    """
    spec = fleet.placement["spec"]
    size = len(fleet.region)
    sets, set_code = _codes(fleet.cluster_set)
    regions, region_code = _codes(fleet.region)
    vendors, vendor_code = _codes(fleet.vendor)
    platforms, platform_code = _codes(fleet.platform)
    keys, taint_key = _codes([taint[1] for taint in fleet.taints])
    values, taint_value = _codes([taint[2] for taint in fleet.taints])
    taint_owner = np.array([taint[0] for taint in fleet.taints], dtype=np.int64)
    taint_effect = np.array([taint[3] for taint in fleet.taints])
    taint_added_us = np.array([taint[4] for taint in fleet.taints], dtype=np.int64)
    memory = fleet.memory_gi * 2.0**30
    now_us = epoch_micros(NOW)

    def run() -> np.ndarray:
        available = np.isin(set_code, _wanted(sets, spec["clusterSets"])) & ~fleet.deleting
        first, second = (p["requiredClusterSelector"] for p in spec["predicates"])
        in_regions = first["labelSelector"]["matchExpressions"][0]["values"]
        not_platforms = first["claimSelector"]["matchExpressions"][0]["values"]
        matches_first = np.isin(region_code, _wanted(regions, in_regions))
        matches_first &= ~np.isin(platform_code, _wanted(platforms, not_platforms))
        matches_second = vendor_code == vendors.get(second["labelSelector"]["matchLabels"]["vendor"], -1)
        feasible = available & (matches_first | matches_second)
        # taints: PreferNoSelect never filters, NoSelectIfNew spares the clusters the placement decided
        steady = np.zeros(size, dtype=bool)
        steady[fleet.own_positions] = True
        tolerated = taint_effect == "PreferNoSelect"
        tolerated |= (taint_effect == "NoSelectIfNew") & steady[taint_owner]
        for toleration in spec["tolerations"]:
            matches = taint_key == keys.get(toleration["key"], -1)
            if "effect" in toleration:
                matches &= taint_effect == toleration["effect"]
            if toleration["operator"] == "Equal":
                matches &= taint_value == values.get(toleration.get("value", ""), -1)
            if "tolerationSeconds" in toleration:
                matches &= now_us < taint_added_us + toleration["tolerationSeconds"] * 1_000_000
            tolerated |= matches
        feasible[taint_owner[~tolerated]] = False
        filtered = np.flatnonzero(feasible)
        counts = np.bincount(fleet.decided_positions, minlength=size)
        counts -= np.bincount(fleet.own_positions, minlength=size)
        count = counts[filtered]
        usage = 2 * np.trunc(100.0 * (0.5 - count / counts.max()))
        total = np.where(count > 0, usage, 100).astype(np.int64) + np.where(steady[filtered], 100, 0)
        cpu_weight, memory_weight, add_on_weight = (
            c["weight"] for c in spec["prioritizerPolicy"]["configurations"]
        )
        for column, weight in ((fleet.cpu, cpu_weight), (memory, memory_weight)):
            allocatable = column[filtered]
            low, high = allocatable.min(), allocatable.max()
            scaled = np.trunc(((allocatable - low) / (high - low) - 0.5) * 2.0 * 100.0)
            total += weight * scaled.astype(np.int64)
        usable = fleet.score_present[filtered] & (now_us <= fleet.score_valid_until_us[filtered])
        total += add_on_weight * np.where(usable, fleet.score_value[filtered], 0)
        # upstream sorts every feasible cluster, then takes the first N
        return filtered[np.lexsort((filtered, -total))]

    return run


def bench_ocm(size: int, repeat: int, upstream_runs: int) -> Figures:
    fleet = ocm_fleet(size, random.Random(size))
    objects = [parse_ocm_object(manifest, print) for manifest in fleet.manifests]
    placement = next(o for o in objects if isinstance(o, Placement))
    inventory = OcmInventory(
        [o for o in objects if isinstance(o, ManagedCluster)],
        [o for o in objects if isinstance(o, ManagedClusterSet)],
        [o for o in objects if isinstance(o, ManagedClusterSetBinding)],
        [o for o in objects if isinstance(o, AddOnPlacementScore)],
        [o for o in objects if isinstance(o, PlacementDecision)],
    )
    reference = ocm_reference(fleet)
    ours = schedule_placement(placement, inventory, NOW)
    assert ours.outcome is not None, "the benchmark placement is scheduled"
    selected = [inventory.names[p] for p in ours.outcome.selected]
    expected = [inventory.names[p] for p in reference()[:OCM_PICKS]]
    if selected != expected:
        raise SystemExit(f"OCM at {size}: the scheduler selected {selected}, the reference {expected}")
    if not np.array_equal(ours.outcome.ranked, reference()):
        raise SystemExit(f"OCM at {size}: the scheduler and the reference rank the feasible clusters apart")
    product, bare, ratio = paired_ms(lambda: schedule_placement(placement, inventory, NOW), reference, repeat)
    case = Case(id=f"bench-ocm-{size}", family="ocm", now=_stamp(NOW), manifests=fleet.manifests)
    return Figures(
        product, bare, ratio, upstream_ms(case, sorted(selected), _decided_clusters, upstream_runs)
    )


def _decided_clusters(verdict: dict[str, Any]) -> list[str]:
    return sorted(name for decision in verdict["decisions"] for name in decision["clusters"])


def upstream_ms(
    case: Case, selected: list[str], chosen: Callable[[dict[str, Any]], list[str]], runs: int
) -> float | None:
    """Median time of the upstream scheduler on the same case over `runs` runs (its scheduling calls
    only, as the conformance oracle measures them), after checking that it selects the same clusters
    (`chosen` reads them from its verdict, sorted); None when `runs` is 0."""
    if runs == 0:
        return None
    build()
    with Oracle(timeout=UPSTREAM_TIMEOUT) as oracle:
        elapsed: list[float] = []
        for _ in range(runs):
            result = oracle.run(case)
            if result.get("error"):
                raise SystemExit(f"{case['id']}: the oracle refused the case: {result['error']}")
            (verdict,) = result["placements"]
            if (theirs := chosen(verdict)) != selected:
                raise SystemExit(f"{case['id']}: upstream selected {theirs}, the scheduler {selected}")
            elapsed.append(int(result["elapsedNs"]) / 1e6)
    return statistics.median(elapsed)


# --- Fleet ----------------------------------------------------------------------------------------

NODE_COUNT = "kubernetes-fleet.io/node-count"
CORE_COST = "kubernetes.azure.com/per-cpu-core-cost"
FLEET_TAINTS = (("dedicated", "gpu"), ("maintenance", ""), ("example.com/spot", "true"))
HEALTHY_SINCE = "2026-11-01T00:00:00Z"
AGENT_TIMEOUT = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class FleetMembers:
    """The member clusters' manifests, plus the raw numbers they were written from, in name order."""

    manifests: list[dict[str, Any]]
    region: list[str]
    environment: list[str]
    nodes: np.ndarray
    cost: np.ndarray
    heartbeat_us: np.ndarray
    # Healthy is False since this time (epoch microseconds); 0 where it is True
    unhealthy_since_us: np.ndarray
    # one row per taint (all NoSchedule): owning cluster, key, value
    taints: list[tuple[int, str, str]]


def fleet_members(size: int, rng: random.Random) -> FleetMembers:
    """`size` members: a tenth in staging, a fifth tainted, a few with a stale heartbeat, a few
    unhealthy (some for long enough to be ineligible)."""
    names = [f"member-{i:05d}" for i in range(size)]
    region = [rng.choice(REGIONS) for _ in names]
    environment = [rng.choices(("production", "staging"), (9, 1))[0] for _ in names]
    nodes = np.array([rng.randint(3, 200) for _ in names], dtype=np.float64)
    cost_text = [f"{rng.uniform(0.01, 0.2):.3f}" for _ in names]
    heartbeats = [NOW - timedelta(seconds=30 if rng.random() < 0.98 else 600) for _ in names]
    unhealthy = [None if rng.random() < 0.98 else NOW - timedelta(minutes=rng.choice((2, 60))) for _ in names]
    taints: list[tuple[int, str, str]] = []
    manifests: list[dict[str, Any]] = []
    for index, name in enumerate(names):
        spec: dict[str, Any] = {}
        if rng.random() < 0.2:
            chosen = rng.sample(FLEET_TAINTS, rng.randint(1, 2))
            taints += [(index, key, value) for key, value in chosen]
            spec["taints"] = [
                {"key": key, "effect": "NoSchedule", **({"value": value} if value else {})}
                for key, value in chosen
            ]
        since = unhealthy[index]
        health = "True" if since is None else "False"
        conditions = [
            {"type": "Joined", "status": "True", "lastTransitionTime": HEALTHY_SINCE},
            {
                "type": "Healthy",
                "status": health,
                "lastTransitionTime": _stamp(since) if since else HEALTHY_SINCE,
            },
        ]
        manifests.append(
            {
                "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
                "kind": "MemberCluster",
                "metadata": {
                    "name": name,
                    "labels": {"region": region[index], "environment": environment[index]},
                },
                "spec": spec,
                "status": {
                    "properties": {
                        NODE_COUNT: {"value": str(int(nodes[index]))},
                        CORE_COST: {"value": cost_text[index]},
                    },
                    "agentStatus": [
                        {
                            "type": "MemberAgent",
                            "conditions": conditions,
                            "lastReceivedHeartbeat": _stamp(heartbeats[index]),
                        }
                    ],
                },
            }
        )
    return FleetMembers(
        manifests=manifests,
        region=region,
        environment=environment,
        nodes=nodes,
        cost=np.array([float(text) for text in cost_text]),
        heartbeat_us=np.array([epoch_micros(moment) for moment in heartbeats], dtype=np.int64),
        unhealthy_since_us=np.array([0 if s is None else epoch_micros(s) for s in unhealthy], dtype=np.int64),
        taints=taints,
    )


FLEET_PLACEMENT: dict[str, Any] = {
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
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "clusterSelectorTerms": [
                            {"labelSelector": {"matchLabels": {"environment": "production"}}}
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 40,
                            "preference": {"propertySorter": {"name": NODE_COUNT, "sortOrder": "Descending"}},
                        },
                        {
                            "weight": 20,
                            "preference": {"propertySorter": {"name": CORE_COST, "sortOrder": "Ascending"}},
                        },
                    ],
                }
            },
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": "DoNotSchedule"}
            ],
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "gpu"},
                {"key": "maintenance", "operator": "Exists"},
            ],
        },
    },
}


def _half_away_from_zero(values: np.ndarray) -> np.ndarray:
    return np.where(values >= 0, np.floor(values + 0.5), -np.floor(-values + 0.5)).astype(np.int64)


def fleet_reference(members: FleetMembers, picks: int) -> Callable[[], list[int]]:
    """Upstream's PickN for the case on numpy arrays: eligibility (heartbeat, prolonged unhealth), the
    required affinity term, taints against the tolerations, the two interpolated sorters (extremes over
    every member, as upstream's PreScore), then `picks` greedy topology-spread picks (upstream's one
    pick per cycle), best first with ties to the larger name."""
    policy = FLEET_PLACEMENT["spec"]["policy"]
    environments, environment_code = _codes(members.environment)
    regions, domain = np.unique(members.region, return_inverse=True)
    keys, taint_key = _codes([taint[1] for taint in members.taints])
    values, taint_value = _codes([taint[2] for taint in members.taints])
    taint_owner = np.array([taint[0] for taint in members.taints], dtype=np.int64)
    rank = np.arange(len(members.nodes))
    timeout_us = AGENT_TIMEOUT // timedelta(microseconds=1)
    now_us = epoch_micros(NOW)

    def run() -> list[int]:
        available = now_us - members.heartbeat_us <= timeout_us
        available &= (members.unhealthy_since_us == 0) | (now_us - members.unhealthy_since_us <= timeout_us)
        (term,) = policy["affinity"]["clusterAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "clusterSelectorTerms"
        ]
        wanted_environment = term["labelSelector"]["matchLabels"]["environment"]
        available &= environment_code == environments.get(wanted_environment, -1)
        tolerated = np.zeros(len(taint_owner), dtype=bool)
        for toleration in policy["tolerations"]:
            matches = taint_key == keys.get(toleration["key"], -1)
            if toleration["operator"] == "Equal":
                matches &= taint_value == values.get(toleration.get("value", ""), -1)
            tolerated |= matches
        available[taint_owner[~tolerated]] = False
        nodes, cost = members.nodes, members.cost
        affinity = _half_away_from_zero(40 * (nodes - nodes.min()) / (nodes.max() - nodes.min()))
        affinity += _half_away_from_zero(20 * (1 - (cost - cost.min()) / (cost.max() - cost.min())))
        # best first: affinity descending, ties to the larger name (upstream's reverse sort)
        order = np.lexsort((rank, affinity))[::-1]
        counts = np.zeros(len(regions), dtype=np.int64)
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


def bench_fleet(size: int, repeat: int, upstream_runs: int) -> Figures:
    members = fleet_members(size, random.Random(size))
    inventory = FleetInventory([parse_member_cluster(manifest) for manifest in members.manifests])
    crp = parse_cluster_resource_placement(FLEET_PLACEMENT, print)
    picks = crp.policy.number_of_clusters
    assert picks is not None, "the benchmark placement is a PickN with numberOfClusters"
    reference = fleet_reference(members, picks)
    selected = sorted(schedule_crp(crp, inventory, (), NOW).selected)
    expected = sorted(inventory.names[i] for i in reference())
    if selected != expected:
        raise SystemExit(f"Fleet at {size}: the scheduler selected {selected}, the reference {expected}")
    product, bare, ratio = paired_ms(lambda: schedule_crp(crp, inventory, (), NOW), reference, repeat)
    case = Case(
        id=f"bench-fleet-{size}",
        family="fleet",
        now=_stamp(NOW),
        manifests=[*members.manifests, FLEET_PLACEMENT],
    )
    return Figures(product, bare, ratio, upstream_ms(case, selected, _bound_clusters, upstream_runs))


def _bound_clusters(verdict: dict[str, Any]) -> list[str]:
    return sorted(b["targetCluster"] for b in verdict["bindings"] if b["state"] != "Unscheduled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--upstream-runs", type=int, default=1)
    args = parser.parse_args()
    print(
        f"{'clusters':>8}  {'case':<46} {'ms/placement':>12} {'reference ms':>12} {'ratio':>6}"
        f" {'upstream ms':>11} {'upstream/ours':>13}"
    )
    for size in args.sizes:
        cases = (
            ("OCM sets+2 predicates+taints, 5 prioritizers", bench_ocm),
            ("Fleet PickN 10, affinity+taints, 2 sorters, spread", bench_fleet),
        )
        for case, bench in cases:
            figures = bench(size, args.repeat, args.upstream_runs)
            upstream = "-" if figures.upstream is None else f"{figures.upstream:.2f}"
            speedup = "-" if figures.upstream is None else f"{figures.upstream / figures.product:.1f}"
            print(
                f"{size:>8}  {case:<46} {figures.product:>12.2f} {figures.reference:>12.3f}"
                f" {figures.ratio:>6.1f} {upstream:>11} {speedup:>13}",
                flush=True,
            )


if __name__ == "__main__":
    main()
