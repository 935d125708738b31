"""Reschedules a hub change owes survive a broker outage: left pending in the database, logged, and
queued by the sweep to a real worker once the broker answers again.

The test starts a Redis of its own on a free loopback port (never the shared one) and stops it for the
outage; the change and the worker run in a process of their own on a SQLite file
(tests/placement/broker_outage.py), since the worker and the test share that database.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.servers import RedisServer

BASE_DIR = Path(__file__).resolve().parents[2]


def run(phase: str, tmp_path: Path, port: int) -> tuple[dict, str]:
    environ = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environ |= {
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
    }
    result = subprocess.run(
        [sys.executable, "-m", "tests.placement.broker_outage", phase],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout), result.stderr


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
