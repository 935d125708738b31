"""Rolling updates for real: rounds queued on Redis at their requeue time, run by a Celery worker on
PostgreSQL, with the rollout's claim (and the placement row lock) keeping concurrent rounds apart."""

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection

from demohub import DemoHub
from fleetui.celery import app
from placement import hubbindings
from placement.models import Placement
from placement.rollouts import rolling
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.rollout_hub import AVAILABLE, create_crp, crp_spec, live_hub, offline_crp, snapshots

__all__ = ["live_hub"]  # a fixture, used by name
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def wait_for(what: str, check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(0.1)


def rollout(placement: Placement) -> dict[str, Any]:
    placement.refresh_from_db()
    return placement.status.get("rollout") or {}


def test_a_worker_runs_the_rounds_at_their_requeue_times(
    broker_url: str,
    database_url: str,
    live_hub: DemoHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    monkeypatch.setattr(rolling, "MIN_REQUEUE", timedelta(seconds=1))
    hub = synced_demo_hub_row(live_hub)
    editor = placement_role(hub, username="editor")  # admin of a populated set of the hub
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        crp = create_crp(hub, editor, crp_spec(4, maxUnavailable=1, maxSurge=0, unavailablePeriodSeconds=1))
        wait_for(
            "the first rollout", lambda: rollout(crp).get("round", 0) > 1 and not rollout(crp)["requeueAt"]
        )
        rolling.roll_out_new_snapshot(crp, actor=editor)
        wait_for("the new snapshot", lambda: set(snapshots(live_hub, crp).values()) == {"web-1-snapshot"})
        wait_for("the end of the rollout", lambda: not rollout(crp)["requeueAt"])
    waves = [e.message for e in crp.events.filter(reason="RollingUpdateWave").order_by("at", "pk")]
    # maxUnavailable 1: one cluster per wave of the new snapshot
    assert sum("of web-1-snapshot" in message for message in waves) == 4
    assert crp.events.filter(reason="RollingUpdateCompleted").exists()


def test_two_workers_never_run_the_same_round(
    database_url: str, tasks_in_process: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert connection.vendor == "postgresql"
    placement = offline_crp()
    placement.bindings.update(status=AVAILABLE)
    real_sync = hubbindings.sync_bindings

    def slow_sync(target: Placement) -> Any:
        time.sleep(0.5)  # long enough for the other worker to reach the lock
        return real_sync(target)

    monkeypatch.setattr(hubbindings, "sync_bindings", slow_sync)
    summaries: list[dict[str, Any] | None] = []

    def worker() -> None:
        try:
            summaries.append(rolling.run_round(Placement.objects.get(pk=placement.pk)))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    # the second found the rollout claimed by the first and ran nothing; the runner comes back when due
    assert len(summaries) == 2 and summaries.count(None) == 1
    assert [summary["round"] for summary in summaries if summary] == [1]
    placement.refresh_from_db()
    assert rollout(placement)["round"] == 1 and placement.rollout_claimed_until is None
