"""A binding the editor writes while the watcher writes it too (each in its own PostgreSQL transaction):
the watcher's insert meets the editor's row once it commits, and writes again as an update; one row, no
error, no lost or restarted watch."""

import logging
from collections.abc import Iterator

import pytest
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from demohub import DemoHub
from inventory import sync
from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub, ManagedClusterSetBinding
from inventory.watch import HubWatcher
from tests.inventory.watch_support import wait_for, watched

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
BINDING = KINDS_BY_NAME["ManagedClusterSetBinding"]
# a connection inserting a binding row (the sync inserts with COPY), waiting for another transaction's
# row of the same key
INSERT_WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    " AND (query LIKE 'INSERT INTO \"inventory_managedclustersetbinding\"%%'"
    " OR query LIKE 'COPY \"inventory_managedclustersetbinding\"%%')"
)


@pytest.fixture
def watching(demo_hub: DemoHub, database_url: str) -> Iterator[tuple[Hub, HubWatcher]]:
    if connection.vendor != "postgresql":
        pytest.skip("DATABASE_URL is not a PostgreSQL database")
    with watched(demo_hub) as pair:
        yield pair


def blocked_inserts(cursor: CursorWrapper) -> int:
    """Connections waiting to insert a binding row. Inside a transaction PostgreSQL answers activity from
    one snapshot, so it is cleared before each look."""
    cursor.execute("SELECT pg_stat_clear_snapshot()")
    cursor.execute(INSERT_WAITING)
    return int(cursor.fetchone()[0])


@pytest.fixture
def sync_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The sync's log records, heard on its own logger: an earlier test in the same process may have
    configured logging anew (a disabled or non-propagating logger), which the root handler would miss."""
    logger = logging.getLogger(sync.__name__)
    disabled, level = logger.disabled, logger.level
    logger.disabled = False
    logger.setLevel(logging.INFO)
    logger.addHandler(caplog.handler)
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)
        logger.disabled, logger.level = disabled, level


def met_meanwhile(caplog: pytest.LogCaptureFixture) -> bool:
    """A writer's insert met the row the other wrote meanwhile, and it wrote again."""
    return any("written meanwhile" in record.getMessage() for record in caplog.records)


def binding(namespace: str) -> dict:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSetBinding",
        "metadata": {"name": "staging", "namespace": namespace},
        "spec": {"clusterSet": "staging"},
    }


def test_the_editor_and_the_watcher_write_the_same_binding(demo_hub: DemoHub, watching, sync_log) -> None:
    hub, watcher = watching
    rows = ManagedClusterSetBinding.objects.filter(hub=hub, name="staging")
    with transaction.atomic():
        # what the editor does: create the binding on the hub, then its row from the hub's answer
        created = demo_hub.store.create(binding("team-race"))
        sync.apply_event(hub, BINDING, "ADDED", created)
        # Usually the watcher hears of the object now and its insert waits for this transaction. While
        # the test process is short of CPU the watcher may have written first: then the editor's insert
        # above met the watcher's row and wrote again. Either way one writer met the other's row.
        with connection.cursor() as cursor:
            wait_for(lambda: blocked_inserts(cursor) > 0 or met_meanwhile(sync_log))
    # the watch goes on after it
    demo_hub.store.create(binding("team-after"))
    wait_for(lambda: rows.filter(namespace="team-after").exists())

    assert rows.filter(namespace="team-race").count() == 1
    assert rows.get(namespace="team-race").uid == created["metadata"]["uid"]
    assert sum(watcher.failed_events.values()) == sum(watcher.restarts.values()) == 0
    assert all(thread.is_alive() for thread in watcher.threads)
    assert not [r for r in sync_log.records if "not written" in r.getMessage()]
    assert met_meanwhile(sync_log)
