"""Run by test_reschedule_broker_down.py in a process of its own: SQLite file (DATABASE_URL) and the
test's own Redis (CELERY_BROKER_URL), which the test stops and starts between the phases.

- `down` (Redis stopped): a label change on the demo hub is applied as a watch applies it; queueing the
  reschedules fails, so they are left pending. Prints the pending placements.
- `up` (Redis answers): the sweep queues them and a real worker runs them. Prints what is still pending
  and which placements were rescheduled since.
"""

import json
import os
import sys
import time
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")
django.setup()

from celery.contrib.testing.worker import start_worker  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

from demohub import DemoHub  # noqa: E402
from fleetui.celery import app  # noqa: E402
from inventory.hubclient import KINDS_BY_NAME  # noqa: E402
from inventory.sync import apply_events  # noqa: E402
from placement import tasks  # noqa: E402
from placement.models import Placement  # noqa: E402
from tests.factories import synced_demo_hub_row  # noqa: E402

SET_LABEL = "cluster.open-cluster-management.io/clusterset"


def pending() -> dict[int, str]:
    rows = Placement.objects.filter(reschedule_pending_since__isnull=False)
    return dict(rows.values_list("pk", "reschedule_pending_trigger"))


def down() -> dict[str, Any]:
    call_command("migrate", verbosity=0)
    with DemoHub(clusters=12, fleet=True, seed=7) as demo:
        hub = synced_demo_hub_row(demo)
        name = demo.store.names("ManagedCluster")[0]
        demo.store.patch("ManagedCluster", name, {"metadata": {"labels": {SET_LABEL: "staging"}}})
        apply_events(
            hub, KINDS_BY_NAME["ManagedCluster"], [("MODIFIED", demo.store.get("ManagedCluster", name))]
        )
    return {
        "pending": pending(),
        "queued": Placement.objects.filter(reschedule_queued_at__isnull=False).count(),
    }


def up() -> dict[str, Any]:
    started = timezone.now()
    owed = set(pending())
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        swept = tasks.sweep_pending_reschedules(grace_seconds=0)
        deadline = time.monotonic() + 60
        while pending() and time.monotonic() < deadline:
            time.sleep(0.1)
    rescheduled = Placement.objects.filter(pk__in=owed, last_scheduled_at__gte=started)
    return {
        "swept": len(swept),
        "pending": pending(),
        "rescheduled": sorted(rescheduled.values_list("pk", flat=True)),
    }


if __name__ == "__main__":
    json.dump({"down": down, "up": up}[sys.argv[1]](), sys.stdout)
