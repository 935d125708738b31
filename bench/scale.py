"""Scale: the whole scenario end to end, from a hub of 50,000 clusters to pages, with every figure.

    .venv/bin/python bench/scale.py [--clusters 50000] [--placements 5000] [--changes 20] [--change-minutes 5]
        [--passes 3] [--heartbeat-seconds 60] [--quiet-seconds 30] [--database fleetui_bench_scale]
        [--redis-db 14]

The production topology on PostgreSQL and Redis (DATABASE_URL and CELERY_BROKER_URL, else those of
var/services/env; the database `--database` and Redis db `--redis-db` of those servers are emptied
first and the database is kept afterwards for a look at its plans). The demo hub runs in a process of
its own (demohub/remote.py) with `--clusters` OCM ManagedClusters and Fleet MemberClusters whose agents
report every `--heartbeat-seconds` (a steady clusters/period writes a second); its Fleet controllers
apply the CRPs' bindings (demohub/fleetsim.py), so their rolling updates finish, from the placements on
(after the sync). In order:

1. initial sync: `manage.py sync_hubs demo` in a process of its own (wall time, its peak RSS), with
   heartbeats on; then heartbeats paused, a resync that takes in the heartbeats of the first sync, and a
   resync with nothing changed (timed); heartbeats on again, `manage.py watch_hubs demo` started;
2. `--placements` dashboard-owned placements bulk-created: OCM Placements over one set with an add-on
   label predicate (40 %), over two sets (20 %) and over `global` (20 %), and Fleet PickN CRPs (20 %);
   the full reschedule (`reschedule_hub`) by 1 and then 2 real `celery -A fleetui worker` processes
   (bench/reschedule.py's), a first pass (every decision new), a second (Balance scores move once more as
   the first pass's decisions are counted; with 1 worker it also runs the rolling-update rounds of the
   CRPs the first pass bound) and a third (nothing changes) each, or the first `--passes` of them;
3. with 2 workers left running: a heartbeat-only window of `--quiet-seconds` (hub writes, member rows
   the watcher stored, HubInventoryVersion bumps and reschedule tasks run: the last two must be 0),
   with the CPU each process of the stack used meanwhile (what heartbeats alone cost the machine);
4. `--changes` label and taint changes written on the hub, one at a time, each to a cluster an OCM
   Placement selects (its add-on label set to unhealthy, or a NoSelect taint): the latency from the hub
   write to that placement's stored decision without the cluster, p50/p95 (and its two parts: to the
   cluster's row stored by the watcher, then to the decision); each change is undone, and
   the changes come as a stream, one every `--change-minutes` / `--changes` (or as soon as the last
   one's decision and undo are stored, if later), without waiting for the runs of the earlier ones to
   settle: the workers are still busy with them, as a user would find them (the runs still owed at
   each change are printed);
5. once the workers have run what the changes queued (at 50,000 clusters each change queues runs of
   thousands of placements, those it cannot alter last), pages through Django's test client as a user
   with the view role on `global`: the detail and scores pages of a placement over `global`, what-if
   warm, and the first what-if after a hub change (the change stored by the watcher, this process's
   snapshot then stale), p50/p95, and the CPU each process of the stack used meanwhile;
6. PostgreSQL: bytes per row of the large tables and what 200,000 clusters make of them.

Each figure is printed next to the task's target for the size (the 10,000 column below 50,000
clusters). Logs of the watcher and workers go to var/scale/.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from soak import BIN, MANAGE, Processes, _interrupted, reset_services, service_urls  # noqa: E402

from demohub.remote import RemoteHub  # noqa: E402
from demohub.resources import RESOURCES  # noqa: E402
from demohub.seed import ADDON_LABEL_PREFIX  # noqa: E402

HUB = "demo"
VAR = ROOT / "var" / "scale"
DRAIN_TAINT = "bench.fleetui.io/drain"
# Seconds between passes of the hub's simulated Fleet controllers, once the placements exist.
CONTROLLER_SECONDS = 1.0
# A worker's line for each reschedule task it takes.
RESCHEDULE_RECEIVED = re.compile(r"Task placement\.tasks\.reschedule_placement\[[^\]]+\] received")

ADDONS = ("application-manager", "search-collector", "work-manager")
SETTLE_TIMEOUT = 600.0
# Periodic work the watcher makes redundant (hub resyncs, placement resyncs) is set this far apart.
NEVER = 86_400
DECISION_TIMEOUT = 600.0
# The task's targets per size (the 10,000 column, the 50,000 column): seconds unless said otherwise.
TARGETS: dict[str, tuple[float, float]] = {
    "initial sync s": (10, 60),
    "initial sync peak RSS MB": (1024, 1024),
    "resync, nothing changed s": (2, 10),
    "watch event -> stored decision p50 s": (0.5, 2),
    "watch event -> stored decision p95 s": (1, 4),
    "heartbeat-only: snapshot invalidations": (0, 0),
    "heartbeat-only: reschedules": (0, 0),
    "full reschedule, 2 workers s": (5, 60),
    "placement detail page p95 ms": (150, 150),
    "what-if warm p95 ms": (50, 50),
    "first what-if after a change p95 ms": (500, 500),
}
# The full reschedule's target is for 1,000 placements at 10,000 clusters, 5,000 at 50,000.


def percentiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (float("nan"), float("nan"))
    return statistics.median(values), statistics.quantiles(values, n=20, method="inclusive")[18]


class Figures:
    """The figures measured, printed as they come and as a table against the targets at the end."""

    def __init__(self, clusters: int) -> None:
        self.column = 1 if clusters >= 50_000 else 0
        self.values: dict[str, float] = {}

    def add(self, name: str, value: float, note: str = "") -> None:
        self.values[name] = value
        target = TARGETS.get(name)
        shown = f" (target <= {target[self.column]:g})" if target else ""
        print(f"  {name}: {value:,.3f}{shown}{'  ' + note if note else ''}", flush=True)

    def table(self) -> None:
        print("\n| figure | measured | target | met |\n|---|---:|---:|---|")
        for name, value in self.values.items():
            target = TARGETS.get(name)
            limit = f"{target[self.column]:g}" if target else "-"
            met = "-" if target is None else ("yes" if value <= target[self.column] else "no")
            print(f"| {name} | {value:,.3f} | {limit} | {met} |")


def environment(args: argparse.Namespace) -> dict[str, str]:
    database, broker = service_urls()
    env = {
        name: value for name, value in os.environ.items() if name not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    return env | {
        "DATABASE_URL": f"{database}/{args.database}",
        "CELERY_BROKER_URL": f"{broker}/{args.redis_db}",
        "DJANGO_SETTINGS_MODULE": "fleetui.settings",
        "SECRET_KEY": "scale-throwaway-secret-key-" + "x" * 40,
        "FLEETUI_CREDENTIALS_KEY": "scale-throwaway-credentials-key",
        "DEBUG": "0",
        "LOG_LEVEL": "INFO",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        # the full reschedule is measured on its own: beat's periodic one would fall into other figures
        "PLACEMENT_RESYNC_SECONDS": str(NEVER),
    }


def timed_command(command: list[str], env: dict[str, str], log: Path) -> tuple[float, float]:
    """Run a management command in a process of its own; answers its wall seconds and peak RSS in MB."""
    started = time.perf_counter()
    with log.open("ab") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(command[1:])} failed ({process.returncode}); see {log}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait(check: Callable[[], bool], timeout: float, what: str, period: float = 0.02) -> float:
    """Poll until `check()`; answers the time.time() it first held."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(period)
    return time.time()


# --- the phases ------------------------------------------------------------------------------------------


def sync_phase(hub: RemoteHub, env: dict[str, str], figures: Figures, heartbeat_seconds: float) -> None:
    from django.core.management import call_command

    from inventory.models import SyncRun

    with open(os.devnull, "w") as quiet:
        call_command(
            "hubs", "add", HUB, "--server", hub.url, "--fleet", "--interval", str(NEVER), stdout=quiet
        )
    sync = [*MANAGE, "sync_hubs", HUB]

    def timed_sync() -> tuple[float, float, float]:
        """The sync's own seconds (its SyncRun), the wall seconds of its process, and its peak RSS."""
        wall, peak = timed_command(sync, env, VAR / "sync.log")
        run = SyncRun.objects.order_by("-pk").first()
        assert run is not None and run.finished_at is not None
        return (run.finished_at - run.started_at).total_seconds(), wall, peak

    seconds, wall, peak = timed_sync()
    print("initial sync (heartbeats on):", flush=True)
    figures.add("initial sync s", seconds, f"the process: {wall:.1f} s with Django's start")
    figures.add("initial sync peak RSS MB", peak, "of the sync_hubs process")
    hub.call("churn.heartbeats", 0)
    seconds, wall, _ = timed_sync()
    print(f"  resync taking in the heartbeats written during the first: {seconds:.1f} s")
    seconds, wall, _ = timed_sync()
    figures.add("resync, nothing changed s", seconds, f"the process: {wall:.1f} s")
    hub.call("churn.heartbeats", heartbeat_seconds)


def seed_placements(count: int, rng: random.Random) -> None:
    """Dashboard-owned placements in bulk, none scheduled yet (see the module docstring for the mix)."""
    from inventory.models import Hub
    from placement.models import Owner, Placement

    hub = Hub.objects.get(name=HUB)
    configurations = [
        {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}
        for name, weight in (("Balance", 1), ("Steady", 1), ("ResourceAllocatableMemory", 2))
    ]
    placements = []
    for index in range(count):
        share = index % 10
        spec: dict[str, Any] = {
            "numberOfClusters": rng.randrange(3, 11),
            "prioritizerPolicy": {"mode": "Exact", "configurations": configurations},
        }
        kind, namespace = Placement.Kind.PLACEMENT, "apps-prod"
        if share < 4:
            label = ADDON_LABEL_PREFIX + rng.choice(ADDONS)
            spec["clusterSets"] = ["production"]
            spec["predicates"] = [
                {"requiredClusterSelector": {"labelSelector": {"matchLabels": {label: "available"}}}}
            ]
        elif share < 6:
            namespace, spec["clusterSets"] = "apps-dev", ["development", "staging"]
        elif share < 8:
            namespace, spec["clusterSets"] = "default", ["global"]
        else:
            kind, namespace = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, ""
            term = {"labelSelector": {"matchLabels": {"environment": rng.choice(["prod", "staging", "dev"])}}}
            spec = {
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": f"app-{index}"}
                ],
                "policy": {
                    "placementType": "PickN",
                    "numberOfClusters": rng.randrange(3, 11),
                    "affinity": {
                        "clusterAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [term]}
                        }
                    },
                },
            }
        placements.append(
            Placement(
                hub=hub,
                owner=Owner.DASHBOARD,
                kind=kind,
                namespace=namespace,
                name=f"scale-{index:05d}",
                spec=spec,
            )
        )
    Placement.objects.bulk_create(placements, batch_size=2000)


def reschedule_phase(database: str, passes: int, figures: Figures) -> None:
    from reschedule import PASSES, worker_run

    from inventory.models import Hub

    hub = Hub.objects.get(name=HUB)
    walls = {}
    for count in (1, 2):
        walls[count] = worker_run(count, hub, database, VAR, f"full-{count}", passes)
    figures.add("full reschedule, 1 worker s", walls[1][0], "first pass (every decision new)")
    if passes == len(PASSES):
        figures.add("full reschedule, 1 worker, steady s", walls[1][-1], "third pass (nothing changes)")
    figures.add("full reschedule, 2 workers s", walls[2][0], "first pass")
    if passes == len(PASSES):
        figures.add("full reschedule, 2 workers, steady s", walls[2][-1], "third pass")
    figures.add("speed-up 2 workers / 1 worker", walls[1][0] / walls[2][0], "first pass; 2 would be perfect")


def member_versions() -> dict[str, str]:
    from inventory.models import ManagedCluster

    rows = ManagedCluster.objects.filter(hub__name=HUB, kind="MemberCluster")
    return dict(rows.values_list("name", "resource_version"))


def inventory_version() -> int:
    from placement.models import HubInventoryVersion

    return HubInventoryVersion.objects.filter(hub__name=HUB).values_list("version", flat=True).first() or 0


def settled() -> bool:
    from placement.models import Placement

    return not Placement.objects.filter(hub__name=HUB, reschedule_pending_since__isnull=False).exists()


def drained() -> bool:
    """Settled, and no run or rolling-update round queued any more: the runs a change cannot alter (their
    explanations show the changed cluster) are queued behind all others, and owe nothing."""
    from django.db.models import Q
    from django.utils import timezone

    from placement.models import Placement
    from placement.tasks import QUEUED_TTL

    fresh = timezone.now() - QUEUED_TTL
    queued = Q(reschedule_queued_at__gte=fresh) | Q(round_queued_at__gte=fresh)
    return settled() and not Placement.objects.filter(queued, hub__name=HUB).exists()


def rescheduled_tasks(workers: list[Any]) -> int:
    """The reschedule tasks the workers have received (one still running when a window starts is not
    counted in it)."""
    return sum(len(RESCHEDULE_RECEIVED.findall(w.log.read_text(errors="replace"))) for w in workers)


class StackCpu:
    """CPU seconds the stack's processes used between its making and `report`, by process: the demo
    hub, each process `Processes` started (the watcher, beat), the workers with their pool children,
    this process, and the machine as a whole (the rest is mostly PostgreSQL), besides what the
    hypervisor stole from it."""

    def __init__(self, hub: RemoteHub, processes: Processes, workers: list[Any]) -> None:
        self.hub, self.processes, self.workers = hub, processes, workers
        self.started, self.before = time.perf_counter(), self._now()

    def _now(self) -> dict[str, float]:
        from reschedule import cpu_seconds, machine_cpu_seconds, worker_pids

        used = {"demo hub": cpu_seconds(self.hub.pid)}
        used |= {name: cpu_seconds(process.pid) for name, process in self.processes.running.items()}
        used["workers"] = sum(cpu_seconds(pid) for pid in worker_pids(self.workers))
        used["this process"] = sum(os.times()[:2])
        used["machine"], used["stolen"] = machine_cpu_seconds()
        return used

    def report(self, what: str) -> None:
        seconds, after = time.perf_counter() - self.started, self._now()
        spent = {name: after[name] - self.before.get(name, 0.0) for name in after}
        machine, stolen = spent.pop("machine"), spent.pop("stolen")
        named = ", ".join(f"{name} {value:.1f} s" for name, value in spent.items())
        print(
            f"  CPU during {what} ({seconds:.0f} s): {named}; the machine {machine:.1f} s busy of"
            f" {os.cpu_count() or 1} x {seconds:.0f} s, {machine - sum(spent.values()):.1f} s of it"
            f" PostgreSQL and the rest; {stolen:.1f} s stolen by the hypervisor"
        )


def heartbeat_phase(
    hub: RemoteHub, processes: Processes, workers: list[Any], seconds: float, figures: Figures
) -> None:
    from django.utils import timezone

    from placement.models import Placement

    wait(settled, SETTLE_TIMEOUT, "the placements to settle", period=1.0)
    members, version, tasks = member_versions(), inventory_version(), rescheduled_tasks(workers)
    hub_version, mark = hub.call("store.resource_version"), timezone.now()
    cpu = StackCpu(hub, processes, workers)
    time.sleep(seconds)
    written = hub.call("store.resource_version") - hub_version
    stored = sum(1 for name, rv in member_versions().items() if members.get(name) != rv)
    rescheduled = Placement.objects.filter(hub__name=HUB, last_scheduled_at__gte=mark).count()
    print(
        f"heartbeat-only window of {seconds:g} s: {written} hub writes ({written / seconds:,.0f}/s), "
        f"{stored} member rows stored by the watcher"
    )
    cpu.report("the heartbeat-only window")
    figures.add(
        "heartbeat-only: snapshot invalidations", inventory_version() - version, "HubInventoryVersion bumps"
    )
    figures.add(
        "heartbeat-only: reschedules",
        rescheduled + rescheduled_tasks(workers) - tasks,
        f"placements scheduled {rescheduled}, reschedule tasks run {rescheduled_tasks(workers) - tasks}",
    )


def selected(placement: Any) -> set[str]:
    from placement import queries

    pages = queries.decision_pages(placement).values_list("decisions", flat=True)
    return {item["clusterName"] for page in pages for item in page or ()}


def dropped(placement: Any, name: str) -> bool:
    return name not in selected(placement)


def cluster_row_version(name: str) -> str:
    from inventory.models import ManagedCluster

    row = ManagedCluster.objects.filter(hub__name=HUB, kind="ManagedCluster", name=name)
    return row.values_list("resource_version", flat=True).first() or ""


def write_and_wait_stored(hub: RemoteHub, name: str, body: dict[str, Any]) -> tuple[float, float]:
    """Patch a ManagedCluster on the hub; answers the time.time() the write was sent and the one its row
    held the new version."""
    sent = time.time()
    version = hub.call("store.patch", "ManagedCluster", name, body)["metadata"]["resourceVersion"]
    stored = wait(
        lambda: cluster_row_version(name) == version, DECISION_TIMEOUT, f"{name} at {version} stored"
    )
    return sent, stored


def change_bodies(hub: RemoteHub, name: str, label: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The change that makes a placement drop `name` (its add-on label unhealthy, or a NoSelect taint)
    and the change that undoes it."""
    if label is not None:
        return {"metadata": {"labels": {label: "unhealthy"}}}, {"metadata": {"labels": {label: "available"}}}
    taints = hub.call("store.get", "ManagedCluster", name)["spec"].get("taints") or []
    drained = [*taints, {"key": DRAIN_TAINT, "effect": "NoSelect", "timeAdded": "2026-01-01T00:00:00Z"}]
    return {"spec": {"taints": drained}}, {"spec": {"taints": taints}}


def change_phase(hub: RemoteHub, changes: int, minutes: float, rng: random.Random, figures: Figures) -> None:
    from placement.models import Placement

    candidates = list(
        Placement.objects.filter(
            hub__name=HUB, kind=Placement.Kind.PLACEMENT, namespace="apps-prod"
        ).order_by("pk")
    )
    latencies: dict[str, list[float]] = {"label": [], "taint": []}
    # each latency in two: the hub write to the cluster's row stored by the watcher, then to the decision
    parts: dict[str, list[float]] = {"stored": [], "decided": []}
    owed: list[int] = []
    wait(settled, SETTLE_TIMEOUT, "the placements to settle", period=0.5)
    start, interval = time.monotonic(), minutes * 60 / max(1, changes)
    for index in range(changes):
        if time.monotonic() > start + minutes * 60:
            print(f"  stopped after {index} changes: --change-minutes {minutes:g} is over")
            break
        time.sleep(max(0.0, start + index * interval - time.monotonic()))
        placement = rng.choice(candidates)
        chosen = selected(placement)
        if not chosen:
            continue
        name, what = rng.choice(sorted(chosen)), ("label", "taint")[index % 2]
        predicate = placement.spec["predicates"][0]["requiredClusterSelector"]["labelSelector"]["matchLabels"]
        change, undo = change_bodies(hub, name, next(iter(predicate)) if what == "label" else None)
        owed.append(Placement.objects.filter(hub__name=HUB, reschedule_pending_since__isnull=False).count())
        sent, stored = write_and_wait_stored(hub, name, change)
        decided = wait(
            partial(dropped, placement, name), DECISION_TIMEOUT, f"{placement.name} to drop {name}"
        )
        latencies[what].append(decided - sent)
        parts["stored"].append(stored - sent)
        parts["decided"].append(decided - stored)
        write_and_wait_stored(hub, name, undo)
    # the pages are timed on a quiet system, as before the stream: once the workers have run what the
    # changes queued (at 50,000 clusters each change queues runs of thousands of placements)
    stream_end = time.monotonic()
    queued = Placement.objects.filter(hub__name=HUB, reschedule_queued_at__isnull=False).count()
    wait(drained, SETTLE_TIMEOUT, "the runs the changes queued", period=0.5)
    drained_after = time.monotonic() - stream_end
    print(f"  the workers ran what the changes queued ({queued:,} runs) {drained_after:.0f} s after")
    both = latencies["label"] + latencies["taint"]
    if owed:
        print(
            f"  reschedules still owed when each change was written: median {statistics.median(owed):g}, "
            f"most {max(owed)}"
        )
    for what, values in latencies.items():
        p50, p95 = percentiles(values)
        print(f"  {what} changes: {len(values)}, p50 {p50:.2f} s, p95 {p95:.2f} s")
    for what, label in (("stored", "hub write -> row stored"), ("decided", "row stored -> decision")):
        p50, p95 = percentiles(parts[what])
        print(f"  {label}: p50 {p50:.2f} s, p95 {p95:.2f} s")
    p50, p95 = percentiles(both)
    figures.add("watch event -> stored decision p50 s", p50, f"{len(both)} changes, heartbeats on")
    figures.add("watch event -> stored decision p95 s", p95)


def timed_requests(request: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = request()
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{response.status_code}: {response.content[:300]!r}")
    return times


def pages_phase(hub: RemoteHub, repeat: int, rng: random.Random, figures: Figures) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from inventory.models import ClusterSetRole, ManagedClusterSet
    from placement.models import Placement

    user = get_user_model().objects.create_user("scale-viewer")
    ClusterSetRole.objects.create(
        cluster_set=ManagedClusterSet.objects.get(hub__name=HUB, name="global"),
        user=user,
        role=ClusterSetRole.Role.VIEW,
    )
    client = Client()
    client.force_login(user)
    placement = Placement.objects.filter(hub__name=HUB, namespace="default").order_by("pk").first()
    assert placement is not None
    for tab, url in (
        ("detail", f"/placements/{placement.pk}/"),
        ("scores", f"/placements/{placement.pk}/scores/"),
    ):
        client.get(url)
        p50, p95 = percentiles(timed_requests(partial(client.get, url), repeat))
        figures.add(f"placement {tab} page p50 ms", p50)
        figures.add(
            "placement detail page p95 ms" if tab == "detail" else "placement scores page p95 ms", p95
        )

    whatif_url = f"/api/placements/{placement.pk}/whatif/"

    def whatif() -> Any:
        weights = [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": n}, "weight": rng.randrange(-10, 11)}
            for n in ("ResourceAllocatableCPU", "ResourceAllocatableMemory")
        ]
        body = {
            "numberOfClusters": rng.randrange(1, 50),
            "prioritizerPolicy": {"mode": "Additive", "configurations": weights},
        }
        return client.post(whatif_url, body, content_type="application/json")

    timed_requests(whatif, 3)  # the snapshot of this process and warm caches
    p50, p95 = percentiles(timed_requests(whatif, repeat))
    figures.add("what-if warm p50 ms", p50)
    figures.add("what-if warm p95 ms", p95)
    names = hub.call("store.names", "ManagedCluster")
    firsts = []
    for _ in range(max(3, repeat // 4)):
        name = rng.choice(names)
        change, undo = change_bodies(hub, name, None)
        write_and_wait_stored(hub, name, change)
        firsts += timed_requests(whatif, 1)
        write_and_wait_stored(hub, name, undo)
    p50, p95 = percentiles(firsts)
    figures.add("first what-if after a change p50 ms", p50, f"{len(firsts)} changes")
    figures.add("first what-if after a change p95 ms", p95)


def database_phase(clusters: int) -> None:
    from django.db import connection

    from inventory.models import AddOnPlacementScore, ClusterSetMembership, ManagedCluster
    from placement.models import DecisionChange, Placement, PlacementDecision, PlacementEvent

    print(f"\nPostgreSQL at {clusters:,} clusters: bytes per row (table, indexes and TOAST together)")
    per_cluster = (ManagedCluster, AddOnPlacementScore, ClusterSetMembership)
    models = (*per_cluster, Placement, PlacementDecision, PlacementEvent, DecisionChange)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        for model in models:
            table = model._meta.db_table
            cursor.execute(
                f"SELECT count(*), pg_total_relation_size('{table}'), pg_indexes_size('{table}') "  # noqa: S608
                f"FROM {table}"  # our own table names
            )
            rows, total, indexes = cursor.fetchone()
            per = total / rows if rows else 0
            scaled = ""
            if model in per_cluster and rows:
                scaled = f" -> {per * rows / clusters * 200_000 / 2**20:,.0f} MB at 200,000 clusters"
            print(
                f"  {table:32} {rows:9,} rows {total / 2**20:8.1f} MB "
                f"({indexes / 2**20:6.1f} MB indexes) {per:8,.0f} B/row{scaled}"
            )
        column = "pg_column_size(explanation)"
        cursor.execute(f"SELECT avg({column}), max({column}) FROM {Placement._meta.db_table}")  # noqa: S608
        average, largest = cursor.fetchone()
        print(
            f"  Placement.explanation: {average or 0:,.0f} B on average, {largest or 0:,} B at most (stored)"
        )


def window_report(hub: RemoteHub) -> None:
    windows = {r.kind: hub.call("store.window", r.kind) for r in RESOURCES}
    expired = sum(w.expired_watches for w in windows.values())
    busiest = max(windows.items(), key=lambda item: item[1].events)
    print(
        f"demo hub: 410 Expired sent to watches: {expired}; largest watch window {busiest[0]} "
        f"{busiest[1].events:,} events over {busiest[1].oldest_seconds:.0f} s; RSS {rss_mb(hub.pid):,.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=50_000)
    parser.add_argument("--placements", type=int, default=5_000)
    parser.add_argument("--changes", type=int, default=20, help="label and taint changes timed")
    parser.add_argument(
        "--change-minutes", type=float, default=5.0, help="no change is started after this many minutes"
    )
    parser.add_argument("--heartbeat-seconds", type=float, default=60.0, help="each agent reports this often")
    parser.add_argument("--quiet-seconds", type=float, default=30.0, help="the heartbeat-only window")
    parser.add_argument("--repeat", type=int, default=20, help="requests per page figure")
    parser.add_argument(
        "--passes",
        type=int,
        choices=(1, 2, 3),
        default=3,
        help="full reschedule passes per worker count: the first (every decision new) only, or up to the"
        " third (nothing changes); the rolling-update rounds of the CRPs the first pass binds run in the"
        " 1-worker run's second pass",
    )
    parser.add_argument("--database", default="fleetui_bench_scale")
    parser.add_argument("--redis-db", type=int, default=14)
    args = parser.parse_args()
    # SIGTERM as Ctrl-C: the finally clauses stop the workers, the watcher and the hub
    signal.signal(signal.SIGTERM, _interrupted)
    started = time.perf_counter()
    shutil.rmtree(VAR, ignore_errors=True)
    VAR.mkdir(parents=True)
    env = environment(args)
    reset_services(env)
    os.environ.update(env)
    import django

    django.setup()
    import logging

    # the set-up's own INFO lines (django-axes' logins among them) would bury the figures
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("axes").setLevel(logging.WARNING)
    # the test client serves no static files: whitenoise's warning that none were collected is noise here
    warnings.filterwarnings("ignore", message="No directory at")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from reschedule import start_workers, stop_workers

    figures, rng = Figures(args.clusters), random.Random(5)
    processes = Processes(VAR, env)
    print(f"demo hub: seeding {args.clusters:,} clusters (OCM + Fleet) in its own process...", flush=True)
    # the hub's controllers report Applied / Available on the CRPs' bindings (an empty Work applies too, as
    # upstream's work generator writes one even when the selected Namespace does not exist), a pass a
    # second from the placements on: they share the hub's process with its API server, and at 50,000
    # clusters paging through the hub took 1.7 times as long with them running (their staged update run
    # reads every MemberCluster), which is the hub's cost, not the sync's
    with RemoteHub(
        clusters=args.clusters,
        fleet=True,
        seed=1,
        heartbeat_seconds=args.heartbeat_seconds,
        controllers=True,
        controller_seconds=0,
    ) as hub:
        print(
            f"demo hub up after {time.perf_counter() - started:.0f} s, {sum(hub.seeded.values()):,} objects, "
            f"heartbeats {args.clusters / args.heartbeat_seconds:,.0f}/s, RSS {rss_mb(hub.pid):,.0f} MB",
            flush=True,
        )
        workers: list[Any] = []
        try:
            sync_phase(hub, env, figures, args.heartbeat_seconds)
            hub.call("controllers.start", CONTROLLER_SECONDS)
            processes.start("watch", [*MANAGE, "watch_hubs", HUB])
            seed_placements(args.placements, rng)
            print(f"full reschedule of {args.placements:,} placements (bench/reschedule.py):", flush=True)
            reschedule_phase(args.database, args.passes, figures)
            workers = start_workers(2, args.database, VAR, "events")
            beat = [str(BIN / "celery"), "-A", "fleetui", "beat", "--schedule", str(VAR / "beat-schedule")]
            processes.start("beat", beat)
            heartbeat_phase(hub, processes, workers, args.quiet_seconds, figures)
            print("label and taint changes on the hub (heartbeats on):", flush=True)
            change_phase(hub, args.changes, args.change_minutes, rng, figures)
            print("pages (Django test client):", flush=True)
            cpu = StackCpu(hub, processes, workers)
            pages_phase(hub, args.repeat, rng, figures)
            cpu.report("the pages")
            window_report(hub)
        finally:
            stop_workers(workers)
            processes.stop_all()
    database_phase(args.clusters)
    figures.table()
    minutes, load = (time.perf_counter() - started) / 60, " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{args.clusters:,} clusters, {args.placements:,} placements: {minutes:.1f} min, "
        f"load average {load}; database {args.database} kept"
    )


if __name__ == "__main__":
    main()
