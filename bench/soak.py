"""Soak: the production topology under churn, a worker killed and restarted midway, then convergence.

    .venv/bin/python bench/soak.py [--minutes 10] [--clusters 300] [--placements 60] [--churn-per-minute 300]

Runs against the real PostgreSQL and Redis (DATABASE_URL / CELERY_BROKER_URL; defaults: the local
servers, database `fleetui_soak`, Redis db 12, both emptied first). The demo hub runs in this process,
churning cluster labels (add-on states), add-on scores and availability; the rest are separate processes
as `make up` starts them: gunicorn, two Celery workers (one process each), celery beat (resync every 60
s here) and the hub watcher. Dashboard-owned Placements are created over the hub's bound namespaces.
While the churn goes on, a page loop requests the clusters, placements, placement detail and API pages
as a logged-in user and counts anything but 200. At half time worker 1 is killed with SIGKILL and
started again.

Then the churn stops and the script waits until the database matches the hub and every placement has
converged, and checks:
- no lost or duplicated rows: every hub ManagedCluster has exactly one row, at the hub's resourceVersion;
- no duplicated decisions: no cluster twice in one placement's decision pages;
- every placement converged: its stored selection equals what the scheduler decides on the final
  inventory (`placement.service.evaluate`, which honours Steady and existing decisions);
- no error pages.
Prints the figures and exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test").rsplit("/", 1)[0]
BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0").rsplit("/", 1)[0]
SOAK_ENV = {
    "DATABASE_URL": f"{DATABASE_URL}/fleetui_soak",
    "CELERY_BROKER_URL": f"{BROKER_URL}/12",
    "SECRET_KEY": "soak-throwaway-secret-key-" + "x" * 40,
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "PLACEMENT_RESYNC_SECONDS": "60",
    "LOG_LEVEL": os.environ.get("SOAK_LOG_LEVEL", "WARNING"),
}
os.environ.update(SOAK_ENV)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
BIN = ROOT / ".venv" / "bin"
NAMESPACES = {
    "apps-prod": ["production", "global"],
    "apps-dev": ["development", "staging"],
    "default": ["global"],
}
PAGE_PERIOD = 0.5
ADDON_LABELS = [
    f"feature.open-cluster-management.io/addon-{name}"
    for name in ("application-manager", "search-collector", "work-manager")
]


def reset_services() -> None:
    """An empty soak database and Redis db, so figures are this run's only."""
    import dj_database_url
    import psycopg
    import redis
    from psycopg import sql

    config = dj_database_url.parse(SOAK_ENV["DATABASE_URL"])
    params = {"host": config["HOST"], "port": config["PORT"] or 5432, "user": config["USER"] or "postgres"}
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(config["NAME"]))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
    redis.Redis.from_url(SOAK_ENV["CELERY_BROKER_URL"]).flushdb()


class Processes:
    """The topology's processes (as the Procfile runs them), logs under var/soak/."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.logs = ROOT / "var" / "soak"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def commands(self) -> dict[str, list[str]]:
        worker = [str(BIN / "celery"), "-A", "fleetui", "worker", "--concurrency", "1", "--loglevel", "INFO"]
        return {
            "web": [
                str(BIN / "gunicorn"),
                "fleetui.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "2",
            ],
            "worker1": [*worker, "--hostname", "soak1@%h"],
            "worker2": [*worker, "--hostname", "soak2@%h"],
            "beat": [
                str(BIN / "celery"),
                "-A",
                "fleetui",
                "beat",
                "--schedule",
                str(self.logs / "beat-schedule"),
            ],
            "watch": [str(BIN / "python"), "manage.py", "watch_hubs"],
        }

    def start(self, name: str) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        # each in its own process group, so a kill takes the worker's pool children with it
        self.running[name] = subprocess.Popen(
            self.commands()[name],
            cwd=ROOT,
            env=os.environ.copy(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, name: str) -> None:
        """SIGKILL the process and its children, as when a worker's machine or container dies."""
        os.killpg(self.running[name].pid, signal.SIGKILL)
        self.running[name].wait()

    def stop_all(self) -> None:
        for process in self.running.values():
            _signal_group(process, signal.SIGTERM)
        for process in self.running.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


@dataclass
class PageLoop:
    """Requests the main pages until stopped; every answer's status and time is kept."""

    base: str
    cookie: str
    token: str
    placement_ids: list[int]
    statuses: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    slowest: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    def paths(self, rng: random.Random) -> list[tuple[str, dict[str, str]]]:
        session = {"Cookie": f"sessionid={self.cookie}"}
        api = {"Authorization": f"Token {self.token}"}
        placement = rng.choice(self.placement_ids)
        return [
            ("/clusters/", session),
            ("/placements/", session),
            (f"/placements/{placement}/", session),
            ("/clustersets/", session),
            ("/api/placements/", api),
            ("/api/clusters/?limit=50", api),
        ]

    def run(self) -> None:
        rng = random.Random(1)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        while not self.stop.wait(PAGE_PERIOD):
            for path, headers in self.paths(rng):
                started = time.perf_counter()
                try:
                    with opener.open(
                        urllib.request.Request(self.base + path, headers=headers), timeout=30
                    ) as r:
                        status = r.status
                except urllib.error.HTTPError as error:
                    status = error.code
                except OSError as error:
                    status = 0
                    self.failures.append(f"{path}: {error}")
                self.slowest = max(self.slowest, time.perf_counter() - started)
                self.statuses[str(status)] += 1
                if status != 200:
                    self.failures.append(f"{path}: HTTP {status}")


def create_placements(count: int, rng: random.Random) -> list[int]:
    from inventory.models import Hub
    from placement import service
    from placement.models import Placement

    hub = Hub.objects.get(name="soak")
    ids = []
    for index in range(count):
        namespace = rng.choice(sorted(NAMESPACES))
        spec = {
            "clusterSets": NAMESPACES[namespace],
            "numberOfClusters": rng.randrange(2, 9),
            # the churn flips these add-on labels between available and unhealthy
            "predicates": [
                {
                    "requiredClusterSelector": {
                        "labelSelector": {"matchLabels": {rng.choice(ADDON_LABELS): "available"}}
                    }
                }
            ]
            if index % 2
            else [],
            "prioritizerPolicy": {
                "mode": "Additive",
                "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": weight}
                    for name, weight in (("Balance", 1), ("Steady", 1), ("ResourceAllocatableCPU", 2))
                ],
            },
        }
        placement = service.create_placement(
            kind=Placement.Kind.PLACEMENT,
            hub=hub,
            namespace=namespace,
            name=f"soak-{index:03d}",
            spec=spec,
            actor="bench/soak.py",
        )
        ids.append(placement.pk)
    return ids


def login_cookie() -> tuple[str, str]:
    """A session cookie and an API token for a superuser, made directly (no login form to script)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    user = get_user_model().objects.create_superuser("soak", "soak@example.com", "soak")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key or "", Token.objects.create(user=user).key


def wait_until(check, timeout: float, period: float = 2.0) -> tuple[bool, float, object]:  # noqa: ANN001
    started = time.perf_counter()
    while True:
        ok, detail = check()
        if os.environ.get("SOAK_VERBOSE"):
            print(f"  {time.perf_counter() - started:5.1f} s: {detail}", flush=True)
        if ok or time.perf_counter() - started > timeout:
            return ok, time.perf_counter() - started, detail
        time.sleep(period)


def rows_match_hub(demo) -> tuple[bool, str]:  # noqa: ANN001
    from inventory.models import ManagedCluster

    hub_objects = {
        obj["metadata"]["name"]: obj["metadata"]["resourceVersion"]
        for obj in demo.store.list("ManagedCluster").items
    }
    rows = list(ManagedCluster.objects.filter(kind="ManagedCluster").values_list("name", "resource_version"))
    names = Counter(name for name, _ in rows)
    duplicated = [name for name, n in names.items() if n > 1]
    lost = sorted(set(hub_objects) - set(names))
    stale = sorted(name for name, version in rows if hub_objects.get(name) not in (None, version))
    ok = not duplicated and not lost and not stale and len(rows) == len(hub_objects)
    return (
        ok,
        f"{len(rows)} rows / {len(hub_objects)} objects, lost {lost[:5]}, "
        f"duplicated {duplicated[:5]}, stale {stale[:5]}",
    )


def placements_converged() -> tuple[bool, str]:
    from placement import queries, service
    from placement.models import Placement

    behind, duplicated = [], []
    for placement in Placement.objects.select_related("hub").filter(owner="dashboard"):
        pages = list(queries.decision_pages(placement).values_list("decisions", flat=True))
        names = [item["clusterName"] for page in pages for item in page or []]
        if len(names) != len(set(names)):
            duplicated.append(placement.name)
        if sorted(set(names)) != sorted(service.evaluate(placement).selected):
            behind.append(placement.name)
    ok = not behind and not duplicated
    return ok, f"not converged: {behind[:10]} ({len(behind)}), duplicated decisions: {duplicated[:10]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clusters", type=int, default=300)
    parser.add_argument("--placements", type=int, default=60)
    parser.add_argument("--churn-per-minute", type=float, default=300.0)
    parser.add_argument("--port", type=int, default=8097)
    args = parser.parse_args()

    reset_services()
    import django

    django.setup()
    from django.core.management import call_command

    from inventory.demohub import DemoHub

    call_command("migrate", verbosity=0)
    processes = Processes(args.port)
    rng = random.Random(7)
    with DemoHub(clusters=args.clusters, fleet=True, seed=3, bookmark_seconds=1.0) as demo:
        call_command("hubs", "add", "soak", "--server", demo.url, "--fleet", verbosity=0)
        call_command("sync_hubs", "soak", verbosity=0)
        placement_ids = create_placements(args.placements, rng)
        cookie, token = login_cookie()
        for name in processes.commands():
            processes.start(name)
        pages = PageLoop(f"http://127.0.0.1:{args.port}", cookie, token, placement_ids)
        try:
            time.sleep(5)  # gunicorn and the workers start
            page_thread = threading.Thread(target=pages.run, daemon=True)
            page_thread.start()
            demo.churn.start(per_minute=args.churn_per_minute)
            half = args.minutes * 30
            print(
                f"soak: {args.minutes} min of churn at {args.churn_per_minute}/min on {args.clusters} "
                f"clusters, {args.placements} placements",
                flush=True,
            )
            time.sleep(half)
            processes.kill("worker1")
            print(f"soak: worker1 killed at {half:.0f} s; restarting", flush=True)
            time.sleep(2)
            processes.start("worker1")
            time.sleep(half)
            demo.churn.stop()
            print("soak: churn stopped; waiting for convergence", flush=True)
            rows_ok, rows_seconds, rows_detail = wait_until(lambda: rows_match_hub(demo), timeout=60)
            # a reschedule lost with the killed worker is redone by the next change or the 60 s resync
            converged, converge_seconds, converge_detail = wait_until(
                placements_converged, timeout=180, period=5
            )
            pages.stop.set()
            page_thread.join()
        finally:
            processes.stop_all()
    print(f"rows match the hub: {rows_ok} after {rows_seconds:.1f} s ({rows_detail})")
    print(f"placements converged: {converged} after {converge_seconds:.1f} s ({converge_detail})")
    print(
        f"pages: {dict(pages.statuses)}, slowest {pages.slowest * 1000:.0f} ms, "
        f"failures {len(pages.failures)} {pages.failures[:5]}"
    )
    return 0 if rows_ok and converged and not pages.failures else 1


if __name__ == "__main__":
    sys.exit(main())
