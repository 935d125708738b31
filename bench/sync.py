"""Sync benchmark: the initial sync of a demo hub (OCM + Fleet) into an empty database, then resyncs.

    .venv/bin/python bench/sync.py [--clusters 10000] [--page-limit 500]

The demo hub runs in a process of its own (`RemoteHub`: real HTTP on loopback, the real `kubernetes`
client), so the sync's figures are the dashboard's alone: the hub's encoding of every page is printed
as its own CPU time, not mixed into the sync's.
The database is a fresh SQLite file under a temporary folder, or DATABASE_URL when it is set (its
tables are created by migrate and emptied first). Three syncs are timed: the initial one, a resync with
nothing changed, and a resync after every Fleet member's agent reported a heartbeat (stored, but no
scheduler input: it must reschedule nothing). Targets on PostgreSQL: initial sync <= 10 s at 10,000
clusters and <= 60 s, <= 1 GB RSS at 50,000; a resync with nothing changed <= 2 s and <= 10 s.

The reschedules a sync owes are queued for Celery workers, as in production (an in-memory broker that
nothing consumes): their time is bench/reschedule.py's, not the sync's. Peak memory is this process's
peak RSS (the demo hub's objects live in its own process).

Wall times on a shared machine follow its load; each sync also prints the CPU time it took, which does
not: the sync's own thread, the whole process, the demo hub's process serving the lists and, on a
PostgreSQL server on this machine, the database connection's backend. `--phases` adds the CPU time
of each phase (listing, validation, row building, inserts, memberships, the change record) in the
thread doing it, measured by wrapping those functions: the listing runs in the hub client's own thread,
which requests the next page while the sync stores this one.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rss_mb() -> float:
    """The process's resident memory now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def process_cpu(pid: int) -> float | None:
    """CPU seconds a process of this machine has used so far (every thread); None when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # utime and stime, the 14th and 15th fields of stat (the 12th and 13th after the command name)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_cpu() -> float | None:
    """CPU seconds of this process's database connection's server process, when it runs on this machine
    (PostgreSQL's backend); None for SQLite or a remote server."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return process_cpu(pid)


def spent_between(before: float | None, after: float | None) -> str:
    return "?" if before is None or after is None else f"{after - before:.1f} s"


def time_phases(spent: defaultdict[str, float]) -> None:
    """Add the CPU time of the calling thread in each phase of a sync to `spent`, by wrapping the
    functions that do them (a phase holds the phases inside it: row building holds validation)."""
    from inventory import bulk, changes, hubclient, memberships, sync, validation

    phases: list[tuple[Any, str, str]] = [
        (hubclient.HubClient, "list_page", "listing"),
        (sync.KindRows, "_to_rows", "rows (validation included)"),
        (validation, "problems", "validation"),
        (sync.KindRows, "_write", "writing (inserts included)"),
        (bulk, "insert", "inserts"),
        (sync, "_after_write", "after the write (memberships, change record)"),
        (memberships, "rebuild", "membership rebuild"),
        (changes, "build", "change record"),
    ]
    for owner, name, label in phases:
        setattr(owner, name, _timed(getattr(owner, name), label, spent))


def _timed(function: Callable[..., Any], label: str, spent: defaultdict[str, float]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.thread_time() - started

    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--page-limit", type=int, default=500)
    parser.add_argument("--phases", action="store_true", help="CPU time of each phase of each sync")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="fleetui-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{folder}/bench.sqlite3")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    # queued, never run here: a broker of this process alone, whatever the environment names
    os.environ["CELERY_BROKER_URL"] = "memory://"
    import django

    django.setup()
    from django.core.management import call_command

    from demohub.remote import RemoteHub
    from inventory.models import ClusterSetMembership, Hub, ManagedCluster, SyncRun
    from inventory.sync import sync_hub
    from placement.models import Placement

    call_command("migrate", verbosity=0)
    Hub.objects.all().delete()
    spent: defaultdict[str, float] = defaultdict(float)
    if args.phases:
        time_phases(spent)
    print(f"seeding a demo hub with {args.clusters} clusters (OCM + Fleet)...", flush=True)
    with RemoteHub(clusters=args.clusters, fleet=True, seed=1) as demo:
        hub = Hub.objects.create(name="bench", server_url=demo.url, serves_fleet=True)
        rows = sum(demo.seeded.values())
        started_mb = rss_mb()
        # the seeded heartbeats age while a large hub is seeded and synced; refreshed now, every live member
        # is still live (its heartbeat under five minutes old) when the heartbeat-only resync comes
        demo.call("churn.beat")
        times: dict[str, float] = {}
        for label in ("initial", "resync, nothing changed", "resync, heartbeats only"):
            if label == "resync, heartbeats only":
                print(f"heartbeats of {demo.call('churn.beat')} members written on the hub", flush=True)
            spent.clear()
            backend, served = backend_cpu(), process_cpu(demo.pid)
            started, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
            run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND, page_limit=args.page_limit)
            times[label] = seconds = time.perf_counter() - started
            thread, process = time.thread_time() - thread, time.process_time() - process
            backend_after, served_after = backend_cpu(), process_cpu(demo.pid)
            queued = Placement.objects.filter(reschedule_queued_at__isnull=False).count()
            print(
                f"{label}: {seconds:.1f} s, {rows / seconds:,.0f} objects/s, {run.pages} pages, "
                f"{run.added} added, {run.updated} updated, {run.removed} removed; "
                f"placements queued for rescheduling: {queued}",
                flush=True,
            )
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"  peak RSS so far {peak:.0f} MB; CPU: sync thread {thread:.1f} s, process {process:.1f} s, "
                f"demo hub process {spent_between(served, served_after)}, "
                f"database backend {spent_between(backend, backend_after)}",
                flush=True,
            )
            if spent:
                print(
                    "  phases (CPU of the thread doing each): "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in spent.items())
                )
            # so that the next sync's reschedules are counted
            Placement.objects.update(reschedule_queued_at=None)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"objects listed: {rows}; clusters stored: {ManagedCluster.objects.count()}; "
        f"memberships: {ClusterSetMembership.objects.count()}; peak RSS: {peak_mb:.0f} MB "
        f"(before the first sync: {started_mb:.0f} MB); database: {django.db.connection.vendor}; "
        f"load average: {os.getloadavg()[0]:.1f}"
    )
    resyncs = [label for label in times if label != "initial"]
    print(
        "per initial sync: "
        + ", ".join(f"{label} {times[label] / times['initial']:.3f}" for label in resyncs)
    )


if __name__ == "__main__":
    main()
