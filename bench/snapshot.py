"""Snapshot benchmark: a hub's scheduling snapshot caught up through the change journal vs built again.

    .venv/bin/python bench/snapshot.py [--sizes 10000 50000] [--placements 100] [--repeat 3]

Per size, seeds a throwaway test database as bench/pages.py does (OCM clusters in 20 sets plus `global`,
Placements with PlacementDecisions), adds an AddOnPlacementScore per cluster and a dashboard-owned
Placement over `global` with a CEL predicate, tolerations, and CPU and add-on score prioritizers. Then
(a) times a full build of the snapshot, and for each change, written as a sync writes it (the row, then
`inventory.changes.record` in the same transaction, which journals it): one cluster's label, one
cluster's taint, one cluster added, one add-on score, it times
- after: (b) the catch-up of the held, warm snapshot (journal read, changed rows loaded, patched), (c) a
  what-if of the placement right after (placement.whatif.preview), (d) the placement's reschedule;
- before, in the same run: the snapshot built again as every process did after any change, then the
  same what-if (on columns built anew) and reschedule,
checking that both ways select the same clusters. Prints milliseconds (median of `--repeat` changes of
each kind) and the before/after ratios.
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from pages import seed  # bench/pages.py: Django set up, the same seeded fleet

from inventory import changes
from inventory.models import AddOnPlacementScore, Hub, ManagedCluster
from placement import service, whatif
from placement.models import Owner, Placement

SPEC: dict[str, Any] = {
    "clusterSets": ["global"],
    "numberOfClusters": 10,
    "predicates": [
        {
            "requiredClusterSelector": {
                "celSelector": {"celExpressions": ['managedCluster.metadata.labels["vendor"] != "GKE"']}
            }
        }
    ],
    "tolerations": [{"key": "maintenance", "operator": "Exists"}],
    "prioritizerPolicy": {
        "mode": "Additive",
        "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableCPU"}, "weight": 1},
            {
                "scoreCoordinate": {"type": "AddOn", "addOn": {"resourceName": "load", "scoreName": "cpu"}},
                "weight": 2,
            },
        ],
    },
}


def _record(hub: Hub, old: Any, new: Any) -> None:
    """Write `new` and record the change as a sync does, in one transaction."""
    log = changes.ChangeLog()
    with transaction.atomic():
        new.save()
        log.record(old, new)
        changes.record(changes.build(hub, log))


def _label(hub: Hub, rng: random.Random) -> None:
    row = ManagedCluster.objects.get(hub=hub, name=f"cluster-{rng.randrange(1000):05d}")
    old = copy.deepcopy(row)
    row.labels = {**row.labels, "vendor": rng.choice(["GKE", "AKS", "EKS"]), "bench": str(rng.random())}
    _record(hub, old, row)


def _taint(hub: Hub, rng: random.Random) -> None:
    row = ManagedCluster.objects.get(hub=hub, name=f"cluster-{rng.randrange(1000):05d}")
    old = copy.deepcopy(row)
    added = f"2026-11-20T{rng.randrange(10, 23)}:00:00Z"
    row.taints = [*row.taints, {"key": f"bench-{rng.random()}", "effect": "NoSelect", "timeAdded": added}]
    _record(hub, old, row)


def _add(hub: Hub, rng: random.Random) -> None:
    template = ManagedCluster.objects.get(hub=hub, name="cluster-00000")
    row = copy.deepcopy(template)
    row.pk, row.name, row.uid = None, f"cluster-{rng.random()}", f"uid-{rng.random()}"
    _record(hub, None, row)


def _score(hub: Hub, rng: random.Random) -> None:
    row = AddOnPlacementScore.objects.get(hub=hub, namespace=f"cluster-{rng.randrange(1000):05d}")
    old = copy.deepcopy(row)
    row.scores = [{"name": "cpu", "value": rng.randrange(-100, 101)}]
    _record(hub, old, row)


CHANGES: dict[str, Callable[[Hub, random.Random], None]] = {
    "cluster label": _label,
    "cluster taint": _taint,
    "cluster added": _add,
    "add-on score": _score,
}


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return (time.perf_counter() - start) * 1000, result


def _round(hub: Hub, placement: Placement, override: dict[str, Any]) -> tuple[list[float], list[str]]:
    """(snapshot, what-if, reschedule) milliseconds from the current cached snapshot, and the selection."""
    snapshot_ms, _ = _timed(lambda: service.hub_snapshot(hub))
    whatif_ms, answer = _timed(lambda: whatif.preview(placement, override))
    reschedule_ms, _ = _timed(lambda: service.reschedule(placement, trigger="bench"))
    return [snapshot_ms, whatif_ms, reschedule_ms], sorted(answer["selected"])


def measure(clusters: int, placements: int, repeat: int) -> dict[str, tuple[list[float], list[float]]]:
    connection.settings_dict["TEST"]["NAME"] = "fleetui_bench_snapshot"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        seed(clusters, placements, random.Random(1))
        hub = Hub.objects.get(name="bench")
        rng = random.Random(2)
        AddOnPlacementScore.objects.bulk_create(
            (
                AddOnPlacementScore(
                    hub=hub,
                    namespace=name,
                    name="load",
                    scores=[{"name": "cpu", "value": rng.randrange(100)}],
                )
                for name in ManagedCluster.objects.filter(hub=hub).values_list("name", flat=True)
            ),
            batch_size=2000,
        )
        placement = Placement.objects.create(
            hub=hub,
            owner=Owner.DASHBOARD,
            kind=Placement.Kind.PLACEMENT,
            namespace="team-0",
            name="bench",
            spec=SPEC,
        )
        service.forget_snapshots()
        build_ms, _ = _timed(lambda: service.hub_snapshot(hub))
        print(f"{clusters:>8} {'full build (a)':<16} {build_ms:10.0f} ms")
        _round(hub, placement, {"numberOfClusters": 5})  # a running site's snapshot is warm
        figures: dict[str, tuple[list[float], list[float]]] = {}
        for name, change in CHANGES.items():
            after_runs, before_runs = [], []
            for run in range(repeat):
                override = {"numberOfClusters": 5 + run}
                change(hub, rng)
                after, patched_selection = _round(hub, placement, override)
                service.forget_snapshots()
                before, built_selection = _round(hub, placement, override)
                assert patched_selection == built_selection, (name, patched_selection, built_selection)
                after_runs.append(after)
                before_runs.append(before)
            figures[name] = (
                [statistics.median(column) for column in zip(*after_runs, strict=True)],
                [statistics.median(column) for column in zip(*before_runs, strict=True)],
            )
        return figures
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--placements", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"database: {connection.vendor}; milliseconds, median of {args.repeat} changes of each kind")
    for size in args.sizes:
        figures = measure(size, args.placements, args.repeat)
        print(
            f"{'clusters':>8} {'change':<14} {'catch-up':>9} {'rebuild':>9} {'ratio':>6} "
            f"{'what-if':>8} {'before':>8} {'ratio':>6} {'resched':>8} {'before':>8} {'ratio':>6}"
        )
        for name, (after, before) in figures.items():
            cells = " ".join(f"{a:9.1f} {b:9.1f} {b / a:6.1f}" for a, b in zip(after, before, strict=True))
            print(f"{size:8d} {name:<14} {cells}")


if __name__ == "__main__":
    main()
