"""Run by test_sqlite_writers.py in a process of its own, on a SQLite file named by DATABASE_URL.

A watcher-like thread writes batches of the demo hub's MemberCluster and ManagedCluster events (each
batch rescheduling the hub's placements in-process, as `make run` does) while two user threads write
what pages write: new users, and a read-then-write transaction like an approval. Prints a JSON report
of how many writes each side made and every database error.
"""

import json
import os
import sys
import threading
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import DatabaseError, connection, transaction  # noqa: E402

from demohub import DemoHub  # noqa: E402
from inventory.hubclient import KINDS_BY_NAME  # noqa: E402
from inventory.models import Hub  # noqa: E402
from inventory.sync import apply_events  # noqa: E402
from placement.models import Placement  # noqa: E402
from tests.factories import synced_demo_hub_row  # noqa: E402

ROUNDS = 15
errors: list[str] = []
counts = {"event_batches": 0, "user_writes": 0}


def watcher(hub: Hub, demo: DemoHub, done: threading.Event) -> None:
    try:
        for round_number in range(ROUNDS):
            for kind in ("MemberCluster", "ManagedCluster"):
                events = []
                for name in demo.store.names(kind):
                    obj = demo.store.get(kind, name)
                    obj["metadata"].setdefault("labels", {})["tier"] = f"t{round_number % 3}"
                    events.append(("MODIFIED", obj))
                try:
                    apply_events(hub, KINDS_BY_NAME[kind], events)
                    counts["event_batches"] += 1
                except DatabaseError as exc:
                    errors.append(f"watcher: {exc}")
    finally:
        done.set()
        connection.close()


def user(number: int, done: threading.Event) -> None:
    placement = Placement.objects.order_by("pk").first()
    assert placement is not None
    written = 0
    try:
        while not done.is_set() or written < 5:
            try:
                User.objects.create_user(f"user-{number}-{written}", password="x")
                with transaction.atomic():
                    # read, then write in the same transaction: the upgrade that failed at once before
                    row = Placement.objects.get(pk=placement.pk)
                    row.annotations = {**row.annotations, f"approved-by-{number}": str(written)}
                    row.save(update_fields=["annotations"])
                written += 1
                counts["user_writes"] += 1
            except DatabaseError as exc:
                errors.append(f"user {number}: {exc}")
                written += 1
    finally:
        connection.close()


def main() -> dict[str, Any]:
    call_command("migrate", verbosity=0)
    with DemoHub(clusters=24, fleet=True, seed=7) as demo:
        hub = synced_demo_hub_row(demo)
        done = threading.Event()
        threads = [threading.Thread(target=watcher, args=(hub, demo, done))]
        threads += [threading.Thread(target=user, args=(number, done)) for number in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return {
        "journal_mode": connection.cursor().execute("PRAGMA journal_mode").fetchone()[0],
        **counts,
        "errors": errors,
    }


if __name__ == "__main__":
    json.dump(main(), sys.stdout)
