"""The Celery app: CELERY_* settings come from Django settings; tasks live in each app's tasks.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleetui.settings")

app = Celery("fleetui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
