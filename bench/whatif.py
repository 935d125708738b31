"""What-if benchmark: server time of `POST /api/placements/<id>/whatif/` at 1,000 and 10,000 clusters.

    .venv/bin/python bench/whatif.py [--sizes 1000 10000] [--placements 100] [--repeat 60] [--database NAME]

Per size, seeds a throwaway test database exactly as bench/pages.py does (OCM clusters in 20 sets plus
`global`, Placements with PlacementDecisions for Balance to count), adds a Placement over `global`
with Additive CPU/memory prioritizers and 10 clusters requested, and posts overrides with changing
weights and counts through Django's test client as a user with the view role on `global` (DRF, JSON,
the role check, the scheduler, the response with 50 ranked clusters and the chart). The hub snapshot is
built by a first request, as a running site keeps it. Prints p50/p95 milliseconds per request (target:
p95 <= 50 ms at 10k).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.test import Client
from pages import bench_user, seed  # bench/pages.py: Django set up, the same seeded fleet and reader

from inventory.models import Hub
from placement.models import Owner, Placement


def prioritizers(cpu: int, memory: int) -> dict[str, Any]:
    def config(name: str, weight: int) -> dict[str, Any]:
        return {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}

    return {
        "mode": "Additive",
        "configurations": [
            config("ResourceAllocatableCPU", cpu),
            config("ResourceAllocatableMemory", memory),
        ],
    }


def measure(clusters: int, placements: int, repeat: int, database: str) -> tuple[float, float]:
    connection.settings_dict["TEST"]["NAME"] = database
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        seed(clusters, placements, random.Random(1))
        placement = Placement.objects.create(
            hub=Hub.objects.get(name="bench"),
            owner=Owner.DASHBOARD,
            kind=Placement.Kind.PLACEMENT,
            namespace="team-0",
            name="whatif",
            spec={"clusterSets": ["global"], "numberOfClusters": 10, "prioritizerPolicy": prioritizers(2, 1)},
        )
        client = Client()
        client.force_login(bench_user())
        url = f"/api/placements/{placement.pk}/whatif/"
        rng = random.Random(2)
        times = []
        for run in range(repeat + 3):
            body = {
                "numberOfClusters": rng.randrange(1, 50),
                "prioritizerPolicy": prioritizers(rng.randrange(-10, 11), rng.randrange(-10, 11)),
            }
            start = time.perf_counter()
            response = client.post(url, body, content_type="application/json")
            elapsed = (time.perf_counter() - start) * 1000
            assert response.status_code == 200, response.content[:500]
            if run >= 3:  # the first runs build the hub snapshot and warm caches
                times.append(elapsed)
        return statistics.median(times), statistics.quantiles(times, n=20)[18]
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--placements", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--database", default="fleetui_bench", help="the throwaway database on the server")
    args = parser.parse_args()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    print(f"database: {connection.vendor}")
    print(f"{'clusters':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for size in args.sizes:
        p50, p95 = measure(size, args.placements, args.repeat, args.database)
        print(f"{size:8d} {p50:8.1f} {p95:8.1f}")


if __name__ == "__main__":
    main()
