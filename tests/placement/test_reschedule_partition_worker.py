"""A full reschedule for real: reschedule_hub -> Redis -> a Celery worker -> its chunks -> PostgreSQL."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.db import connection
from pytest_django.fixtures import Settings

from fleetui.celery import app
from inventory.models import Hub
from placement import tasks
from placement.models import Owner, Placement
from tests.factories import PlacementFactory
from tests.placement.conftest import WEB_SPEC

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def chunks_done() -> Iterator[list[dict[str, Any]]]:
    """The chunk tasks the worker finished: their placement ids and what they answered."""
    done: list[dict[str, Any]] = []

    def record(sender: Any = None, args: Any = (), retval: Any = None, **_: Any) -> None:
        if getattr(sender, "name", None) == tasks.reschedule_chunk.name:
            done.append({"ids": list(args[1]), **retval})

    task_postrun.connect(record, weak=False)
    yield done
    task_postrun.disconnect(record)


def test_a_worker_runs_the_chunks_and_reschedules_every_placement_once(
    broker_url: str,
    database_url: str,
    manifests_hub: Hub,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    chunks_done: list[dict[str, Any]],
) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    PlacementFactory.create_batch(5, hub=manifests_hub, owner=Owner.DASHBOARD, namespace="web", spec=WEB_SPEC)
    placements = Placement.objects.filter(hub=manifests_hub)
    ids = set(placements.values_list("pk", flat=True))
    settings.RESCHEDULE_CHUNK_SIZE = len(ids) // 2 + 1  # two chunks
    app.control.purge()  # messages of other runs are not this test's
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        tasks.reschedule_hub.delay(manifests_hub.pk)
        started = time.monotonic()
        while len(chunks_done) < 2 or placements.filter(last_scheduled_at__isnull=True).exists():
            assert time.monotonic() - started < 30, f"chunks done after 30 s: {chunks_done}"
            time.sleep(0.05)
        time.sleep(0.3)  # a third chunk would be a bug
    assert len(chunks_done) == 2
    assert sorted(pk for chunk in chunks_done for pk in chunk["ids"]) == sorted(ids)
    assert sum(chunk["rescheduled"] for chunk in chunks_done) == len(ids)
    assert [chunk["failed"] + chunk["skipped"] for chunk in chunks_done] == [0, 0]
    web = placements.filter(owner=Owner.DASHBOARD, namespace="web")
    assert all(p.status["numberOfSelectedClusters"] == 2 for p in web)


def test_postgresql_compresses_the_large_values_a_reschedule_writes_with_lz4(database_url: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SHOW default_toast_compression")
        assert cursor.fetchone() == ("lz4",)
