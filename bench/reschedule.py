"""Reschedule benchmark: every placement of a hub rescheduled once, in one process, as the periodic
resync (`placement.tasks.reschedule_hub`) does it.

    .venv/bin/python bench/reschedule.py [--clusters 10000] [--placements 1000] [--scope set|global]

Seeds a throwaway test database in bulk with bench/pages.py's clusters and sets (SQLite in memory, or
`fleetui_bench` on the server DATABASE_URL names), then `--placements` dashboard-owned Placements:
`--scope set` puts each in a namespace bound to one of the 20 sets (500 candidates each), `--scope
global` binds them all to `global` (every cluster a candidate). Each asks for 3-10 clusters with
Balance, Steady and ResourceAllocatableMemory. Prints the snapshot build time, the total seconds and ms
per placement of a first pass (every decision created) and of a second pass (nothing changes).
Target: 1,000 placements over 10,000 clusters within 15 s with two workers (one process is printed).
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from django.db import connection  # noqa: E402
from pages import seed  # noqa: E402 - sets up Django

from inventory.models import Hub, ManagedClusterSetBinding  # noqa: E402
from placement import service  # noqa: E402
from placement.models import Owner, Placement, PlacementDecision  # noqa: E402

BATCH = 2000
SETS = 20


def seed_placements(count: int, scope: str, rng: random.Random) -> None:
    hub = Hub.objects.get(name="bench")
    ManagedClusterSetBinding.objects.bulk_create(
        ManagedClusterSetBinding(
            hub=hub, namespace=f"ns-{i:02d}", name=f"set-{i:02d}", cluster_set=f"set-{i:02d}"
        )
        for i in range(SETS)
    )
    configurations = [
        {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}
        for name, weight in (("Balance", 1), ("Steady", 1), ("ResourceAllocatableMemory", 2))
    ]
    placements = []
    for index in range(count):
        namespace, cluster_set = (f"ns-{index % SETS:02d}", f"set-{index % SETS:02d}")
        if scope == "global":
            namespace, cluster_set = "team-0", "global"
        spec = {
            "clusterSets": [cluster_set],
            "numberOfClusters": rng.randrange(3, 11),
            "prioritizerPolicy": {"mode": "Exact", "configurations": configurations},
        }
        placements.append(
            Placement(
                hub=hub,
                owner=Owner.DASHBOARD,
                kind=Placement.Kind.PLACEMENT,
                namespace=namespace,
                name=f"p-{index:04d}",
                spec=spec,
            )
        )
    Placement.objects.bulk_create(placements, batch_size=BATCH)


def full_pass(label: str) -> None:
    placements = list(Placement.objects.select_related("hub").order_by("pk"))
    started = time.perf_counter()
    changed = sum(service.reschedule(p, trigger="periodic resync") is not None for p in placements)
    seconds = time.perf_counter() - started
    per = seconds / len(placements) * 1000
    print(f"{label:28} {seconds:8.1f} s {per:8.1f} ms/placement   {changed} selections changed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--placements", type=int, default=1_000)
    parser.add_argument("--scope", choices=("set", "global"), default="set")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # one history line per placement would be measured too
    connection.settings_dict["TEST"]["NAME"] = "fleetui_bench"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        rng = random.Random(1)
        started = time.perf_counter()
        seed(args.clusters, 0, rng)
        seed_placements(args.placements, args.scope, rng)
        print(f"database: {connection.vendor} {test_name}; seeded in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        service.hub_snapshot(Hub.objects.get(name="bench"))
        print(f"{'snapshot build':28} {time.perf_counter() - started:8.1f} s")
        full_pass("first pass (all new)")
        full_pass("second pass (steady)")
        print(f"PlacementDecisions stored: {PlacementDecision.objects.count()}")
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)


if __name__ == "__main__":
    main()
