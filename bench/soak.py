"""Soak: the dashboard in real use, people clicking while the watcher follows a churning hub; figures.

    .venv/bin/python bench/soak.py [--stack run|up] [--minutes 10] [--clients 3]
        [--clusters 300] [--placements 60] [--churn-per-minute 300]   # the last three: --stack up only

Two stacks:
- `run` (default): what `make run` starts. SQLite in a throwaway file (var/soak/run/fleetui.sqlite3, WAL
  mode as fleetui/env.py configures it), no broker (tasks run in the process that queues them), the demo
  hub as its own process (`manage.py demo_hub --clusters 200 --fleet --churn-per-minute 12`, heartbeats
  every 60 s), `watch_hubs demo`, `run_periodic`, and the site under `runserver --noreload` with
  DEBUG=1, as users run it (its default threading: one thread per request).
- `up`: the production topology of `make up`: gunicorn (2 workers), two Celery workers (--concurrency 1),
  celery beat (placement resync every 60 s here) and `watch_hubs`, on PostgreSQL and Redis: DATABASE_URL
  and CELERY_BROKER_URL from the environment, else from var/services/env (`scripts/services start`);
  database `fleetui_soak` and Redis db 12 of those servers, both emptied first. The demo hub runs in
  this process (`--clusters`, seed 3, its Fleet controllers and heartbeats on) and churns cluster labels,
  add-on scores and availability at `--churn-per-minute`; at half time worker 1 is killed with SIGKILL
  and started again.

Set-up (both stacks): hub `demo` registered (`hubs add demo --server URL --fleet`) and synced; users
soak-admin (superuser), soak-ops-1.. (staff, admin role on every cluster set of the hub) and soak-viewer
(view role on `global`); a dashboard-owned strategy with an Approval after each of its two stages; a pool
of dashboard-owned External CRPs the clients start runs on; an OCM Placement for what-if and Apply; and
one staged update run (state Run) whose page nobody requests during the soak.

Then `--clients` threads (soak-admin and the ops users), each logged in through the login form with a
session of its own and the CSRF tokens of the pages' forms, over loopback HTTP, loop until the deadline
with short pauses over: the approvals inbox, pressing Approve on a pending request (when none is
pending, starting a run on an unused CRP of the pool through the New run form); the taint editor of a
MemberCluster (adding a NoSchedule taint, saving it to the hub, then removing it); what-if with changed
weights (the API the page's form calls) and its Apply; a new user in the Django admin (soak-admin only);
"Sync now" on the hubs page; and the pages home, clusters, placements, a placement's detail, approvals,
runs. Every process's log goes to var/soak/<stack>/.

Printed at the end: requests in all and per action, server errors (5xx) and requests without an answer
(the first few with path and body), 4xx answers per action, "database is locked" lines in the logs,
reschedules per second (counted in the logs: the `reschedule_placement` tasks that succeeded and the
placements of resync chunks; `run_periodic` logs no line per task, so the few reschedules its sweep of
pending ones runs in the `run` stack are not counted), selection changes (DecisionChange rows), hub
changes the change hook skipped as noise (the DEBUG line of inventory.changes.build, enabled for the
stack's processes by a sitecustomize module in var/soak/<stack>/site/), and whether the unviewed run
advanced (it must have reached its approval gate, and its status must have changed). For `up` also the
convergence checks once the churn stopped: every hub ManagedCluster has exactly one row at the hub's
resourceVersion, no placement has a cluster twice in its decisions, every placement's stored selection
equals what the scheduler decides on the final inventory.

Exits 1 when a target is missed: any 5xx, any request without an answer, any "database is locked",
the unviewed run did not advance, a process of the stack ended by itself, or (for `up`) a convergence
check failed. Every loop stops by itself at
the deadline and every process is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import io
import json
import logging
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BIN = ROOT / ".venv" / "bin"
MANAGE = [str(BIN / "python"), "manage.py"]
SERVICES_ENV = ROOT / "var" / "services" / "env"
HUB = "demo"
LOOPBACK = "127.0.0.1"
# The `up` stack's OCM Placements use the demo hub's sets through the namespaces bound to them.
NAMESPACES = {
    "apps-prod": ["production", "global"],
    "apps-dev": ["development", "staging"],
    "default": ["global"],
}
ADDON_LABELS = [
    f"feature.open-cluster-management.io/addon-{name}"
    for name in ("application-manager", "search-collector", "work-manager")
]
STRATEGY = "soak-two-gates"
STRATEGY_SPEC: dict[str, Any] = {
    "stages": [
        {
            "name": "canary",
            "labelSelector": {"matchLabels": {"environment": "staging"}},
            "afterStageTasks": [{"type": "Approval"}],
        },
        {
            "name": "prod",
            "labelSelector": {"matchLabels": {"environment": "prod"}},
            "afterStageTasks": [{"type": "Approval"}],
        },
    ]
}
UNVIEWED = "soak-unviewed"
# The namespace of the OCM Placement the clients preview and apply weight changes to.
WHATIF_NAMESPACE = "apps-prod"
PASSWORD = "soak-password"
TAINT_KEY = "soak.fleetui.io/client-{}"
# A request may wait this long for its answer; a page slower than that counts as not answered.
REQUEST_TIMEOUT = 60.0
# Pause between two actions of a client, in seconds (a person reading the answer).
PAUSE = (0.5, 2.0)
# Log lines counted at the end (see the module docstring).
LOCKED = "database is locked"
NOISE_LINE = re.compile(r"hub \S+: (\d+) changed objects, (\d+) of them noise")
RESCHEDULED_TASK = re.compile(r"Task placement\.tasks\.reschedule_placement\[[^\]]+\] succeeded")
RESCHEDULED_CHUNK = re.compile(r"chunk of \d+ placements .*'rescheduled': (\d+)")
RUN_FAILED = "The update run failed"
PUSH_CONFLICT = re.compile(r"pushed bindings of .*'conflicts': [1-9]")


# --- the stacks' settings and processes -----------------------------------------------------------------


def _read_env_file(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and not name.startswith("#"):
            values[name.strip()] = value.strip()
    return values


def service_urls() -> tuple[str, str]:
    """The PostgreSQL and Redis servers of the `up` stack: the environment's, else scripts/services'."""
    urls = {name: os.environ.get(name, "") for name in ("DATABASE_URL", "CELERY_BROKER_URL")}
    if not urls["DATABASE_URL"] and SERVICES_ENV.exists():
        urls = {name: _read_env_file(SERVICES_ENV).get(name, "") for name in urls}
    if not urls["DATABASE_URL"].startswith("postgres") or not urls["CELERY_BROKER_URL"].startswith("redis"):
        raise SystemExit(
            "--stack up needs PostgreSQL and Redis: set DATABASE_URL and CELERY_BROKER_URL, or run "
            "scripts/services start (it writes var/services/env)"
        )
    return urls["DATABASE_URL"].rsplit("/", 1)[0], urls["CELERY_BROKER_URL"].rsplit("/", 1)[0]


def stack_env(stack: str, var: Path) -> dict[str, str]:
    """The environment of the soak and of every process of the stack."""
    env = {
        name: value for name, value in os.environ.items() if name not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    # The stack's processes log the change hook's noise counts (a DEBUG line) without the rest of DEBUG.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(var / "site"), os.environ.get("PYTHONPATH", "")]))
    env["LOG_LEVEL"] = "INFO"
    env["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    env["DJANGO_SETTINGS_MODULE"] = "fleetui.settings"
    if stack == "run":
        env["DATABASE_URL"] = f"sqlite:///{var / 'fleetui.sqlite3'}"
        env["DEBUG"] = "1"
        return env
    database, broker = service_urls()
    env |= {
        "DATABASE_URL": f"{database}/fleetui_soak",
        "CELERY_BROKER_URL": f"{broker}/12",
        "SECRET_KEY": "soak-throwaway-secret-key-" + "x" * 40,
        "FLEETUI_CREDENTIALS_KEY": "soak-throwaway-credentials-key",
        "DEBUG": "0",
        "PLACEMENT_RESYNC_SECONDS": "60",
    }
    return env


def prepare_var(stack: str) -> Path:
    """An empty var/soak/<stack>/ (logs, the SQLite file) with the logging sitecustomize in it."""
    var = ROOT / "var" / "soak" / stack
    shutil.rmtree(var, ignore_errors=True)
    (var / "site").mkdir(parents=True)
    (var / "site" / "sitecustomize.py").write_text(
        "# Written by bench/soak.py: the change hook's noise counts (DEBUG) in this soak's logs.\n"
        "import logging\n\n"
        'logging.getLogger("inventory.changes").setLevel(logging.DEBUG)\n'
    )
    return var


def reset_services(env: dict[str, str]) -> None:
    """An empty soak database and Redis db, so the figures are this run's only."""
    import dj_database_url
    import psycopg
    import redis
    from psycopg import sql

    config = dj_database_url.parse(env["DATABASE_URL"])
    params: dict[str, Any] = {
        "host": config["HOST"],
        "port": config["PORT"] or 5432,
        "user": config["USER"] or "postgres",
    }
    if config["PASSWORD"]:
        params["password"] = config["PASSWORD"]
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(config["NAME"]))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
    redis.Redis.from_url(env["CELERY_BROKER_URL"]).flushdb()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


class Processes:
    """The stack's processes, each in a process group of its own, logging to var/soak/<stack>/NAME.log."""

    def __init__(self, var: Path, env: dict[str, str]) -> None:
        self.var, self.env = var, env
        self.commands: dict[str, list[str]] = {}
        self.running: dict[str, subprocess.Popen[bytes]] = {}
        # each log's size when the stack was told to stop
        self.sizes: dict[Path, int] = {}

    def start(self, name: str, command: list[str] | None = None) -> None:
        if command is not None:
            self.commands[name] = command
        log = (self.var / f"{name}.log").open("ab")
        # its own session: a kill takes a worker's pool children with it, and Ctrl-C in the terminal
        # reaches only this script, which then stops them in order
        self.running[name] = subprocess.Popen(
            self.commands[name],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def kill(self, name: str) -> None:
        """SIGKILL the process and its children, as when a worker's machine or container dies."""
        _signal_group(self.running[name], signal.SIGKILL)
        self.running[name].wait()

    def alive(self) -> list[str]:
        return [name for name, process in self.running.items() if process.poll() is None]

    def stop_all(self, last: tuple[str, ...] = ("demohub",)) -> None:
        """SIGTERM, and SIGKILL after 20 s; the hub last, so that the watcher does not log a lost hub."""
        # the figures end here: connections cut by the shutdown are not findings
        self.sizes = {path: path.stat().st_size for path in self.var.glob("*.log")}
        first = [process for name, process in self.running.items() if name not in last]
        then = [process for name, process in self.running.items() if name in last]
        for group in (first, then):
            for process in group:
                _signal_group(process, signal.SIGTERM)
            for process in group:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    _signal_group(process, signal.SIGKILL)
                    process.wait()

    def logs(self) -> Iterator[tuple[str, str]]:
        """(process name, line) of every log."""
        for path in sorted(self.var.glob("*.log")):
            with path.open("rb") as log:
                text = log.read(self.sizes.get(path, -1)).decode(errors="replace")
            for line in text.splitlines():
                yield path.stem, line


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def wait_for(url: str, seconds: float, processes: Processes) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(url, timeout=2).read()
            return
        time.sleep(0.3)
    raise SystemExit(f"{url} did not answer within {seconds:.0f} s (logs in {processes.var})")


# --- set-up: the hub, users, the rollout pieces and placements -------------------------------------------


@dataclass
class Fixtures:
    hub_pk: int
    users: list[str]
    whatif_pk: int
    placement_pks: list[int]
    # MemberCluster rows, one per client, whose taints the clients edit
    taint_clusters: list[int]
    # names of the External CRPs a client may start a run on, each used once
    crp_pool: list[str]
    unviewed_pk: int


def crp_spec(clusters: list[str]) -> dict[str, Any]:
    return {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "soak"}],
        "policy": {"placementType": "PickFixed", "clusterNames": clusters},
        "strategy": {"type": "External"},
    }


def healthy_members(environment: str) -> list[str]:
    """Names of the hub's MemberClusters in this environment (an OCM label) that are available now."""
    from inventory.models import ManagedCluster

    ocm = ManagedCluster.objects.filter(
        hub__name=HUB, kind="ManagedCluster", labels__environment=environment, availability="Available"
    ).values_list("name", flat=True)
    members = ManagedCluster.objects.filter(hub__name=HUB, kind="MemberCluster", name__in=list(ocm))
    return sorted(members.values_list("name", flat=True))


def create_users(clients: int) -> list[str]:
    from django.contrib.auth import get_user_model

    from inventory.models import ClusterSetRole, Hub, ManagedClusterSet, NamespaceRole

    users = get_user_model().objects
    users.create_superuser("soak-admin", "soak-admin@example.com", PASSWORD)
    names = ["soak-admin"]
    sets = list(ManagedClusterSet.objects.filter(hub__name=HUB))
    for index in range(1, max(clients, 3)):
        # staff for "Sync now"; the set roles (not Django permissions) for everything else
        user = users.create_user(f"soak-ops-{index}", password=PASSWORD, is_staff=True)
        for cluster_set in sets:
            ClusterSetRole.objects.create(cluster_set=cluster_set, user=user, role=ClusterSetRole.Role.ADMIN)
        # an OCM Placement is changed (what-if Apply) with the edit role in its namespace, not a set role
        NamespaceRole.objects.create(
            hub=Hub.objects.get(name=HUB), namespace=WHATIF_NAMESPACE, user=user, role=NamespaceRole.Role.EDIT
        )
        names.append(user.username)
    viewer = users.create_user("soak-viewer", password=PASSWORD)
    ClusterSetRole.objects.create(
        cluster_set=ManagedClusterSet.objects.get(hub__name=HUB, name="global"),
        user=viewer,
        role=ClusterSetRole.Role.VIEW,
    )
    return names[:clients]


def create_rollouts(pool_size: int) -> tuple[list[str], int]:
    """The strategy, a pool of External CRPs (two staging and two prod clusters each) and the run nobody
    views, started last so that it cannot reach its gate before the soak begins."""
    from inventory.models import Hub
    from placement import service
    from placement.models import Placement
    from placement.rollouts import runs as rollouts

    hub = Hub.objects.get(name=HUB)
    actor = "bench/soak.py"
    rollouts.create_strategy(hub=hub, name=STRATEGY, spec=STRATEGY_SPEC, actor=actor)
    staging, prod = healthy_members("staging"), healthy_members("prod")
    if len(staging) < 2 or len(prod) < 2:
        raise SystemExit(
            f"the hub has too few available staging ({len(staging)}) or prod ({len(prod)}) members"
        )
    pool = []
    for index in range(pool_size + 1):
        clusters = [staging[(2 * index + k) % len(staging)] for k in range(2)]
        clusters += [prod[(2 * index + k) % len(prod)] for k in range(2)]
        name = UNVIEWED if index == pool_size else f"soak-crp-{index:02d}"
        service.create_placement(
            kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
            hub=hub,
            namespace="",
            name=name,
            spec=crp_spec(clusters),
            actor=actor,
        )
        pool.append(name)
    spec = {"placementName": UNVIEWED, "stagedRolloutStrategyName": STRATEGY, "state": "Run"}
    run = rollouts.create_run(hub=hub, name=f"{UNVIEWED}-1", spec=spec, actor=actor)
    return pool[:-1], run.pk


def create_placements(count: int, rng: random.Random) -> list[int]:
    """The `up` stack's dashboard-owned OCM Placements, half of them on add-on labels the churn flips."""
    from inventory.models import Hub
    from placement import service
    from placement.models import Placement

    hub = Hub.objects.get(name=HUB)
    ids = []
    for index in range(count):
        namespace = rng.choice(sorted(NAMESPACES))
        predicates = [
            {
                "requiredClusterSelector": {
                    "labelSelector": {"matchLabels": {rng.choice(ADDON_LABELS): "available"}}
                }
            }
        ]
        spec = {
            "clusterSets": NAMESPACES[namespace],
            "numberOfClusters": rng.randrange(2, 9),
            "predicates": predicates if index % 2 else [],
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


def create_whatif_placement() -> int:
    from inventory.models import Hub
    from placement import service
    from placement.models import Placement

    spec = {
        "clusterSets": ["global"],
        "numberOfClusters": 5,
        "prioritizerPolicy": {
            "mode": "Additive",
            "configurations": [
                {"scoreCoordinate": {"type": "BuiltIn", "builtIn": name}, "weight": 1}
                for name in ("Balance", "Steady", "ResourceAllocatableCPU", "ResourceAllocatableMemory")
            ],
        },
    }
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=Hub.objects.get(name=HUB),
        namespace=WHATIF_NAMESPACE,
        name="soak-whatif",
        spec=spec,
        actor="bench/soak.py",
    )
    return placement.pk


def set_up(args: argparse.Namespace, hub_url: str, rng: random.Random) -> Fixtures:
    from django.core.management import call_command
    from django.db import connections

    from inventory.models import Hub, ManagedCluster
    from placement.models import Placement

    quiet = io.StringIO()
    call_command("hubs", "add", HUB, "--server", hub_url, "--fleet", stdout=quiet)
    call_command("sync_hubs", HUB, stdout=quiet)
    users = create_users(args.clients)
    placements = create_placements(args.placements, rng) if args.stack == "up" else []
    whatif = create_whatif_placement()
    dev = healthy_members("dev")
    taint_clusters = [
        ManagedCluster.objects.get(hub__name=HUB, kind="MemberCluster", name=name).pk
        for name in dev[: args.clients]
    ]
    # enough CRPs for a run every 30 s of the soak, which is more than three people approve
    pool, unviewed = create_rollouts(pool_size=max(4, int(args.minutes * 2)))
    # the hub's own placements too (read-only mirrors); never the unviewed run's CRP, whose page lists it
    mirrors = Placement.objects.filter(hub__name=HUB, owner="hub").values_list("pk", flat=True)
    fixtures = Fixtures(
        hub_pk=Hub.objects.get(name=HUB).pk,
        users=users,
        whatif_pk=whatif,
        placement_pks=[whatif, *placements, *mirrors],
        taint_clusters=taint_clusters,
        crp_pool=pool,
        unviewed_pk=unviewed,
    )
    # hold no connection (on SQLite no snapshot of the WAL) while the stack runs
    connections.close_all()
    return fixtures


# --- the unviewed run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunState:
    status: str
    approvals: tuple[tuple[str, str], ...]
    stages: tuple[tuple[str, tuple[str, ...]], ...]

    def describe(self) -> str:
        stages = "; ".join(f"{name}: {', '.join(conds) or '-'}" for name, conds in self.stages) or "no stages"
        approvals = ", ".join(f"{name} {state}" for name, state in self.approvals) or "none"
        return f"stages [{stages}], approval requests [{approvals}]"


def run_state(pk: int) -> RunState:
    from django.db import connections

    from placement.models import ApprovalRequest, StagedUpdateRun

    run = StagedUpdateRun.objects.get(pk=pk)
    stages = tuple(
        (
            stage.get("stageName", "?"),
            tuple(c["type"] for c in stage.get("conditions") or () if c.get("status") == "True"),
        )
        for stage in (run.status or {}).get("stagesStatus") or ()
    )
    approvals = tuple(ApprovalRequest.objects.filter(run=run).order_by("name").values_list("name", "state"))
    state = RunState(json.dumps(run.status, sort_keys=True), approvals, stages)
    connections.close_all()
    return state


# --- clients -------------------------------------------------------------------------------------------


class FormParser(HTMLParser):
    """The forms of a page: each form's attributes and its fields as the browser would submit them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict[str, Any]] = []
        self._form: dict[str, Any] | None = None
        self._select: dict[str, Any] | None = None
        self._textarea: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._form = {"attrs": a, "fields": []}
            self.forms.append(self._form)
        elif self._form is None:
            return
        elif tag == "input":
            kind = a.get("type", "text")
            if not a.get("name") or kind in ("submit", "button", "image", "file", "reset"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            default = "on" if kind in ("checkbox", "radio") else ""
            self._form["fields"].append((a["name"], a.get("value", default)))
        elif tag == "select":
            self._select = {"name": a.get("name", ""), "selected": None, "first": None}
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            if self._select["first"] is None:
                self._select["first"] = value
            if "selected" in a:
                self._select["selected"] = value
        elif tag == "textarea":
            self._textarea = [a.get("name", ""), ""]

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._textarea[1] += data

    def handle_endtag(self, tag: str) -> None:
        if self._form is None:
            return
        if tag == "select" and self._select is not None:
            chosen = (
                self._select["selected"] if self._select["selected"] is not None else self._select["first"]
            )
            if self._select["name"]:
                self._form["fields"].append((self._select["name"], chosen or ""))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            if self._textarea[0]:
                self._form["fields"].append((self._textarea[0], self._textarea[1].lstrip("\n")))
            self._textarea = None
        elif tag == "form":
            self._form = None


def find_form(html: str, test: Callable[[dict[str, Any]], bool]) -> dict[str, str]:
    """The fields of the first form of the page that passes `test` (its attributes and fields)."""
    parser = FormParser()
    parser.feed(html)
    for form in parser.forms:
        if test(form):
            return dict(form["fields"])
    raise LookupError("no such form on the page")


def _has_field(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda form: any(field_name == name for field_name, _ in form["fields"])


def _action(path: str) -> Callable[[dict[str, Any]], bool]:
    return lambda form: form["attrs"].get("action", "").split("?")[0] == path


@dataclass
class Stats:
    """What every client saw, shared between the client threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    client_errors: Counter[str] = field(default_factory=Counter)
    # the first answer of each kind of 4xx, to tell a refusal the soak provoked from a broken form
    client_error_samples: dict[str, str] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    no_answer: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    done: Counter[str] = field(default_factory=Counter)
    slowest: dict[str, float] = field(default_factory=dict)

    def record(self, action: str, method: str, path: str, status: int, body: str, seconds: float) -> None:
        with self.lock:
            self.requests[action] += 1
            self.statuses[status] += 1
            self.slowest[action] = max(self.slowest.get(action, 0.0), seconds)
            where = f"{action}: {method} {path}"
            if status == 0:
                self.no_answer.append(f"{where} after {seconds:.1f} s: {body}")
            elif status >= 500:
                self.server_errors.append(f"{where} -> {status} after {seconds:.1f} s: {_excerpt(body)}")
            elif status >= 400:
                self.client_errors[f"{action} {status}"] += 1
                self.client_error_samples.setdefault(
                    f"{action} {status}", f"{method} {path}: {_excerpt(body)}"
                )


def _excerpt(body: str, length: int = 600) -> str:
    """The useful part of an error page: Django's exception summary when DEBUG shows it, else the text."""
    found = re.search(r'<textarea id="traceback_area"[^>]*>(.*?)</textarea>', body, re.S)
    text = found.group(1) if found else body
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    if found:
        text = text[-length:]  # a traceback's last lines name the exception
    return text[:length]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is the answer itself (a form's success), not something to follow."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Answer:
    status: int
    body: str


class Browser:
    """A logged-in user's session over loopback HTTP: cookies, the CSRF token of the page's form."""

    def __init__(self, base: str, stats: Stats, deadline: float) -> None:
        if urllib.parse.urlsplit(base).hostname != LOOPBACK:
            raise ValueError("the soak sends traffic to 127.0.0.1 only")
        self.base, self.stats, self.deadline = base, stats, deadline
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirects()
        )

    def request(
        self,
        action: str,
        method: str,
        path: str,
        *,
        form: dict[str, str] | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        data, all_headers = None, {"Referer": self.base + path, **(headers or {})}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            data = json.dumps(json_body).encode()
            all_headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, headers=all_headers, method=method)
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=REQUEST_TIMEOUT) as response:
                answer = Answer(response.status, response.read().decode(errors="replace"))
        except urllib.error.HTTPError as error:
            answer = Answer(error.code, error.read().decode(errors="replace"))
        except OSError as error:
            answer = Answer(0, repr(error))
        self.stats.record(action, method, path, answer.status, answer.body, time.perf_counter() - started)
        return answer

    def get(self, action: str, path: str, **headers: str) -> Answer:
        return self.request(action, "GET", path, headers=headers)

    def login(self, username: str) -> None:
        page = self.get("login", "/accounts/login/")
        fields = find_form(page.body, _has_field("csrfmiddlewaretoken"))
        fields |= {"username": username, "password": PASSWORD, "next": "/"}
        answer = self.request("login", "POST", "/accounts/login/", form=fields)
        if answer.status != 302:
            raise RuntimeError(f"{username} could not log in: HTTP {answer.status}")


class Client:
    """One person using the dashboard: a loop over their actions with short pauses until the deadline."""

    def __init__(
        self,
        number: int,
        username: str,
        base: str,
        fixtures: Fixtures,
        pool: list[str],
        stats: Stats,
        deadline: float,
    ) -> None:
        self.number, self.username = number, username
        self.fixtures, self.pool, self.stats, self.deadline = fixtures, pool, stats, deadline
        self.browser = Browser(base, stats, deadline)
        self.rng = random.Random(number)
        self.stop = threading.Event()
        self.runs_started = 0

    def actions(self) -> list[tuple[str, Callable[[], None]]]:
        found = [
            ("approve", self.approve),
            ("taints", self.taints),
            ("what-if", self.whatif),
            ("sync now", self.sync_now),
            ("pages", self.pages),
        ]
        if self.username == "soak-admin":
            found.append(("admin user", self.admin_user))
        return found

    def run(self) -> None:
        try:
            self.browser.login(self.username)
        except Exception as exc:  # noqa: BLE001 - a client that cannot log in is a finding, not a crash
            self._failed("login", exc)
            return
        actions = self.actions()
        while not self._over():
            self.rng.shuffle(actions)
            for name, action in actions:
                if self._over():
                    return
                try:
                    action()
                except Exception as exc:  # noqa: BLE001 - the page was not what a person could use
                    self._failed(name, exc)
                self.stop.wait(self.rng.uniform(*PAUSE))

    def _over(self) -> bool:
        return self.stop.is_set() or time.monotonic() >= self.deadline

    def _failed(self, action: str, exc: Exception) -> None:
        with self.stats.lock:
            self.stats.exceptions.append(f"{self.username} {action}: {type(exc).__name__}: {exc}")

    def _done(self, what: str) -> None:
        with self.stats.lock:
            self.stats.done[what] += 1

    # the actions

    def pages(self) -> None:
        paths = ["/", "/clusters/", "/placements/", "/approvals/", "/runs/"]
        paths.append(f"/placements/{self.rng.choice(self.fixtures.placement_pks)}/")
        for path in paths:
            if self._over():
                return
            self.browser.get("pages", path)

    def approve(self) -> None:
        """Approve one pending request of the inbox that this user may approve (never the unviewed run's:
        it must reach its gate on its own, and nobody looks at it); with none, start a run."""
        inbox = self.browser.get("approve", "/approvals/")
        if inbox.status != 200:
            return
        pending = []
        for match in re.finditer(r'<tr id="approval-(\d+)"(.*?)</tr>', inbox.body, re.S):
            pk, row = match.group(1), match.group(2)
            if f"/approvals/{pk}/approve/" in row and f">{UNVIEWED}-" not in row:
                pending.append(pk)
        if not pending:
            self.start_run()
            return
        pk = self.rng.choice(pending)
        path = f"/approvals/{pk}/approve/"
        fields = find_form(inbox.body, _action(path))
        answer = self.browser.request("approve", "POST", path, form=fields)
        if answer.status == 302:
            self._done("approvals approved")

    def start_run(self) -> None:
        """The New run form on an unused CRP of the pool, state Run."""
        with self.stats.lock:
            crp = self.pool.pop() if self.pool else None
        if crp is None:
            return
        page = self.browser.get("new run", "/runs/new/")
        fields = find_form(page.body, _has_field("placement_name"))
        fields |= {
            "name": f"{crp}-run",
            "placement_name": crp,
            "strategy_name": STRATEGY,
            "resource_snapshot_index": "",
            "state": "Run",
            "manifest": "",
        }
        answer = self.browser.request("new run", "POST", "/runs/new/", form=fields)
        if answer.status == 302:
            self._done("runs started")

    def taints(self) -> None:
        """Add a NoSchedule taint to this client's MemberCluster and save it to the hub, then remove it."""
        path = f"/clusters/{self.fixtures.taint_clusters[self.number % len(self.fixtures.taint_clusters)]}/"
        key = TAINT_KEY.format(self.number)
        for adding in (True, False):
            page = self.browser.get("taints", path)
            if page.status != 200:
                return
            fields = find_form(page.body, lambda form: form["attrs"].get("id") == "taint-editor")
            rows = int(fields["taints-TOTAL_FORMS"])
            ours = [i for i in range(rows) if fields.get(f"taints-{i}-key") == key]
            if adding and not ours:
                blank = rows - 1  # the editor's extra row
                fields |= {
                    f"taints-{blank}-key": key,
                    f"taints-{blank}-value": "soak",
                    f"taints-{blank}-effect": "NoSchedule",
                }
            elif not adding and ours:
                fields |= {f"taints-{i}-DELETE": "on" for i in ours}
            else:
                continue
            fields["action"] = "save"
            answer = self.browser.request(
                "taints", "POST", f"{path}taints/", form=fields, headers={"HX-Request": "true"}
            )
            if answer.status == 200:
                self._done("taints added" if adding else "taints removed")
            if self._over():
                return

    def whatif(self) -> None:
        """Changed weights through the what-if API (as the page's form sends them), then Apply."""
        pk = self.fixtures.whatif_pk
        page = self.browser.get("what-if", f"/placements/{pk}/")
        if page.status != 200:
            return
        token = find_form(page.body, lambda form: form["attrs"].get("id") == "whatif-form")[
            "csrfmiddlewaretoken"
        ]
        names = ("Balance", "Steady", "ResourceAllocatableCPU", "ResourceAllocatableMemory")
        override = {
            "prioritizerPolicy": {
                "mode": "Additive",
                "configurations": [
                    {
                        "scoreCoordinate": {"type": "BuiltIn", "builtIn": name},
                        "weight": self.rng.randint(0, 10),
                    }
                    for name in names
                ],
            }
        }
        preview = self.browser.request(
            "what-if",
            "POST",
            f"/api/placements/{pk}/whatif/",
            json_body=override,
            headers={"X-CSRFToken": token, "Accept": "application/json"},
        )
        if preview.status != 200:
            return
        spec = json.loads(preview.body)["spec"]
        answer = self.browser.request(
            "what-if",
            "POST",
            f"/placements/{pk}/whatif/apply/",
            form={"spec": json.dumps(spec)},
            headers={"X-CSRFToken": token, "HX-Request": "true"},
        )
        if answer.status == 200:
            self._done("what-if applied")

    def sync_now(self) -> None:
        page = self.browser.get("sync now", "/hubs/")
        path = f"/hubs/{self.fixtures.hub_pk}/sync/"
        fields = find_form(page.body, _action(path))
        answer = self.browser.request("sync now", "POST", path, form=fields, headers={"HX-Request": "true"})
        if answer.status == 200:
            self._done("syncs requested")

    def admin_user(self) -> None:
        page = self.browser.get("admin user", "/admin/auth/user/add/")
        fields = find_form(page.body, _has_field("password1"))
        name = f"soak-added-{self.number}-{int(time.time() * 1000)}"
        fields |= {"username": name, "usable_password": "true", "password1": PASSWORD, "password2": PASSWORD}
        fields["_save"] = "Save"
        answer = self.browser.request("admin user", "POST", "/admin/auth/user/add/", form=fields)
        if answer.status == 302:
            self._done("users added")


# --- figures -------------------------------------------------------------------------------------------


@dataclass
class LogFigures:
    locked: list[str] = field(default_factory=list)
    noise: int = 0
    inputs: int = 0
    rescheduled: int = 0
    # "process: the exception line" of every traceback in the logs
    tracebacks: list[str] = field(default_factory=list)
    # a dashboard-owned run's step that failed the run, and binding pushes the hub refused with 409
    run_failures: list[str] = field(default_factory=list)
    push_conflicts: list[str] = field(default_factory=list)


def read_logs(processes: Processes) -> LogFigures:
    figures = LogFigures()
    in_traceback = ""
    for name, line in processes.logs():
        if (
            in_traceback
            and line.strip()
            and not line.startswith((" ", "\t", "Traceback", "During", "The above"))
        ):
            figures.tracebacks.append(f"{name}: {line.strip()[:300]}")
            in_traceback = ""
        if line.startswith("Traceback"):
            in_traceback = name
        if LOCKED in line:
            figures.locked.append(f"{name}: {line.strip()[:300]}")
        if RUN_FAILED in line:
            figures.run_failures.append(f"{name}: {line.strip()[:500]}")
        if PUSH_CONFLICT.search(line):
            figures.push_conflicts.append(f"{name}: {line.strip()[:200]}")
        if found := NOISE_LINE.search(line):
            figures.inputs += int(found.group(1))
            figures.noise += int(found.group(2))
        if RESCHEDULED_TASK.search(line):
            figures.rescheduled += 1
        elif found := RESCHEDULED_CHUNK.search(line):
            figures.rescheduled += int(found.group(1))
    return figures


def run_outcomes() -> tuple[Counter[str], list[str]]:
    """Dashboard-owned runs by where they stand (their last condition that is true, or Progressing's
    reason), and the names of those that failed."""
    from django.db import connections

    from placement.models import Owner, StagedUpdateRun

    outcomes: Counter[str] = Counter()
    failed = []
    for name, status in StagedUpdateRun.objects.filter(owner=Owner.DASHBOARD).values_list("name", "status"):
        conditions = {c.get("type"): c for c in (status or {}).get("conditions") or ()}
        reason = (conditions.get("Succeeded") or conditions.get("Progressing") or {}).get("reason", "")
        outcomes[reason or "not initialized"] += 1
        if "Failed" in reason:
            failed.append(name)
    connections.close_all()
    return outcomes, failed


def selection_changes(since: datetime) -> int:
    from django.db import connections

    from placement.models import DecisionChange

    count = DecisionChange.objects.filter(at__gte=since).count()
    connections.close_all()
    return count


# --- the `up` stack's convergence checks (the demo hub in this process) -----------------------------------


def wait_until(
    check: Callable[[], tuple[bool, str]], timeout: float, period: float = 2.0
) -> tuple[bool, float, str]:
    started = time.perf_counter()
    while True:
        ok, detail = check()
        if os.environ.get("SOAK_VERBOSE"):
            print(f"  {time.perf_counter() - started:5.1f} s: {detail}", flush=True)
        if ok or time.perf_counter() - started > timeout:
            return ok, time.perf_counter() - started, detail
        time.sleep(period)


def rows_match_hub(demo: Any) -> tuple[bool, str]:
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
    for placement in Placement.objects.select_related("hub").filter(
        owner="dashboard", kind=Placement.Kind.PLACEMENT
    ):
        pages = list(queries.decision_pages(placement).values_list("decisions", flat=True))
        names = [item["clusterName"] for page in pages for item in page or []]
        if len(names) != len(set(names)):
            duplicated.append(placement.name)
        if sorted(set(names)) != sorted(service.evaluate(placement).selected):
            behind.append(placement.name)
    ok = not behind and not duplicated
    return ok, f"not converged: {behind[:10]} ({len(behind)}), duplicated decisions: {duplicated[:10]}"


# --- the soak ------------------------------------------------------------------------------------------


def stack_commands(stack: str, port: int, var: Path) -> dict[str, list[str]]:
    if stack == "run":
        return {
            "watch": [*MANAGE, "watch_hubs", HUB],
            "periodic": [*MANAGE, "run_periodic"],
            "web": [*MANAGE, "runserver", f"{LOOPBACK}:{port}", "--noreload"],
        }
    worker = [str(BIN / "celery"), "-A", "fleetui", "worker", "--concurrency", "1", "--loglevel", "INFO"]
    return {
        "web": [str(BIN / "gunicorn"), "fleetui.wsgi", "--bind", f"{LOOPBACK}:{port}", "--workers", "2"],
        "worker1": [*worker, "--hostname", "soak1@%h"],
        "worker2": [*worker, "--hostname", "soak2@%h"],
        "beat": [str(BIN / "celery"), "-A", "fleetui", "beat", "--schedule", str(var / "beat-schedule")],
        "watch": [*MANAGE, "watch_hubs"],
    }


@dataclass
class Outcome:
    seconds: float = 0.0
    before: RunState | None = None
    after: RunState | None = None
    changes: int = 0
    runs: Counter[str] = field(default_factory=Counter)
    failed_runs: list[str] = field(default_factory=list)
    checks: list[tuple[str, bool, str]] = field(default_factory=list)


def drive(
    args: argparse.Namespace,
    processes: Processes,
    fixtures: Fixtures,
    port: int,
    stats: Stats,
    outcome: Outcome,
) -> list[Client]:
    """Start the stack, let the clients work until the deadline, and stop them; answers the clients."""
    from django.utils import timezone

    for name, command in stack_commands(args.stack, port, processes.var).items():
        processes.start(name, command)
    base = f"http://{LOOPBACK}:{port}"
    wait_for(f"{base}/healthz", 90, processes)
    outcome.before = run_state(fixtures.unviewed_pk)
    started, since = time.monotonic(), timezone.now()
    deadline = started + args.minutes * 60
    pool = list(fixtures.crp_pool)
    clients = [
        Client(number, username, base, fixtures, pool, stats, deadline)
        for number, username in enumerate(fixtures.users)
    ]
    threads = [threading.Thread(target=c.run, name=f"client {c.username}", daemon=True) for c in clients]
    print(
        f"soak: stack {args.stack}, {len(clients)} clients for {args.minutes:g} min at {base} "
        f"(logs in {processes.var})",
        flush=True,
    )
    try:
        for thread in threads:
            thread.start()
        killed = args.stack != "up"
        while time.monotonic() < deadline:
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
            if not killed and time.monotonic() - started >= args.minutes * 30:
                processes.kill("worker1")
                print(f"soak: worker1 killed at {time.monotonic() - started:.0f} s; restarting", flush=True)
                time.sleep(2)
                processes.start("worker1")
                killed = True
            if missing := set(processes.commands) - set(processes.alive()):
                print(f"soak: processes ended by themselves: {sorted(missing)}", flush=True)
                outcome.checks.append(("processes stayed up", False, f"ended: {sorted(missing)}"))
                break
    finally:
        for client in clients:
            client.stop.set()
        for thread in threads:
            thread.join(REQUEST_TIMEOUT + 5)
    outcome.seconds = time.monotonic() - started
    outcome.after = run_state(fixtures.unviewed_pk)
    outcome.changes = selection_changes(since)
    return clients


def print_listed(title: str, lines: list[str], shown: int = 5) -> None:
    """A count, then the first few of what it counts."""
    print(f"{title}: {len(lines)}")
    for line in lines[:shown]:
        print(f"  {line}")


def report(args: argparse.Namespace, stats: Stats, logs: LogFigures, outcome: Outcome) -> bool:
    seconds = max(outcome.seconds, 1.0)
    total = sum(stats.requests.values())
    print(f"\n=== soak, stack {args.stack}: {args.clients} clients for {outcome.seconds:.0f} s ===")
    print(f"requests: {total} ({total / seconds:.1f}/s); statuses {dict(sorted(stats.statuses.items()))}")
    for action, count in sorted(stats.requests.items()):
        print(f"  {action:12} {count:6d} requests, slowest {stats.slowest.get(action, 0.0) * 1000:7.0f} ms")
    print(f"done: {dict(sorted(stats.done.items()))}")
    print(f"4xx answers: {dict(sorted(stats.client_errors.items())) or 'none'}")
    for kind, sample in sorted(stats.client_error_samples.items()):
        print(f"  first {kind}: {sample[:300]}")
    print_listed("5xx answers", stats.server_errors)
    print_listed("requests without an answer", stats.no_answer)
    print_listed("client-side surprises (a page without the expected form, ...)", stats.exceptions)
    print_listed(f'"{LOCKED}" in the logs', logs.locked)
    print(f"tracebacks in the logs: {len(logs.tracebacks)}")
    for line, count in Counter(logs.tracebacks).most_common(5):
        print(f"  {count} x {line}")
    print(
        f"reschedules: {logs.rescheduled} ({logs.rescheduled / seconds:.2f}/s); "
        f"selection changes (DecisionChange rows): {outcome.changes}"
    )
    share = f"{100 * logs.noise / logs.inputs:.0f}%" if logs.inputs else "-"
    print(f"hub changes skipped as noise: {logs.noise} of {logs.inputs} changed scheduler inputs ({share})")
    runs = ", ".join(f"{count} {reason}" for reason, count in sorted(outcome.runs.items()))
    print(f"dashboard-owned runs: {runs}; failed: {outcome.failed_runs or 'none'} (not a target)")
    for line in logs.run_failures[:3]:
        print(f"  {line}")
    print(f"binding pushes with a 409 conflict: {len(logs.push_conflicts)}")
    for line in logs.push_conflicts[:3]:
        print(f"  {line}")
    before, after = outcome.before, outcome.after
    gate = bool(after and after.approvals)
    advanced = bool(before and after and gate and after.status != before.status)
    print(f"unviewed run {UNVIEWED}-1 before: {before.describe() if before else '?'}")
    print(f"unviewed run {UNVIEWED}-1 after:  {after.describe() if after else '?'}")
    print(f"unviewed run advanced to its approval gate or later: {advanced}")
    for name, ok, detail in outcome.checks:
        print(f"{name}: {ok} ({detail})")
    return not (
        stats.server_errors
        or stats.no_answer
        or logs.locked
        or not advanced
        or any(not ok for _, ok, _ in outcome.checks)
    )


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main() -> int:
    # SIGTERM as Ctrl-C: the finally clauses stop the clients and every process of the stack
    signal.signal(signal.SIGTERM, _interrupted)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=("run", "up"), default="run")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=300, help="--stack up: the demo hub's clusters")
    parser.add_argument("--placements", type=int, default=60, help="--stack up: OCM Placements to create")
    parser.add_argument(
        "--churn-per-minute", type=float, default=300.0, help="--stack up: hub changes a minute"
    )
    args = parser.parse_args()
    if args.clients < 1:
        parser.error("--clients must be at least 1")

    var = prepare_var(args.stack)
    env = stack_env(args.stack, var)
    if args.stack == "up":
        reset_services(env)
    os.environ.clear()
    os.environ.update(env)
    import django

    django.setup()
    # the set-up's own INFO lines (each placement created, each step) would bury the figures
    logging.getLogger().setLevel(logging.WARNING)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    processes = Processes(var, env)
    stats, outcome = Stats(), Outcome()
    demo = None
    ok = False
    try:
        if args.stack == "run":
            hub_port = free_port()
            processes.start(
                "demohub",
                [
                    *MANAGE,
                    "demo_hub",
                    "--port",
                    str(hub_port),
                    "--clusters",
                    "200",
                    "--fleet",
                    "--churn-per-minute",
                    "12",
                ],
            )
            hub_url = f"http://{LOOPBACK}:{hub_port}"
            wait_for(f"{hub_url}/readyz", 60, processes)
        else:
            from demohub import DemoHub

            demo = DemoHub(
                clusters=args.clusters,
                fleet=True,
                seed=3,
                bookmark_seconds=1.0,
                controllers=True,
                heartbeat_seconds=60.0,
            )
            demo.start()
            hub_url = demo.url
        fixtures = set_up(args, hub_url, random.Random(7))
        if demo is not None:
            demo.churn.start(per_minute=args.churn_per_minute)
        drive(args, processes, fixtures, free_port(), stats, outcome)
        if demo is not None:
            demo.churn.stop()
            print("soak: churn stopped; waiting for convergence", flush=True)
            ok_rows, rows_seconds, rows_detail = wait_until(lambda: rows_match_hub(demo), timeout=60)
            outcome.checks.append(
                ("rows match the hub", ok_rows, f"after {rows_seconds:.1f} s: {rows_detail}")
            )
            # a reschedule lost with the killed worker is redone by the next change or the 60 s resync
            converged, seconds, detail = wait_until(placements_converged, timeout=180, period=5)
            outcome.checks.append(("placements converged", converged, f"after {seconds:.1f} s: {detail}"))
        # last, so that a run failing while the `up` stack converges is counted with the log line it wrote
        outcome.runs, outcome.failed_runs = run_outcomes()
        ok = True
    finally:
        processes.stop_all()
        if demo is not None:
            demo.stop()
    passed = report(args, stats, read_logs(processes), outcome) and ok
    print("soak: all targets met" if passed else "soak: a target was missed")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
