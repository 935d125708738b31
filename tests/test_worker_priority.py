"""A `celery worker` runs its tasks at a lower CPU priority than the site (WORKER_NICENESS, 10 unless
set), so a full reschedule does not slow pages and what-ifs on a machine they share; a value outside
0–19 stops the settings from loading."""

import os
import time
import uuid
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection

from fleetui.celery import app
from tests.servers import celery_worker
from tests.test_settings import load_settings

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def pool_process(worker_pid: int) -> int:
    """The pid of the worker's one pool process, once the worker has started it."""
    children = Path(f"/proc/{worker_pid}/task/{worker_pid}/children")
    for _ in range(600):
        if pids := children.read_text().split():
            return int(pids[0])
        time.sleep(0.1)
    raise AssertionError("the worker started no pool process within 60 s")


@pytest.mark.parametrize(("configured", "niceness"), [(None, 10), ("4", 4), ("0", 0)])
def test_the_worker_and_its_pool_process_run_at_the_configured_niceness(
    configured: str | None, niceness: int, broker_url: str, database_url: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"{database_url.rsplit('/', 1)[0]}/{connection.settings_dict['NAME']}",
        "CELERY_BROKER_URL": broker_url,
    }
    env.pop("WORKER_NICENESS", None)
    if configured is not None:
        env["WORKER_NICENESS"] = configured
    own = os.getpriority(os.PRIO_PROCESS, 0)
    queue = f"priority-{uuid.uuid4().hex[:8]}"
    with celery_worker(env, queue, tmp_path / "worker.log", pool="prefork") as worker:
        child = pool_process(worker.pid)
        expected = min(own + niceness, 19)
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == expected
        assert os.getpriority(os.PRIO_PROCESS, child) == expected


def test_a_worker_started_inside_a_process_leaves_its_priority_alone(broker_url: str) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        assert os.getpriority(os.PRIO_PROCESS, 0) == own


@pytest.mark.parametrize("configured", ["-5", "20"])
def test_a_niceness_outside_0_to_19_stops_the_settings(configured: str) -> None:
    result = load_settings(WORKER_NICENESS=configured, DEBUG="1")
    assert result.returncode != 0
    assert f"WORKER_NICENESS={configured} is not between 0 and 19." in result.stderr
