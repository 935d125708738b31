"""The reschedule path for real: hub watch -> change listener -> Redis -> a Celery worker -> PostgreSQL."""

import threading
import time

import pytest
from celery.contrib.testing.worker import start_worker

from demohub import DemoHub
from fleetui.celery import app
from inventory.watch import watch_hubs
from placement import service
from placement.models import Placement
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.test_reschedule import GOLD, untainted

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_label_change_reaches_the_decisions_within_2_seconds(
    broker_url: str, database_url: str, demo_hub: DemoHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    hub = synced_demo_hub_row(demo_hub)
    editor = placement_role(hub, ("default",), username="editor")  # admin of the sets bound to default
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="gold", spec=GOLD, actor=editor
    )
    name = untainted(demo_hub)
    app.control.purge()  # messages of other runs (and of the initial sync) are not this test's
    stop = threading.Event()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        watchers = watch_hubs([hub], stop, timeout_seconds=5)
        try:
            time.sleep(1.0)  # the watches connect
            changed = time.monotonic()
            demo_hub.store.patch("ManagedCluster", name, {"metadata": {"labels": {"tier": "gold"}}})
            while not placement.decisions.filter(decisions__contains=[{"clusterName": name}]).exists():
                assert time.monotonic() - changed < 10, "the worker did not reschedule within 10 s"
                time.sleep(0.05)
            elapsed = time.monotonic() - changed
        finally:
            stop.set()
            for watcher in watchers:
                watcher.join(10)
    assert elapsed <= 2.0, f"decisions changed {elapsed:.2f}s after the label change"
    change = placement.history.first()
    assert (change.trigger, change.added) == ("cluster label changed", [name])
