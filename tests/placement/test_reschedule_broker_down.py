"""Reschedules a hub change owes survive a broker outage: left pending in the database, logged, and
queued by the sweep to a real worker once the broker answers again.

The test starts a Redis of its own on a free loopback port (never the shared one) and stops it for the
outage; the change and the worker run in a process of their own on a SQLite file
(tests/placement/broker_outage.py), since the worker and the test share that database.
"""

from pathlib import Path
from typing import Any

from tests.servers import RedisServer, run_on_sqlite


def run(phase: str, tmp_path: Path, port: int) -> tuple[dict[str, Any], str]:
    report, log = run_on_sqlite(
        "tests.placement.broker_outage",
        tmp_path / "db.sqlite3",
        phase,
        broker_url=f"redis://127.0.0.1:{port}/0",
    )
    return report, log


def test_a_broker_outage_leaves_reschedules_pending_and_the_sweep_completes_them(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    down, log = run("down", tmp_path, own_redis.port)
    # the first sync's reschedules could not be queued either; a marker keeps its first trigger
    assert down["pending"], "the changes owe reschedules"
    assert down["queued"] == 0  # no queued marker holds back the sweep
    assert "left pending" in log  # logged, not swallowed

    own_redis.start()
    up, _ = run("up", tmp_path, own_redis.port)
    assert up["swept"] == len(down["pending"])
    assert up["pending"] == {}
    assert up["rescheduled"] == sorted(int(pk) for pk in down["pending"])
