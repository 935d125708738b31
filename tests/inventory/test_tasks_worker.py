"""The Celery path for real: a worker on the real Redis broker writing to the real database."""

import time

import pytest
from celery.contrib.testing.worker import start_worker

from demohub import DemoHub
from fleetui.celery import app
from inventory.models import ManagedCluster, SyncRun
from inventory.tasks import sync_hub
from tests.factories import DemoHubRowFactory

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_worker_syncs_the_hub_from_the_queue(broker_url: str, database_url: str, demo_hub: DemoHub) -> None:
    assert not app.conf.task_always_eager
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    app.control.purge()  # messages left on the shared broker by other runs are not this test's
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        sync_hub.delay(hub.pk, SyncRun.Trigger.MANUAL)
        # no result backend: the SyncRun row is the record of the run, as the UI reads it
        deadline = time.monotonic() + 60
        while not SyncRun.objects.exclude(state=SyncRun.State.RUNNING).exists():
            assert time.monotonic() < deadline, "the worker did not finish the sync within 60 s"
            time.sleep(0.2)
    run = SyncRun.objects.get()
    assert run.state == SyncRun.State.SUCCEEDED
    assert run.trigger == SyncRun.Trigger.MANUAL
    assert ManagedCluster.objects.filter(kind="ManagedCluster").count() == demo_hub.seeded["ManagedCluster"]
