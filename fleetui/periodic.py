"""The in-process periodic runner: every entry of settings.CELERY_BEAT_SCHEDULE run here, at its interval.

With a broker, celery beat sends these tasks to the workers. Without one (`make run`) tasks run in the
process that calls them, so nothing would run them periodically; `manage.py run_periodic` does, with the
same schedules (a number of seconds, a timedelta or a crontab) and the same first run one interval after
the start. Each entry has its own thread, so a long one (a resync of every placement) never delays a
short one (the staged update runs and rolling updates due every 2 s); an entry never overlaps itself.
A failing run is logged and the entry runs again at its next time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from celery import Celery
from celery.schedules import BaseSchedule, maybe_schedule
from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)

# Bounds of the wait between two looks at an entry's schedule (seconds): never a busy loop, and a
# crontab entry is looked at again at least this often.
MIN_WAIT, MAX_WAIT = 0.05, 60.0


@dataclass
class Entry:
    """One beat entry: the task's name, its schedule, arguments, and when it last ran here."""

    name: str
    task: str
    schedule: BaseSchedule
    last_run_at: datetime
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def entries(app: Celery, schedule: Mapping[str, Mapping[str, Any]] | None = None) -> list[Entry]:
    """The entries of `schedule` (default: settings.CELERY_BEAT_SCHEDULE), first due one interval on."""
    schedule = settings.CELERY_BEAT_SCHEDULE if schedule is None else schedule
    app.loader.import_default_modules()  # every app's tasks.py, as a worker registers them
    found = []
    for name, options in schedule.items():
        when = maybe_schedule(options["schedule"], app=app)
        # a number of seconds or a timedelta comes back as a `schedule` (Celery's annotation says otherwise)
        assert isinstance(when, BaseSchedule)
        found.append(
            Entry(
                name=name,
                task=options["task"],
                schedule=when,
                args=tuple(options.get("args") or ()),
                kwargs=dict(options.get("kwargs") or {}),
                last_run_at=when.now(),
            )
        )
    return found


def run_entry(app: Celery, entry: Entry) -> bool:
    """Run the entry's task here, now; answers whether it succeeded (a failure is logged)."""
    entry.last_run_at = entry.schedule.now()
    try:
        app.tasks[entry.task].apply(args=entry.args, kwargs=entry.kwargs, throw=True)
    except Exception:
        logger.exception("periodic %s (%s) failed; it runs again at its next time", entry.name, entry.task)
        return False
    return True


def _follow(app: Celery, entry: Entry, stop: threading.Event) -> None:
    try:
        while not stop.is_set():
            due, wait = entry.schedule.is_due(entry.last_run_at)
            if due:
                close_old_connections()  # a long-lived thread: drop a connection the database closed
                run_entry(app, entry)
                close_old_connections()
                _, wait = entry.schedule.is_due(entry.last_run_at)
            stop.wait(min(max(wait, MIN_WAIT), MAX_WAIT))
    finally:
        connection.close()  # this thread's own database connection


def serve(app: Celery, stop: threading.Event, found: list[Entry] | None = None) -> list[threading.Thread]:
    """Follow every entry in a thread of its own until `stop` is set; answers the started threads."""
    threads = []
    for entry in entries(app) if found is None else found:
        thread = threading.Thread(target=_follow, args=(app, entry, stop), name=f"periodic {entry.name}")
        thread.start()
        threads.append(thread)
    return threads
