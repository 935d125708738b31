"""Celery loses no work: idempotent tasks are redelivered when their worker dies, Redis waits longer
than any task before redelivering, and periodic messages do not pile up while no worker runs."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

import inventory.tasks  # noqa: F401 - registers the tasks
import placement.rollouts.tasks  # noqa: F401
import placement.tasks  # noqa: F401
from fleetui.celery import app

# Safe to run twice (see core.tasks.REDELIVER_IF_LOST); each is redelivered if its worker dies.
REDELIVERED = {
    "inventory.tasks.sync_hub",
    "placement.tasks.reschedule_placement",
    "placement.tasks.reschedule_hub",
    "placement.tasks.reschedule_chunk",
    "placement.tasks.publish_placement",
    "placement.tasks.reconcile_run",
    "placement.tasks.rolling_update_round",
}


@pytest.mark.parametrize("name", sorted(REDELIVERED))
def test_idempotent_tasks_are_acknowledged_late_and_rejected_when_their_worker_is_lost(name: str) -> None:
    task = app.tasks[name]
    assert task.acks_late and task.reject_on_worker_lost


def test_only_the_idempotent_tasks_are_redelivered() -> None:
    ours = {name for name in app.tasks if name.startswith(("inventory.", "placement."))}
    assert {name for name in ours if app.tasks[name].acks_late} == REDELIVERED


def test_every_beat_message_expires_after_its_own_interval() -> None:
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert entry["options"]["expires"] == entry["schedule"], name


def test_redis_redelivers_only_after_the_longest_task_could_have_run() -> None:
    assert app.conf.broker_transport_options["visibility_timeout"] > app.conf.task_time_limit


def test_the_visibility_timeout_is_configurable() -> None:
    probe = "from django.conf import settings; print(settings.CELERY_BROKER_TRANSPORT_OPTIONS)"
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "fleetui.settings",
        "CELERY_VISIBILITY_TIMEOUT": "7200",
    }
    result = subprocess.run(
        [sys.executable, "-c", probe], env=environ, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "{'visibility_timeout': 7200}", result.stderr


def test_every_task_is_queued_behind_the_leading_reschedules_and_ahead_of_the_later_ones() -> None:
    ours = [task for name, task in app.tasks.items() if name.startswith(("inventory.", "placement."))]
    leading, later = placement.tasks.LEADING_PRIORITY, placement.tasks.LATER_PRIORITY
    assert all(leading < task.priority < later for task in ours)
