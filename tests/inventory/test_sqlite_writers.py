"""The embedded SQLite database takes a watcher's writes and a user's at once without "database is
locked": WAL, a busy timeout and IMMEDIATE transactions (fleetui.env.SQLITE_OPTIONS).

The writers run in a process of their own (tests/inventory/sqlite_writers.py) on a SQLite file of their
own, configured as `make run` configures it, whatever database the rest of the test run uses.
"""

from pathlib import Path

from tests.servers import run_on_sqlite


def test_watcher_batches_and_user_writes_share_the_sqlite_file(tmp_path: Path) -> None:
    report, _ = run_on_sqlite("tests.inventory.sqlite_writers", tmp_path / "db.sqlite3")
    assert report["errors"] == []
    assert report["journal_mode"] == "wal"
    assert report["event_batches"] == 30
    assert report["user_writes"] >= 10
