"""`python manage.py watch_hubs [NAME ...]`: apply hub changes to the database as they happen."""

import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.management.commands.hubs import named_hubs
from inventory.watch import watch_hubs

# Seconds a watcher thread may take to finish its current event after SIGINT/SIGTERM.
STOP_GRACE = 5.0


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
        hubs = named_hubs(names)
        if timeout < 1:
            raise CommandError("--timeout must be at least 1 second", returncode=2)
        stop = threading.Event()

        def request_stop(signum: int, frame: FrameType | None) -> None:
            self.stdout.write(f"{signal.Signals(signum).name}: stopping the watches")
            stop.set()

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        watchers = watch_hubs(hubs, stop, timeout)
        self.stdout.write(f"Watching {', '.join(hub.name for hub in hubs)}; Ctrl-C to stop.")
        while not stop.wait(1.0):
            pass
        for watcher in watchers:
            watcher.join(STOP_GRACE / len(watchers))
        self.stdout.write("Stopped.")
