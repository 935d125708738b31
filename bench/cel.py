"""CEL predicate benchmark: milliseconds per placement, and the ratio to evaluating every cluster.

    .venv/bin/python bench/cel.py [--sizes 10000 50000] [--repeat 20]

The hub is the demo hub's own objects (`demohub.seed.fleet_objects`: labels with the cluster's name,
claims with a unique cluster id, add-on scores drawn per cluster) parsed as the scheduler reads them.
Cases (target: the Predicate filter <= 20 ms at 10k clusters, <= 100 ms at 50k):
- the demo hub's `argocd/guestbook` placement, as seeded;
- two label reads, a claim search, and an add-on score search, each as the only predicate of a copy of
  it.
Every figure is over all the hub's clusters. "first ms" is `filter_predicates` on a new snapshot (coding
each cluster's projection of what the expressions read, then one CEL evaluation per distinct projection);
"then ms" is the same filter for every later placement with the same expressions (the codes and each
code's verdict are kept with the snapshot and every snapshot patched from it); "evaluate ms" is what a
placement with other expressions reading the same pays on top of "then": one evaluation per distinct
projection; "interpreted ms" is the same evaluations by the interpreter alone (without the closures
each expression is compiled into), "x" the ratio interpreted / evaluate; "per cluster ms" is the same
compiled selector evaluated for each cluster one by one, as the filter did before (one run: it is
slow); "ratio" is per cluster / first; "schedule ms" is the whole `schedule_placement`, warm.
"evaluations" counts the distinct projections evaluated.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demohub.seed import SCORE_NAME, fleet_objects  # noqa: E402
from placement.scheduler.ocm.cel import CelSelector, ScoresProvider, compile_cel_selector  # noqa: E402
from placement.scheduler.ocm.inventory import OcmInventory  # noqa: E402
from placement.scheduler.ocm.manifests import parse_ocm_object  # noqa: E402
from placement.scheduler.ocm.predicate import filter_predicates  # noqa: E402
from placement.scheduler.ocm.schedule import schedule_placement  # noqa: E402
from placement.scheduler.ocm.types import (  # noqa: E402
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    Placement,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
GUESTBOOK = ("argocd", "guestbook")
CASES = {
    "labels: region prefix and environment": [
        'managedCluster.metadata.labels["region"].startsWith("east")',
        'managedCluster.metadata.labels["environment"] != "dev"',
    ],
    "claims: kubeversion claim search": [
        'managedCluster.status.clusterClaims.exists(c, c.name == "kubeversion.open-cluster-management.io"'
        ' && c.value.startsWith("v1.30"))'
    ],
    "scores: add-on score search": [
        f'managedCluster.scores("{SCORE_NAME}").exists(s, s.name == "cpuAvailable" && s.value > 50)'
    ],
}


def demo_hub(size: int) -> tuple[OcmInventory, dict[str, Any]]:
    """The demo hub's OCM objects at `size` clusters as one inventory, and its guestbook manifest."""
    docs = fleet_objects(size, fleet=False, seed=0, now=NOW)
    [guestbook] = [
        doc
        for doc in docs
        if doc["kind"] == "Placement"
        and (doc["metadata"].get("namespace"), doc["metadata"]["name"]) == GUESTBOOK
    ]
    objects = [parse_ocm_object(doc, lambda note: None) for doc in docs]
    clusters = [o for o in objects if isinstance(o, ManagedCluster)]
    sets = [o for o in objects if isinstance(o, ManagedClusterSet)]
    bindings = [o for o in objects if isinstance(o, ManagedClusterSetBinding)]
    scores = [o for o in objects if isinstance(o, AddOnPlacementScore)]
    return OcmInventory(clusters, sets, bindings, scores), guestbook


def with_cel(manifest: dict[str, Any], expressions: list[str]) -> Placement:
    """The placement with `expressions` as its only predicate."""
    edited = copy.deepcopy(manifest)
    edited["spec"]["predicates"] = [
        {"requiredClusterSelector": {"celSelector": {"celExpressions": expressions}}}
    ]
    parsed = parse_ocm_object(edited, lambda note: None)
    assert isinstance(parsed, Placement)
    return parsed


def median_ms(run: Callable[[], object], repeat: int, *, warm_up: bool = True) -> float:
    """The median wall time of `repeat` runs, after a warm-up run unless told otherwise."""
    if warm_up:
        run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def cel_input(inventory: OcmInventory, position: int) -> tuple[Mapping[str, Any], ScoresProvider]:
    """The cluster at `position` as CEL reads it: its object and its add-on scores."""
    cluster = inventory.clusters[position]
    return cluster.to_unstructured(), partial(inventory.add_on_score_items, cluster.name)


def per_cluster(selector: CelSelector, inventory: OcmInventory) -> list[bool]:
    """Every cluster evaluated on its own, as the filter did before projections were grouped."""
    return [selector.matches(*cel_input(inventory, position)) for position in range(inventory.size)]


def fresh(inventory: OcmInventory) -> OcmInventory:
    """A new snapshot of the same objects, its label and claim indexes built, its CEL projections not."""
    snapshot = OcmInventory(
        inventory.clusters,
        inventory.cluster_sets.values(),
        inventory.bindings,
        inventory.add_on_scores.values(),
    )
    snapshot.labels, snapshot.claims  # noqa: B018 - built as every other placement builds them
    return snapshot


def distinct(selector: CelSelector, inventory: OcmInventory) -> list[int]:
    """One cluster position per distinct projection the selector reads (every cluster when it reads names)."""
    if selector.reads.name_reachable:
        return list(range(inventory.size))
    codes = inventory.projection_codes(
        selector.reads, lambda held, position: selector.projection(*cel_input(held, position))
    )
    first: list[int] = np.unique(codes, return_index=True)[1].tolist()
    return first


def bench_case(
    inventory: OcmInventory, placement: Placement, repeat: int
) -> tuple[int, float, float, float, float, float, float]:
    """(evaluations, first ms, then ms, evaluate ms, interpreted ms, per-cluster ms, schedule ms); all
    paths must agree."""
    candidates = np.arange(inventory.size)
    [predicate] = placement.predicates
    selector = compile_cel_selector(predicate.cel_expressions)
    verdicts = selector.matches_each(cel_input(inventory, position) for position in range(inventory.size))
    # one run of the reference, which is slow: its time is the figure and its verdicts the check
    start = time.perf_counter()
    expected = per_cluster(selector, inventory)
    one_by_one = (time.perf_counter() - start) * 1000
    assert verdicts.matched == expected
    filtered = filter_predicates(placement, inventory, candidates).filtered
    assert filtered is not None and filtered.tolist() == np.flatnonzero(verdicts.matched).tolist()
    firsts = [
        median_ms(partial(filter_predicates, placement, fresh(inventory), candidates), 1, warm_up=False)
        for _ in range(3)
    ]
    then = median_ms(lambda: filter_predicates(placement, inventory, candidates), repeat)
    inputs = [cel_input(inventory, position) for position in distinct(selector, inventory)]
    assert len(inputs) == verdicts.evaluations
    evaluate = median_ms(lambda: [selector.matches(*one) for one in inputs], repeat)
    reference = selector.interpreted()
    assert [reference.matches(*one) for one in inputs] == [selector.matches(*one) for one in inputs]
    interpreted = median_ms(lambda: [reference.matches(*one) for one in inputs], repeat)
    schedule = median_ms(lambda: schedule_placement(placement, inventory, NOW), repeat)
    return verdicts.evaluations, statistics.median(firsts), then, evaluate, interpreted, one_by_one, schedule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    header = f"{'clusters':>8}  {'case':<38} {'evaluations':>11} {'first ms':>8} {'then ms':>7}"
    header += f" {'evaluate ms':>11} {'interpreted ms':>14} {'x':>5}"
    print(f"{header} {'per cluster ms':>14} {'ratio':>6} {'schedule ms':>11}")
    for size in args.sizes:
        inventory, guestbook = demo_hub(size)
        placements = {"demo hub argocd/guestbook": parse_ocm_object(guestbook, lambda note: None)}
        placements |= {case: with_cel(guestbook, expressions) for case, expressions in CASES.items()}
        for case, placement in placements.items():
            assert isinstance(placement, Placement)
            evaluations, first, then, evaluate, interpreted, one_by_one, schedule = bench_case(
                inventory, placement, args.repeat
            )
            print(
                f"{size:>8}  {case:<38} {evaluations:>11} {first:>8.1f} {then:>7.1f} {evaluate:>11.1f}"
                f" {interpreted:>14.1f} {interpreted / evaluate:>5.1f}"
                f" {one_by_one:>14.1f}"
                f" {one_by_one / first:>6.1f} {schedule:>11.1f}"
            )


if __name__ == "__main__":
    main()
