"""The Celery app: CELERY_* settings come from Django settings; tasks live in each app's tasks.py."""

import os

from celery import Celery
from celery.signals import celeryd_init
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")

app = Celery("fleetui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect(weak=False)
def lower_cpu_priority(**_: object) -> None:
    """Receiver of `celeryd_init`: a `celery worker` command's main process lowers its CPU priority by
    WORKER_NICENESS before it starts the processes that run the tasks, which inherit it. A worker started
    inside another process (the tests' in-process workers) sends no `celeryd_init` and leaves that
    process's priority alone."""
    os.nice(settings.WORKER_NICENESS)
