"""System checks for deployment mistakes the settings cannot catch on their own."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import Error, Warning, register

from fleetui.env import SECRET_KEY_REQUIRED


def sqlite_broker_warnings(engine: str, tasks_run_in_process: bool) -> list[Warning]:
    """Celery workers in other processes writing one SQLite file lock each other out."""
    if engine.endswith("sqlite3") and not tasks_run_in_process:
        return [
            Warning(
                "CELERY_BROKER_URL is set but the database is SQLite.",
                hint="Separate Celery workers contend for the SQLite file; set DATABASE_URL to PostgreSQL.",
                id="fleetui.W001",
            )
        ]
    return []


@register()
def sqlite_with_external_broker(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Warning]:
    return sqlite_broker_warnings(settings.DATABASES["default"]["ENGINE"], settings.CELERY_TASK_ALWAYS_EAGER)



@register()
def secret_key_configured(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Error]:
    """Serving commands (runserver, migrate, check) stop here; offline ones skip system checks."""
    return [] if settings.SECRET_KEY_CONFIGURED else [Error(SECRET_KEY_REQUIRED, id="fleetui.E001")]
