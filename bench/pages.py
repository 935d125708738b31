"""Pages benchmark: server time of the clusters, placement and approvals pages at 10,000 clusters.

    .venv/bin/python bench/pages.py [--clusters 10000] [--placements 1000] [--repeat 40]

Seeds a throwaway test database (SQLite in memory, or `--database`, default `fleetui_bench`, on the server
DATABASE_URL names) in bulk: one hub, `--clusters` OCM ManagedClusters with region/vendor/zone labels, 5%
tainted, cpu and memory allocatable; 20 ExclusiveClusterSetLabel sets plus `global`, memberships computed
by inventory.memberships; `--placements` Placements each with a PlacementDecision of 5-50 clusters. For
the placement pages one of them is scheduled over `global` (its stored explanation ranks all 10,000
clusters), and for the inbox 200 staged update runs of a CRP each wait on an approval of a 25-cluster
stage. Then requests each page through Django's test client as a user holding the view role on `global`
and `set-03` (so every row passes the cluster-set role checks a real user's request makes; templates
rendered, middleware run) and prints p50/p95 milliseconds and the number of SQL queries per request
(targets, p95: clusters pages <= 150 ms, placement scores <= 300 ms, approvals inbox <= 150 ms).

With `--load SECONDS` (PostgreSQL: the server processes share the seeded database) it then serves that
database with gunicorn (`--gunicorn-workers`, default 2) on loopback and lets `--concurrency` client
threads (default 2, one per gunicorn worker) request the same pages in turn for SECONDS, with the bench
user's session; per page it prints the requests made, the p50/p95 server time the application reports
(`Server-Timing`, fleetui.middleware) and the p95 round trip, which includes waiting for a free worker.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
# Sessions are signed; this throwaway database and its one session need no real key.
os.environ.setdefault("SECRET_KEY", "bench-pages-throwaway-key")
django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from inventory import memberships, roles  # noqa: E402
from inventory.models import (  # noqa: E402
    ClusterSetRole,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)
from placement import service  # noqa: E402
from placement.models import (  # noqa: E402
    PLACEMENT_LABEL,
    ApprovalRequest,
    Owner,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
)

CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
UNREACHABLE = "cluster.open-cluster-management.io/unreachable"
REGIONS = ["us-west-1", "us-east-1", "eu-central-1", "eu-west-1", "ap-southeast-1"]
VENDORS = ["OpenShift", "AKS", "EKS", "GKE"]
BATCH = 2000


def seed(clusters: int, placements: int, rng: random.Random) -> None:
    hub = Hub.objects.create(name="bench", server_url="https://bench.example.com:6443")
    rows = []
    for index in range(clusters):
        tainted = rng.random() < 0.05
        rows.append(
            ManagedCluster(
                hub=hub,
                uid=f"uid-{index}",
                name=f"cluster-{index:05d}",
                labels={
                    "region": rng.choice(REGIONS),
                    "vendor": rng.choice(VENDORS),
                    "zone": f"z{rng.randrange(3)}",
                    CLUSTER_SET_LABEL: f"set-{index % 20:02d}",
                    **({"spot": "true"} if rng.random() < 0.2 else {}),
                },
                taints=[{"key": UNREACHABLE, "effect": "NoSelect"}] if tainted else [],
                taint_keys=f",{UNREACHABLE}," if tainted else "",
                allocatable={"cpu": "16", "memory": "64Gi"},
                capacity={"cpu": "16", "memory": "64Gi"},
                cpu_allocatable=float(rng.randrange(2, 96)),
                memory_allocatable=float(rng.randrange(4, 512) * 2**30),
                availability=ManagedCluster.Availability.UNAVAILABLE
                if tainted
                else ManagedCluster.Availability.AVAILABLE,
            )
        )
    ManagedCluster.objects.bulk_create(rows, batch_size=BATCH)
    ManagedClusterSet.objects.bulk_create(
        [ManagedClusterSet(hub=hub, name=f"set-{index:02d}") for index in range(20)]
        + [
            ManagedClusterSet(
                hub=hub,
                name="global",
                selector_type=ManagedClusterSet.SelectorType.LABEL_SELECTOR,
                label_selector={},
            )
        ]
    )
    ManagedClusterSetBinding.objects.bulk_create(
        [
            ManagedClusterSetBinding(hub=hub, namespace=f"team-{i}", name="global", cluster_set="global")
            for i in range(5)
        ]
    )
    memberships.rebuild(hub)
    names = [row.name for row in rows]
    placement_rows = Placement.objects.bulk_create(
        [
            Placement(hub=hub, kind=Placement.Kind.PLACEMENT, namespace="team-0", name=f"p-{index:04d}")
            for index in range(placements)
        ],
        batch_size=BATCH,
    )
    PlacementDecision.objects.bulk_create(
        [
            PlacementDecision(
                placement=placement,
                hub=hub,
                namespace=placement.namespace,
                name=f"{placement.name}-decision-1",
                labels={PLACEMENT_LABEL: placement.name},
                decisions=[
                    {"clusterName": name, "reason": ""} for name in rng.sample(names, rng.randrange(5, 51))
                ],
            )
            for placement in placement_rows
        ],
        batch_size=BATCH,
    )


def measure(client: Client, url: str, repeat: int, headers: dict[str, str]) -> tuple[float, float, int]:
    for _ in range(3):
        assert client.get(url, headers=headers).status_code == 200, url
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        client.get(url, headers=headers)
        times.append((time.perf_counter() - start) * 1000)
    with CaptureQueriesContext(connection) as queries:
        client.get(url, headers=headers)
    return statistics.median(times), statistics.quantiles(times, n=20)[18], len(queries)


def bench_user() -> User:
    """A user with the view role on `global` and `set-03`: sees every cluster and the placements of
    team-0..4, through the same role subqueries as any non-superuser."""
    user = get_user_model().objects.create_user("bench")
    for cluster_set in ManagedClusterSet.objects.filter(name__in=["global", "set-03"]):
        ClusterSetRole.objects.create(cluster_set=cluster_set, user=user, role=ClusterSetRole.Role.VIEW)
    visible = roles.restrict(ManagedCluster.objects.all(), user).count()
    assert visible == ManagedCluster.objects.count(), f"the bench user sees {visible} clusters"
    return user


def seed_approvals(hub: Hub, runs: int, rng: random.Random) -> None:
    """`runs` runs of one External CRP, each waiting on the approval after a stage of 25 clusters."""
    crp = Placement.objects.create(
        hub=hub,
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        name="checkout",
        spec={"policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}},
    )
    names = list(ManagedCluster.objects.values_list("name", flat=True))
    run_rows = StagedUpdateRun.objects.bulk_create(
        StagedUpdateRun(
            hub=hub,
            placement=crp,
            name=f"checkout-{index:03d}",
            spec={"placementName": "checkout", "stagedRolloutStrategyName": "s", "state": "Run"},
            status={
                "stagesStatus": [
                    {
                        "stageName": "prod",
                        "clusters": [{"clusterName": name} for name in rng.sample(names, 25)],
                        "afterStageTaskStatus": [
                            {"type": "Approval", "approvalRequestName": f"checkout-{index:03d}-prod"}
                        ],
                    }
                ]
            },
        )
        for index in range(runs)
    )
    ApprovalRequest.objects.bulk_create(
        ApprovalRequest(
            hub=hub,
            owner=Owner.HUB,
            name=f"{run.name}-prod",
            run=run,
            state=ApprovalRequest.State.PENDING,
            spec={"parentStageRollout": run.name, "targetStage": "prod"},
        )
        for run in run_rows
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(database: str, workers: int) -> tuple[subprocess.Popen[bytes], str]:
    """gunicorn on a free loopback port, serving `database` on the server DATABASE_URL names."""
    port = _free_port()
    url = urlsplit(os.environ["DATABASE_URL"])
    env = {**os.environ, "DATABASE_URL": urlunsplit(url._replace(path=f"/{database}")), "DEBUG": "0"}
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "fleetui.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(command, env=env, cwd=Path(__file__).resolve().parents[1])
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
            return server, base
        time.sleep(0.1)
    server.kill()
    raise SystemExit("gunicorn did not answer within 10 s")


def load(
    pages: dict[str, str], session: str, database: str, seconds: float, threads: int, workers: int
) -> None:
    """`threads` clients request the pages in turn for `seconds` against gunicorn; server-time figures."""
    server, base = _serve(database, workers)
    server_ms: dict[str, list[float]] = {label: [] for label in pages}
    round_trip_ms: dict[str, list[float]] = {label: [] for label in pages}
    failures: list[str] = []
    deadline = time.monotonic() + seconds

    def client(offset: int) -> None:
        labels = list(pages)
        turn = offset
        while time.monotonic() < deadline:
            label = labels[turn % len(labels)]
            turn += 1
            headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"}
            if "htmx" in label:
                headers["HX-Request"] = "true"
            started = time.perf_counter()
            try:
                request = urllib.request.Request(base + pages[label], headers=headers)
                with urllib.request.urlopen(request) as answer:
                    answer.read()
                    timing = answer.headers["Server-Timing"]
            except OSError as exc:
                failures.append(f"{label}: {exc}")
                continue
            round_trip_ms[label].append((time.perf_counter() - started) * 1000)
            server_ms[label].append(float(timing.split("dur=")[1]))

    try:
        clients = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join()
    finally:
        server.terminate()
        server.wait(10)
    total = sum(len(times) for times in server_ms.values())
    print(
        f"\nloopback load: {threads} clients, gunicorn {workers} workers, {seconds:.0f} s, "
        f"{total} requests ({total / seconds:.1f}/s), {len(failures)} failures {failures[:3]}"
    )
    print(f"{'page':36} {'requests':>8} {'server p50':>10} {'server p95':>10} {'round trip p95':>14}")
    for label in pages:
        times, trips = sorted(server_ms[label]), sorted(round_trip_ms[label])
        if len(times) < 2:
            print(f"{label:36} {len(times):8d}")
            continue
        p95 = statistics.quantiles(times, n=20)[18]
        trip95 = statistics.quantiles(trips, n=20)[18]
        print(f"{label:36} {len(times):8d} {statistics.median(times):10.1f} {p95:10.1f} {trip95:14.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--placements", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--load", type=float, default=0, metavar="SECONDS", help="then a loopback load")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--gunicorn-workers", type=int, default=2)
    parser.add_argument("--database", default="fleetui_bench", help="the throwaway database on the server")
    args = parser.parse_args()
    if args.load and connection.vendor != "postgresql":
        parser.error("--load needs DATABASE_URL on PostgreSQL (gunicorn's processes share the database)")

    # No setup_test_environment(): its template instrumentation would be measured too.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    connection.settings_dict["TEST"]["NAME"] = args.database
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        started = time.perf_counter()
        seed(args.clusters, args.placements, random.Random(1))
        print(f"database: {connection.vendor} {test_name}; seeded in {time.perf_counter() - started:.1f} s")
        client = Client()
        hub = Hub.objects.get(name="bench")
        scheduled = Placement.objects.get(name="p-0000")
        scheduled.owner, scheduled.spec = Owner.DASHBOARD, {"clusterSets": ["global"], "numberOfClusters": 10}
        scheduled.save()
        service.reschedule(scheduled, trigger="bench")
        seed_approvals(hub, 200, random.Random(3))
        client.force_login(bench_user())
        big_set = ManagedClusterSet.objects.get(name="set-03")
        global_set = ManagedClusterSet.objects.get(name="global")
        size = f"{args.clusters // 1000}k"
        pages = {
            "clusters, first page (50)": "/clusters/",
            "clusters, selector": "/clusters/?q=region%3Dus-west-1%2Cvendor+in+(OpenShift%2CAKS)%2C!spot",
            "clusters, sort -cpu, 500 per page": "/clusters/?sort=-cpu&per_page=500",
            "clusters, set + availability": "/clusters/?cluster_set=set-03&availability=Available",
            "clusters, taint key": f"/clusters/?taint={UNREACHABLE}",
            "clusters, page 150": "/clusters/?page=150",
            "clusters, htmx fragment": "/clusters/?sort=memory&page=3",
            "cluster set detail (500 members)": f"/clustersets/{big_set.pk}/",
            f"cluster set detail (global, {size})": f"/clustersets/{global_set.pk}/?sort=-cpu",
            "cluster sets list": "/clustersets/",
            "API clusters (50)": "/api/clusters/?q=vendor%3DEKS",
            "placements list": "/placements/",
            f"placement scores ({size} score table)": f"/placements/{scheduled.pk}/scores/",
            "score table, sort -total, page 20": f"/placements/{scheduled.pk}/scores/?sort=-total&page=20",
            "score table, sort name, `cluster=7`": f"/placements/{scheduled.pk}/scores/?sort=name&cluster=7",
            f"placement decisions ({size} clusters)": f"/placements/{scheduled.pk}/",
            f"API placement detail ({size} rows)": f"/api/placements/{scheduled.pk}/",
            "approvals inbox (200 pending)": "/approvals/",
            "API approvals (200 pending)": "/api/approvals/?per_page=100",
        }
        print(f"{'page':36} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}")
        for label, url in pages.items():
            # The htmx variants get only the list fragment, as the browser does on filter/sort/page.
            headers = {"HX-Request": "true"} if "htmx" in label else {}
            p50, p95, count = measure(client, url, args.repeat, headers)
            print(f"{label:36} {p50:8.1f} {p95:8.1f} {count:8d}")
        if args.load:
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            load(pages, session, test_name, args.load, args.concurrency, args.gunicorn_workers)
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)


if __name__ == "__main__":
    main()
