"""Sync benchmark: the initial sync of a 10,000-cluster demo hub (OCM + Fleet) into an empty database.

    .venv/bin/python bench/sync.py [--clusters 10000] [--page-limit 500]

The demo hub runs in this process (`DemoHub`, real HTTP on loopback, the real `kubernetes` client).
The database is a fresh SQLite file under a temporary folder, or DATABASE_URL when it is set (its
tables are created by migrate and emptied first). Target: initial sync <= 20 s.
Peak memory is the process's peak RSS, demo hub included.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--page-limit", type=int, default=500)
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="fleetui-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{folder}/bench.sqlite3")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command

    from demohub import DemoHub
    from inventory.models import ClusterSetMembership, Hub, ManagedCluster, SyncRun
    from inventory.sync import sync_hub

    call_command("migrate", verbosity=0)
    Hub.objects.all().delete()
    print(f"seeding a demo hub with {args.clusters} clusters (OCM + Fleet)...", flush=True)
    with DemoHub(clusters=args.clusters, fleet=True, seed=1) as demo:
        hub = Hub.objects.create(name="bench", server_url=demo.url, serves_fleet=True)
        rows = sum(demo.seeded.values())
        for label in ("initial", "repeat (no changes)"):
            started = time.perf_counter()
            run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND, page_limit=args.page_limit)
            seconds = time.perf_counter() - started
            print(
                f"{label}: {seconds:.1f} s, {rows / seconds:,.0f} objects/s, {run.pages} pages, "
                f"{run.added} added, {run.updated} updated, {run.removed} removed"
            )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"objects listed: {rows}; clusters stored: {ManagedCluster.objects.count()}; "
        f"memberships: {ClusterSetMembership.objects.count()}; peak RSS: {peak_mb:.0f} MB; "
        f"database: {django.db.connection.vendor}"
    )


if __name__ == "__main__":
    main()
