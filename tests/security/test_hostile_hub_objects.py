"""A hub that serves hostile objects (a 300-character name, a 2,000-character taint key, a 100 KB label
value, a wrong-typed spec, 10,000 labels, a NUL character in a name, an alias-bomb annotation) is synced
and watched on PostgreSQL and on SQLite: every valid object is stored and current, each hostile one is an
inventory.RejectedObject with a readable reason, the sync succeeds, the watcher's threads live on and keep
applying changes, and nothing else changed. The dashboard's side runs in a process of its own under a
1 GiB address-space limit (tests/security/hostile_hub_scenario.py) and within a time bound.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from demohub import DemoHub
from demohub.hostile import LONG_NAME, MANY_LABELS, NUL_NAME
from tests.security import bounded
from tests.servers import run_module

ADDRESS_SPACE = 1024**3
# The whole scenario on a loaded two-core machine; the sync alone is held to SYNC_SECONDS.
SCENARIO_SECONDS = 240
SYNC_SECONDS = 30
# The hostile clusters the sync refuses, and a field their reason names.
REFUSED = {
    LONG_NAME[:253]: "metadata.name: invalid value",
    "hostile-taint-key": "spec.taints[0].key: invalid value",
    "hostile-label-value": 'metadata.labels["hostile"]: invalid value',
    "hostile-wrong-types": "spec.taints: expected a list, got string",
    "hostile-many-labels": f"metadata.labels: {MANY_LABELS} entries",
    NUL_NAME.replace("\x00", "\\u0000"): "object: a string holds a NUL character",
}


@pytest.fixture
def hostile_hub() -> Iterator[DemoHub]:
    with DemoHub(clusters=12, seed=5, hostile=True, bookmark_seconds=0.5) as hub:
        yield hub


def scenario(hub: DemoHub, database_url: str) -> dict[str, Any]:
    report, _ = run_module(
        "tests.security.hostile_hub_scenario",
        database_url,
        hub.url,
        str(ADDRESS_SPACE),
        timeout=SCENARIO_SECONDS,
    )
    return report


def check(report: dict[str, Any], hub: DemoHub) -> None:
    # the limit held the whole scenario: an allocation over it failed
    assert report["address_space_limit"] == ADDRESS_SPACE
    assert report["over_limit_refused"]
    # the sync succeeded, in time, and stored exactly the valid objects, all current
    assert report["sync_state"] == "succeeded"
    assert report["hub_error"] == ""
    assert report["sync_seconds"] < SYNC_SECONDS
    names = hub.store.names("ManagedCluster")
    assert report["clusters"] == sorted(name for name in names if not name.startswith("hostile"))
    assert report["stale_clusters"] == 0
    # the alias bomb is within every limit: stored (only parsing its annotation would hurt)
    assert report["placements"] == sorted(hub.store.names("Placement"))
    assert "hostile-alias-bomb" in report["placements"]

    # each hostile cluster is a rejection of this sync with a reason that names the field, briefly
    assert report["sync_rejected"] == len(REFUSED)
    assert report["sync_kinds_rejected"]["ManagedCluster"] == len(REFUSED)
    rows = {row["name"]: row for row in report["rejected"]}
    assert set(rows) == set(REFUSED)
    for name, field in REFUSED.items():
        assert rows[name]["kind"] == "ManagedCluster"
        assert rows[name]["sync_run_id"] is not None
        assert field in rows[name]["reason"]
        assert len(rows[name]["reason"]) < 1000

    # the watcher refused hostile versions, kept on applying the rest, and lost no thread
    watch = report["watch"]
    assert watch["alive_threads"] == watch["threads"] > 0
    assert watch["failed_events"] == watch["restarts"] == 0
    assert watch["turned_kept_unchanged"]
    assert not watch["hostile_new_stored"]
    after = {row["name"]: row for row in watch["rejected_after_watch"]}
    assert set(after) == set(REFUSED) - {LONG_NAME[:253]} | {"hostile-new"}
    assert after["hostile-new"]["sync_run_id"] is None
    assert "spec.taints[0].key" in after["hostile-new"]["reason"]

    # nothing else changed
    assert report["bystander_unchanged"]
    assert {row["hub__name"] for row in watch["rejected_after_watch"]} == {"hostile"}


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_hostile_hub_on_postgresql(hostile_hub: DemoHub, database_url: str) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("DATABASE_URL is not a PostgreSQL database")
    report = scenario(hostile_hub, bounded.test_database_url())
    assert report["vendor"] == "postgresql"
    check(report, hostile_hub)


def test_hostile_hub_on_sqlite(hostile_hub: DemoHub, tmp_path: Path) -> None:
    report = scenario(hostile_hub, f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert report["vendor"] == "sqlite"
    check(report, hostile_hub)
