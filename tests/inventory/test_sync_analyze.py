"""A sync that loads many rows into a table refreshes PostgreSQL's statistics of it at once, so a watch
event's lookup of its few rows is planned from the table as it is, not as it was before the load."""

from collections.abc import Iterator

import pytest
from django.db import connection

from demohub import DemoHub
from inventory import bulk
from inventory.models import ManagedCluster
from tests.factories import synced_demo_hub_row

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tasks_in_process")]


@pytest.fixture
def demo_hub() -> Iterator[DemoHub]:
    with DemoHub(clusters=40, fleet=True, seed=5) as hub:
        yield hub


def planned_rows(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        (rows,) = cursor.fetchone()
    return float(rows)


def test_a_sync_that_loads_a_table_analyzes_it(demo_hub: DemoHub, monkeypatch: pytest.MonkeyPatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("DATABASE_URL is not a PostgreSQL database")
    table = ManagedCluster._meta.db_table
    with connection.cursor() as cursor:
        # the statistics of an empty table, as a fresh database has them
        cursor.execute(f"TRUNCATE {connection.ops.quote_name(table)} CASCADE")
        cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    assert planned_rows(table) <= 0
    monkeypatch.setattr(bulk, "ANALYZE_AFTER", 50)

    synced_demo_hub_row(demo_hub)

    assert planned_rows(table) == ManagedCluster.objects.count() >= 50
