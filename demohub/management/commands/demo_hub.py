"""`python manage.py demo_hub [--port 8001] [--clusters 200] [--fleet] [--seed N] [--hostile] ...`.

Serve a synthetic fleet over the Kubernetes REST API until interrupted, so the dashboard (or kubectl)
has a hub to talk to without any real cluster. With `--fleet` it also plays a KubeFleet hub's
controllers for rollouts (work apply, staged update runs, approvals) unless `--no-controllers`. With
`--hostile` it also serves objects a broken or malicious hub could hold, which the dashboard refuses.
"""

import threading
from argparse import ArgumentTypeError
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from demohub import DemoHub
from demohub.hub import own_process_collector


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError as error:
        raise ArgumentTypeError(f"{text!r} is not a number") from error


def _fraction(text: str) -> float:
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _non_negative(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise ArgumentTypeError(f"{text} is negative")
    return value


class Command(BaseCommand):
    help = "Serve a synthetic OCM (and optionally Fleet) hub over the Kubernetes REST API (plain HTTP)."
    requires_system_checks: list[str] = []  # it uses neither the database nor the site's secrets

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8001, help="port to bind (default 8001; 0: any)")
        parser.add_argument("--clusters", type=int, default=200, help="ManagedClusters to seed (default 200)")
        parser.add_argument(
            "--fleet", action="store_true", help="also seed MemberClusters and Fleet placements"
        )
        parser.add_argument(
            "--seed", type=int, default=1, help="random seed; the same seed gives the same fleet"
        )
        parser.add_argument(
            "--churn-per-minute", type=_non_negative, default=0.0, help="random cluster changes per minute"
        )
        parser.add_argument(
            "--fail-rate", type=_fraction, default=0.0, help="fraction of requests answered 500 (or 429)"
        )
        parser.add_argument(
            "--conflict-rate",
            type=_fraction,
            default=0.0,
            help="fraction of conditional updates that meet another writer's change first (409 Conflict)",
        )
        parser.add_argument("--latency-ms", type=int, default=0, help="latency added to every request")
        parser.add_argument(
            "--heartbeat-seconds",
            type=_non_negative,
            default=60.0,
            help="refresh Fleet agent heartbeats this often (default 60; 0: never, they go stale in 5 min)",
        )
        parser.add_argument(
            "--hostile",
            action="store_true",
            help="also serve hostile objects (oversized names, keys and labels, wrong types, an alias bomb)",
        )
        parser.add_argument(
            "--no-controllers",
            action="store_true",
            help="with --fleet: do not simulate the hub's controllers (a passive API server)",
        )
        parser.add_argument(
            "--apply-seconds",
            type=_non_negative,
            default=2.0,
            help="simulated time for a bound binding's resources to be applied (default 2)",
        )
        parser.add_argument(
            "--available-seconds",
            type=_non_negative,
            default=3.0,
            help="simulated time from applied to available (default 3)",
        )
        parser.add_argument(
            "--apply-failure-rate",
            type=_fraction,
            default=0.0,
            help="fraction of binding generations that fail to apply, drawn from the seed (default 0)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["clusters"] < 0 or options["latency_ms"] < 0:
            raise CommandError("--clusters and --latency-ms must not be negative", returncode=2)
        hub = DemoHub(
            clusters=options["clusters"],
            fleet=options["fleet"],
            seed=options["seed"],
            host=options["host"],
            port=options["port"],
            fail_rate=options["fail_rate"],
            conflict_rate=options["conflict_rate"],
            latency_ms=options["latency_ms"],
            churn_per_minute=options["churn_per_minute"],
            heartbeat_seconds=options["heartbeat_seconds"] if options["fleet"] else 0.0,
            controllers=options["fleet"] and not options["no_controllers"],
            apply_seconds=options["apply_seconds"],
            available_seconds=options["available_seconds"],
            apply_failure_rate=options["apply_failure_rate"],
            hostile=options["hostile"],
        )
        own_process_collector()
        try:
            hub.start()
        except OSError as error:
            raise CommandError(
                f"cannot listen on {options['host']}:{options['port']}: {error.strerror}", returncode=2
            ) from error
        seeded = ", ".join(f"{count} {kind}" for kind, count in sorted(hub.seeded.items()))
        self.stdout.write(self.style.SUCCESS(f"Demo hub serving at {hub.url} (seed {options['seed']})"))
        self.stdout.write(f"Seeded: {seeded}")
        if hub.hostile:
            self.stdout.write(f"Hostile objects: {', '.join(hub.hostile)}")
        if hub.controllers is not None:
            applied, available = options["apply_seconds"], options["available_seconds"]
            self.stdout.write(
                "Simulating the hub's controllers: work apply on bindings (applied after "
                f"{applied:g} s, available {available:g} s later), staged update runs and approvals."
            )
        self.stdout.write("Any bearer token is accepted. Press Ctrl-C to stop.")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            self.stdout.write("Stopping the demo hub.")
        finally:
            hub.stop()
