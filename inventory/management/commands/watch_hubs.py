"""`python manage.py watch_hubs [NAME ...]`: apply hub changes to the database as they happen.

Without names it watches every hub and keeps looking for hubs added later (the long-running watcher
process of `make up` and docker compose starts before anyone has registered a hub)."""

import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.management.commands.hubs import named_hubs
from inventory.models import Hub
from inventory.watch import HubWatcher, watch_hubs

# Seconds a watcher thread may take to finish its current event after SIGINT/SIGTERM.
STOP_GRACE = 5.0
# Seconds between looks for newly registered hubs when watching all of them.
NEW_HUB_POLL = 10.0


class Command(BaseCommand):
    help = "Watch the named hubs (default: all) and apply every change within seconds; stop with Ctrl-C."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("names", nargs="*", metavar="NAME", help="hub names (see `hubs list`)")
        parser.add_argument(
            "--timeout",
            type=int,
            default=60,
            metavar="SECONDS",
            help="server-side watch timeout before re-watching",
        )

    def handle(self, *args: Any, names: list[str], timeout: int, **options: Any) -> None:
        if timeout < 1:
            raise CommandError("--timeout must be at least 1 second", returncode=2)
        hubs = named_hubs(names) if names else []
        stop = threading.Event()

        def request_stop(signum: int, frame: FrameType | None) -> None:
            self.stdout.write(f"{signal.Signals(signum).name}: stopping the watches")
            stop.set()

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        watchers = self._start(hubs, stop, timeout)
        while not stop.wait(NEW_HUB_POLL if not names else 1.0):
            if not names:
                watched = {watcher.hub_id for watcher in watchers}
                watchers += self._start(list(Hub.objects.exclude(pk__in=watched)), stop, timeout)
        for watcher in watchers:
            watcher.join(STOP_GRACE / len(watchers))
        self.stdout.write("Stopped.")

    def _start(self, hubs: list[Hub], stop: threading.Event, timeout: int) -> list[HubWatcher]:
        if hubs:
            self.stdout.write(f"Watching {', '.join(hub.name for hub in hubs)}; Ctrl-C to stop.")
        elif not Hub.objects.exists():
            self.stdout.write("No hubs registered yet; watching for new ones every 10 s.")
        return watch_hubs(hubs, stop, timeout)
