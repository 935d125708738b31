"""Reschedule benchmark: every placement of a hub rescheduled once, in one process or by real Celery
workers, as the periodic resync (`placement.tasks.reschedule_hub`) does it.

    .venv/bin/python bench/reschedule.py [--clusters 10000] [--placements 1000] [--scope set|global]
    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... \\
        .venv/bin/python bench/reschedule.py --workers 1 2 [--rounds 2] [--scope set|global]

Seeds a throwaway test database in bulk with bench/pages.py's clusters and sets (SQLite, or
`--database` (default `fleetui_bench`) on the server DATABASE_URL names), then `--placements`
dashboard-owned Placements: `--scope set` puts each in a namespace bound to one of the 20 sets (500
candidates each), `--scope global` binds them all to `global` (every cluster a candidate). Each asks for
3-10 clusters with Balance, Steady and ResourceAllocatableMemory.

In one process (the default) it runs the chunks `reschedule_hub` would queue one after the other and
prints the snapshot build time, the total seconds and ms per placement of a first pass (every decision
created), a second (Balance scores move once more, as they count the decisions the first created) and
a third (nothing changes), each with the CPU time this process used (on SQLite the whole cost,
whatever else the machine runs); then, for one placement, its scheduler run, the packed
record a reschedule stores and, for reference, its per-cluster rows as compressed JSON (what pages and
the API build on demand, and what every reschedule stored before).

With `--workers N [N ...]` (PostgreSQL and a broker needed) it starts N `celery -A fleetui worker
--concurrency 1` processes for each N in turn (`--rounds` repeats the sequence, so noise shows), queues
`reschedule_hub` and times until every placement's `last_scheduled_at` moved, for the same three
passes; before each N the scheduling state is reset to the seeded one. Per pass it prints the CPU seconds
the workers and their PostgreSQL backends used (what the pass costs whatever else the machine runs),
the CPU seconds the whole machine was busy meanwhile and those its hypervisor stole (what else ran: a
demo hub's heartbeats, the watcher storing them), per worker the chunks it ran, the seconds they took
and its snapshot build (paid once per worker process, in its first chunk), and at the end the median
wall times per N and the ratio to the first N.
Target: 1,000 placements over 10,000 clusters within 15 s with two workers, close to 2x one worker.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402
from pages import seed  # noqa: E402 - sets up Django

from fleetui.celery import app  # noqa: E402
from inventory.models import Hub, ManagedClusterSetBinding  # noqa: E402
from placement import explanations, service, tasks  # noqa: E402
from placement.models import (  # noqa: E402
    DecisionChange,
    Owner,
    Placement,
    PlacementDecision,
    PlacementEvent,
)
from placement.scheduler.record import ClusterRecord  # noqa: E402

BATCH = 2000
# The passes timed one after the other: every decision new, Balance scores moving once more as they
# count the decisions the first pass created, then nothing changing.
PASSES = ("first pass (all new)", "second pass", "third pass (steady)")
SETS = 20
BASE_DIR = Path(__file__).resolve().parents[1]
PASS_TIMEOUT = 900.0
# Seconds for started workers to answer: each builds the snapshots first (about 40 s at 50,000 clusters).
WORKER_START_TIMEOUT = 300.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# the line `placement.tasks.reschedule_chunk` logs when a chunk is done
CHUNK_LINE = re.compile(r"chunk of (\d+) placements in ([\d.]+) s \(snapshot ([\d.]+) s\)")
# the line a worker logs for every task it finished, and the tasks of the pass itself
TASK_LINE = re.compile(r"Task ([\w.]+)\[[^\]]+\] succeeded in ([\d.]+)s")
PASS_TASKS = ("placement.tasks.reschedule_hub", "placement.tasks.reschedule_chunk")


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


def full_pass(label: str, hub: Hub) -> None:
    """Every chunk `reschedule_hub` would queue, run here one after the other."""
    chunks = tasks.hub_chunks(hub.pk)
    changes = DecisionChange.objects.count()
    started, cpu = time.perf_counter(), time.process_time()
    for chunk in chunks:
        tasks.reschedule_chunk(hub.pk, chunk)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    count = sum(map(len, chunks))
    changed = DecisionChange.objects.count() - changes
    print(
        f"{label:28} {seconds:8.1f} s {seconds / count * 1000:8.1f} ms/placement"
        f" (CPU {cpu / count * 1000:.1f} ms)   {changed} selections changed"
    )


def median_ms(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def store_costs(hub: Hub, repeat: int = 30) -> None:
    """For one placement, in the same run: its scheduler run; what a reschedule stores of its explanation
    (the report and the packed record); for reference, what every reschedule stored before (the report
    with its clusters as columns, as compressed JSON); and the per-cluster rows the API builds on demand."""
    placement = Placement.objects.filter(hub=hub).order_by("pk").first()
    assert placement is not None
    result = service.evaluate(placement)
    packed = explanations.stored(result).packed
    record = ClusterRecord.unpack(packed)
    field = Placement._meta.get_field("explanation")

    def as_now() -> None:
        explained = explanations.stored(result)
        field.get_prep_value(explained.report)
        assert explained.packed

    def as_before() -> None:
        report, computed = result.to_explanation()
        field.get_prep_value({**report, "clusters": computed.columns_as_lists()})

    scheduler = median_ms(lambda: service.evaluate(placement), repeat)
    stored = median_ms(as_now, repeat)
    before = median_ms(as_before, repeat)
    rows = median_ms(lambda: ClusterRecord.unpack(packed).rows(), repeat)
    print(f"one placement, {len(record):,} rows: scheduler {scheduler:.1f} ms; stored now {stored:.1f} ms")
    print(f"  (record {len(packed) / 1024:.0f} kB); as before, clusters as JSON columns {before:.1f} ms")
    print(f"  ({before / stored:.1f}x now); the API's rows on demand {rows:.1f} ms")


def in_process() -> None:
    hub = Hub.objects.get(name="bench")
    started, cpu = time.perf_counter(), time.process_time()
    service.hub_snapshot(hub)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{'snapshot build':28} {seconds:8.1f} s (CPU {cpu:.1f} s)")
    for label in PASSES:
        full_pass(label, hub)
    store_costs(hub)


# --- real workers ----------------------------------------------------------------------------------


@dataclass
class Worker:
    """One `celery worker --concurrency 1` process started by this script, and its log."""

    name: str
    log: Path
    process: subprocess.Popen[bytes]
    read_to: int = 0

    def children(self) -> list[int]:
        """The pool's process (prefork: one per --concurrency)."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()] if path.exists() else []

    def new_lines(self) -> tuple[list[tuple[int, float, float]], dict[str, list[float]]]:
        """Since the last call: (placements, seconds, snapshot seconds) of the chunks logged, and the
        seconds of each other task the worker finished meanwhile by name (a dashboard-owned CRP's rolling
        update rounds, queued as a reschedule changes its bindings, take the same worker)."""
        text = self.log.read_text(errors="replace")
        fresh, self.read_to = text[self.read_to :], len(text)
        others: dict[str, list[float]] = {}
        for name, seconds in TASK_LINE.findall(fresh):
            if name not in PASS_TASKS:
                others.setdefault(name.rsplit(".", 1)[-1], []).append(float(seconds))
        return [(int(n), float(s), float(snap)) for n, s, snap in CHUNK_LINE.findall(fresh)], others


@dataclass
class PassResult:
    seconds: float
    cpu: tuple[float, float]  # seconds used by the workers, by their PostgreSQL backends
    load: float  # the machine's 1-minute load average at the end
    # CPU seconds the whole machine used during the pass (every process), and those stolen from it
    machine: tuple[float, float]
    chunks: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    # per worker: the seconds of the other tasks it finished during the pass, by task name
    others: dict[str, dict[str, list[float]]] = field(default_factory=dict)


def machine_cpu_seconds() -> tuple[float, float]:
    """CPU seconds every core of the machine has been busy so far (/proc/stat: user, nice, system, irq and
    softirq), and the seconds the hypervisor gave its cores to other machines (steal)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq) / CLOCK_TICKS, steal / CLOCK_TICKS


def worker_pids(workers: list[Worker]) -> list[int]:
    """The workers' processes and their pool children."""
    return [pid for worker in workers for pid in (worker.process.pid, *worker.children())]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuMeter:
    """CPU seconds a pass costs, whatever else the machine runs: the worker processes with their pool
    children, and the PostgreSQL backends serving the benchmark's database, sampled while the pass
    runs since each task opens its own connection (a backend's last tenth of a second is missed)."""

    def __init__(self, workers: list[Worker]) -> None:
        self.processes = {pid: cpu_seconds(pid) for pid in worker_pids(workers)}
        self.backends: dict[int, tuple[float, float]] = {}
        self.sample(baseline=True)

    def sample(self, baseline: bool = False) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            for (pid,) in cursor.fetchall():
                now = cpu_seconds(pid)
                # a backend born during the pass started from nothing
                start = self.backends.get(pid, (now if baseline else 0.0, 0.0))[0]
                self.backends[pid] = (start, now)

    def used(self) -> tuple[float, float]:
        workers = sum(cpu_seconds(pid) - start for pid, start in self.processes.items())
        return workers, sum(now - start for start, now in self.backends.values())


def worker_database_url(name: str) -> str:
    """DATABASE_URL with the benchmark's database in place of the configured one."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{name}"))


def start_workers(count: int, database: str, log_dir: Path, tag: str) -> list[Worker]:
    env = {**os.environ, "DATABASE_URL": worker_database_url(database)}
    workers = []
    for index in range(count):
        name = f"bench-{tag}-{index}"
        log = log_dir / f"{name}.log"
        command = [sys.executable, "-m", "celery", "-A", "fleetui", "worker", "--pool", "prefork"]
        command += ["--concurrency", "1", "-n", f"{name}@%h", "-l", "INFO", "--without-gossip"]
        command += ["--without-mingle", "--logfile", str(log)]
        with open(log_dir / f"{name}.out", "wb") as output:  # start-up warnings, tracebacks
            process = subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=output, stderr=output)
        workers.append(Worker(name, log, process))
    # a worker answers once it has built the hubs' snapshots (placement.tasks.warm_snapshots)
    deadline = time.monotonic() + WORKER_START_TIMEOUT
    while True:
        answered = {name.split("@")[0] for reply in app.control.ping(timeout=0.5) or () for name in reply}
        if answered >= {w.name for w in workers}:
            return workers
        if time.monotonic() > deadline or any(w.process.poll() is not None for w in workers):
            stop_workers(workers)
            raise SystemExit(f"workers did not start; see {log_dir}")


def stop_workers(workers: list[Worker]) -> None:
    for worker in workers:
        worker.process.terminate()  # a warm shutdown
    for worker in workers:
        try:
            worker.process.wait(30)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()


def reset(hub: Hub) -> None:
    """Back to the seeded state: no decisions, events, history or stored runs."""
    PlacementDecision.objects.filter(hub=hub).delete()
    PlacementEvent.objects.filter(placement__hub=hub).delete()
    DecisionChange.objects.filter(placement__hub=hub).delete()
    Placement.objects.filter(hub=hub).update(
        explanation={},
        cluster_record=b"",
        name_table=None,
        run_digest="",
        status={},
        last_scheduled_at=None,
        requeue_at=None,
        reschedule_queued_at=None,
        round_queued_at=None,
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def timed_pass(hub: Hub, workers: list[Worker], chunk_count: int) -> PassResult:
    """Queue reschedule_hub, wait until every placement ran and every chunk logged its line."""
    total = Placement.objects.filter(hub=hub).count()
    meter = CpuMeter(workers)
    mark = timezone.now()
    started, machine = time.perf_counter(), machine_cpu_seconds()
    tasks.reschedule_hub.delay(hub.pk)
    scheduled = Placement.objects.filter(hub=hub, last_scheduled_at__gte=mark)
    while scheduled.count() < total:
        if time.perf_counter() - started > PASS_TIMEOUT or any(w.process.poll() is not None for w in workers):
            raise SystemExit(f"the workers did not finish: {scheduled.count()} of {total} rescheduled")
        meter.sample()
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    busy, stolen = (after - before for after, before in zip(machine_cpu_seconds(), machine, strict=True))
    result = PassResult(seconds, meter.used(), os.getloadavg()[0], (busy, stolen))
    while sum(len(chunks) for chunks in result.chunks.values()) < chunk_count:
        for worker in workers:
            chunks, others = worker.new_lines()
            result.chunks.setdefault(worker.name, []).extend(chunks)
            for task, times in others.items():
                result.others.setdefault(worker.name, {}).setdefault(task, []).extend(times)
        time.sleep(0.1)
    return result


def print_pass(label: str, result: PassResult, placements: int) -> None:
    workers, backends = result.cpu
    cpu = workers + backends
    print(
        f"  {label:22} {result.seconds:6.1f} s wall (load average {result.load:.1f});"
        f" CPU {workers:.1f} s workers + {backends:.1f} s PostgreSQL"
        f" = {cpu / placements * 1000:.1f} ms/placement"
    )
    busy, stolen = result.machine
    print(
        f"  {'':22} the machine: {busy:.1f} s busy of {os.cpu_count() or 1} x {result.seconds:.1f} s"
        f" ({busy - cpu:.1f} s not the pass's), {stolen:.1f} s stolen by the hypervisor"
    )
    for name, chunks in result.chunks.items():
        placements = sum(n for n, _, _ in chunks)
        busy = sum(s for _, s, _ in chunks)
        snapshot = sum(snap for _, _, snap in chunks)
        print(
            f"    {name:16} {len(chunks):3} chunks {placements:5} placements {busy:6.1f} s busy"
            f"   snapshot {snapshot:4.2f} s (largest {max((snap for *_, snap in chunks), default=0):.2f} s)"
        )
        for task, seconds in sorted(result.others.get(name, {}).items()):
            print(f"    {'':16} and {len(seconds):5} {task} tasks {sum(seconds):6.1f} s busy")


def worker_run(
    count: int, hub: Hub, database: str, log_dir: Path, tag: str, passes: int = len(PASSES)
) -> list[float]:
    """Reset, start `count` workers, time the first `passes` of PASSES; answers their wall seconds."""
    reset(hub)
    app.control.purge()
    chunks = tasks.hub_chunks(hub.pk)
    chunk_count, placements = len(chunks), sum(map(len, chunks))
    workers = start_workers(count, database, log_dir, tag)
    walls = []
    try:
        print(f"{count} worker(s), {chunk_count} chunks:")
        for label in PASSES[:passes]:
            result = timed_pass(hub, workers, chunk_count)
            print_pass(label, result, placements)
            walls.append(result.seconds)
    finally:
        stop_workers(workers)
    return walls


def with_workers(counts: list[int], rounds: int, database: str) -> None:
    if connection.vendor != "postgresql" or not os.environ.get("CELERY_BROKER_URL"):
        raise SystemExit("--workers needs DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL for the workers")
    hub = Hub.objects.get(name="bench")
    walls: dict[int, list[list[float]]] = {count: [] for count in counts}
    with tempfile.TemporaryDirectory(prefix="bench-reschedule-") as log_dir:
        for round_index in range(rounds):
            for count in counts:
                walls[count].append(worker_run(count, hub, database, Path(log_dir), f"{round_index}-{count}"))
    medians = {
        count: [statistics.median(run[index] for run in runs) for index in range(len(PASSES))]
        for count, runs in walls.items()
    }
    base = medians[counts[0]]
    print(f"\nmedian wall seconds per pass, and the speed-up vs {counts[0]} worker(s)")
    print("workers  " + "  ".join(f"{label:>26}" for label in PASSES))
    for count, seconds in medians.items():
        cells = (f"{s:9.1f} s ({b / s:5.2f}x)" for s, b in zip(seconds, base, strict=True))
        print(f"{count:7}  " + "  ".join(f"{cell:>26}" for cell in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--placements", type=int, default=1_000)
    parser.add_argument("--scope", choices=("set", "global"), default="set")
    parser.add_argument("--workers", type=int, nargs="+", metavar="N", help="real Celery workers, e.g. 1 2")
    parser.add_argument("--rounds", type=int, default=1, help="with --workers: run the counts this often")
    parser.add_argument("--database", default="fleetui_bench", help="the throwaway database's name")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # one history line per placement would be measured too
    connection.settings_dict["TEST"]["NAME"] = args.database
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        rng = random.Random(1)
        started = time.perf_counter()
        seed(args.clusters, 0, rng)
        seed_placements(args.placements, args.scope, rng)
        print(f"database: {connection.vendor} {test_name}; seeded in {time.perf_counter() - started:.1f} s")
        if args.workers:
            with_workers(args.workers, args.rounds, test_name)
        else:
            in_process()
        print(f"PlacementDecisions stored: {PlacementDecision.objects.count()}")
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)


if __name__ == "__main__":
    main()
