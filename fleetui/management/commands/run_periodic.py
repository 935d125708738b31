"""`python manage.py run_periodic [--once]`: run every celery beat entry in this process, at its interval.

For sites without a broker (`make run` starts it next to the development server): the timed steps of
staged update runs, rolling-update rounds, periodic hub syncs and placement resyncs, and whatever entry
settings.CELERY_BEAT_SCHEDULE gains later. With a broker configured, celery beat does this (`make beat`).
"""

import logging
import signal
import threading
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from fleetui import periodic
from fleetui.celery import app

# Seconds an entry's thread may take to finish its current run after SIGINT/SIGTERM.
STOP_GRACE = 30.0


class Command(BaseCommand):
    help = "Run every celery beat entry in-process at its interval (sites without a broker); Ctrl-C stops."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="run every entry once, now, and exit")

    def handle(self, *args: Any, once: bool, **options: Any) -> None:
        if not app.conf.task_always_eager:
            raise CommandError(
                "a broker is configured (CELERY_BROKER_URL): celery beat sends these tasks to the workers "
                "(make beat, make worker)",
                returncode=2,
            )
        # a line per task every 2 s would bury the development server's log; failures are still logged
        logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
        found = periodic.entries(app)
        if once:
            failed = [entry.name for entry in found if not periodic.run_entry(app, entry)]
            if failed:
                raise CommandError(f"failed: {', '.join(failed)}")
            self.stdout.write(f"Ran {', '.join(entry.name for entry in found)}.")
            return
        stop = threading.Event()

        def request_stop(signum: int, frame: FrameType | None) -> None:
            self.stdout.write(f"{signal.Signals(signum).name}: stopping the periodic tasks")
            stop.set()

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        listed = ", ".join(f"{entry.name} {entry.schedule!r}" for entry in found)
        self.stdout.write(f"Running in-process: {listed}; Ctrl-C to stop.")
        threads = periodic.serve(app, stop, found)
        while not stop.wait(1.0):
            pass
        for thread in threads:
            thread.join(STOP_GRACE / max(len(threads), 1))
        self.stdout.write("Stopped.")
