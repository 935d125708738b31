"""Plan benchmark: the CPU of planning one reschedule run per placement kind, on a warm snapshot, no write.

    .venv/bin/python bench/plan.py [--sizes 10000 50000] [--placements 500] [--repeat 3]
        [--keep var/bench-plan] [--profile ocm-global|ocm-two-sets|ocm-production|fleet-pickn]

Per size: the demo hub (OCM + Fleet, in a process of its own) synced into a SQLite file, then
bench/scale.py's mix of dashboard-owned placements (its `seed_placements`: OCM Placements over
`production` with an add-on label predicate, over two sets, over `global`, Fleet PickN CRPs) and two
full passes of the reschedule (`placement.tasks.reschedule_chunk`, in this process) so that every
placement holds its decisions and a stored run, as in bench/scale.py's third pass. Then, per placement,
`service._plan` (the scheduler, the explanation's record and digest, the family's plan: everything a
reschedule does before it writes) on the warm snapshot, timed in this process's CPU time; the median of
`--repeat` rounds per placement, then the mean over the placements of each kind and over the mix; the
plans run at the time the sync started, when every Fleet member had just reported (the passes ran later,
so a Fleet plan may differ from its stored run).
With `--keep DIR` the synced database of each size is kept there and used again by the next run (the
same seed gives the same hub), so code changes are compared on the same rows.
`--profile KIND` adds a cProfile of that kind's plans at each size (the 25 costliest functions).
`--passes N` then runs N full reschedule passes in this process (every chunk `reschedule_hub` would
queue, writes on SQLite included, at the time they run) and prints the CPU per placement of each; the
first after a change to what a run stores (its digest) rewrites every placement once.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# The kinds of bench/scale.py's mix, by the placement's index modulo 10 (its `seed_placements`).
KINDS = ("ocm-production", "ocm-two-sets", "ocm-global", "fleet-pickn")


def kind_of(name: str) -> str:
    share = int(name.rsplit("-", 1)[1]) % 10
    return KINDS[0] if share < 4 else KINDS[1] if share < 6 else KINDS[2] if share < 8 else KINDS[3]


def prepare(path: Path, clusters: int, placements: int) -> None:
    """Sync the demo hub into the SQLite file `path` (new) and seed the placements, then run two full
    reschedule passes so that each holds its decisions and stored run."""
    from django.core.management import call_command
    from django.db import connection
    from scale import HUB, seed_placements

    from demohub.remote import RemoteHub
    from inventory.models import Hub, SyncRun
    from inventory.sync import sync_hub
    from placement import tasks

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    with RemoteHub(clusters=clusters, fleet=True, seed=1) as demo:
        hub = Hub.objects.create(name=HUB, server_url=demo.url, serves_fleet=True)
        sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)
    seed_placements(placements, random.Random(5))
    print(f"  synced and seeded in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    for _ in range(2):
        for chunk in tasks.hub_chunks(hub.pk):
            tasks.reschedule_chunk(hub.pk, chunk)
    print(f"  two full reschedule passes in {time.perf_counter() - started:.0f} s", flush=True)
    connection.close()


def plan_times(repeat: int, profile: str) -> dict[str, list[float]]:
    """CPU milliseconds of `service._plan` per placement (median of `repeat`), by kind."""
    from scale import HUB

    from inventory.models import Hub, SyncRun
    from placement import service
    from placement.models import Owner, Placement

    hub = Hub.objects.get(name=HUB)
    # the sync's start: the demo hub's members had just reported then, so Fleet sees them live as with
    # heartbeats on (later, every member's heartbeat would be stale, each with its own reason to word)
    now = SyncRun.objects.filter(hub=hub).earliest("started_at").started_at
    started = time.process_time()
    snapshot = service.hub_snapshot(hub, now)
    print(f"  snapshot build: CPU {time.process_time() - started:.1f} s", flush=True)
    placements = list(
        Placement.objects.filter(hub=hub, owner=Owner.DASHBOARD).select_related("hub").order_by("pk")
    )
    stored = service.read_stored(placements)
    times: dict[str, list[float]] = defaultdict(list)
    unchanged = 0
    for placement in placements:
        runs = []
        for _ in range(repeat):
            cpu = time.process_time()
            planned = service._plan(placement, stored[placement.pk], snapshot, now)
            runs.append((time.process_time() - cpu) * 1000)
        unchanged += planned.unchanged is not None
        times[kind_of(placement.name)].append(statistics.median(runs))
    print(f"  {unchanged} of {len(placements)} plans store nothing new (a steady pass)")
    if profile:
        profiler = cProfile.Profile()
        chosen = [p for p in placements if kind_of(p.name) == profile]
        profiler.enable()
        for placement in chosen:
            service._plan(placement, stored[placement.pk], snapshot, now)
        profiler.disable()
        print(f"  cProfile of {len(chosen)} {profile} plans:")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    return times


def full_passes(count: int) -> None:
    """`count` passes of every chunk `reschedule_hub` would queue, one after the other in this process."""
    from scale import HUB

    from inventory.models import Hub
    from placement import tasks

    hub = Hub.objects.get(name=HUB)
    for index in range(count):
        chunks = tasks.hub_chunks(hub.pk)
        cpu = time.process_time()
        for chunk in chunks:
            tasks.reschedule_chunk(hub.pk, chunk)
        per_placement = (time.process_time() - cpu) * 1000 / sum(map(len, chunks))
        print(f"  full pass {index + 1}: CPU {per_placement:.1f} ms per placement", flush=True)


def report(clusters: int, times: dict[str, list[float]]) -> None:
    every = [ms for kind in KINDS for ms in times[kind]]
    cells = [f"{kind} {statistics.fmean(times[kind]):6.2f}" for kind in KINDS if times[kind]]
    print(f"{clusters:>7,} clusters, CPU ms per plan: " + ", ".join(cells), flush=True)
    print(f"{'':>7}  the mix: {statistics.fmean(every):.2f} ms per placement over {len(every)}", flush=True)


def run_size(clusters: int, args: argparse.Namespace, folder: Path) -> None:
    from django.db import connection

    path = folder / f"plan-{clusters}-{args.placements}.sqlite3"
    connection.close()
    connection.settings_dict["NAME"] = str(path)
    print(f"{clusters:,} clusters, {args.placements} placements ({path}):", flush=True)
    if not path.exists():
        prepare(path, clusters, args.placements)
    from placement import service

    service.forget_snapshots()
    report(clusters, plan_times(args.repeat, args.profile))
    full_passes(args.passes)
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--placements", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the synced databases in this folder and reuse them")
    parser.add_argument("--profile", choices=KINDS, default="")
    parser.add_argument("--passes", type=int, default=0, help="full reschedule passes timed after the plans")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="fleetui-bench-plan-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/unused.sqlite3"
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    # the follow-ups a reschedule queues are not run here: a broker of this process alone
    os.environ["CELERY_BROKER_URL"] = "memory://"
    import django

    django.setup()
    import logging

    logging.disable(logging.INFO)  # one history line per placement would be measured too
    try:
        for clusters in args.sizes:
            run_size(clusters, args, folder)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
