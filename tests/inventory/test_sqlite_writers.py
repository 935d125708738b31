"""The embedded SQLite database takes a watcher's writes and a user's at once without "database is
locked": WAL, a busy timeout and IMMEDIATE transactions (fleetui.env.SQLITE_OPTIONS).

The writers run in a process of their own (tests/inventory/sqlite_writers.py) on a SQLite file: the
test database pytest-django makes for SQLite is in memory and takes writes from one thread only.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]


def test_watcher_batches_and_user_writes_share_the_sqlite_file(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environ |= {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.inventory.sqlite_writers"],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["errors"] == []
    assert report["journal_mode"] == "wal"
    assert report["event_batches"] == 30
    assert report["user_writes"] >= 10
