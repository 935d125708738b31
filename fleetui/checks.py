"""System checks for deployment mistakes the settings cannot catch on their own."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from fleetui.env import DEV_SECRET_KEY, SECRET_KEY_REQUIRED
from inventory.credentials import DEV_CREDENTIALS_KEY

# Django's own deploy check only warns (security.W009) about a short key; a key that is public (the
# development default in this repository, Django's generated "django-insecure-" one) or guessable lets
# anyone sign sessions (SECRET_KEY) or read the hub credentials stored in the database (the credentials
# key), so with DEBUG off those are errors. The lengths: Django's for SECRET_KEY; a Fernet key (44
# characters, the README's advice) passes the credentials key's.
MIN_UNIQUE_CHARACTERS = 5
MIN_SECRET_KEY_LENGTH = 50
MIN_CREDENTIALS_KEY_LENGTH = 32


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


def weak_key(value: str, *, development: str, min_length: int) -> str:
    """Why `value` is not fit to keep a production site's secrets, or "" when it is."""
    if not value:
        return "it is not set"
    if value == development:
        return "it is the development default, published in this repository"
    if value.startswith("django-insecure-"):
        return "it is a key Django generated for development (django-insecure-...)"
    if len(value) < min_length or len(set(value)) < MIN_UNIQUE_CHARACTERS:
        return (
            f"it has fewer than {min_length} characters, or fewer than {MIN_UNIQUE_CHARACTERS} different ones"
        )
    return ""


def _key_error(name: str, value: str, development: str, min_length: int, code: str, hint: str) -> list[Error]:
    reason = weak_key(value, development=development, min_length=min_length)
    return [Error(f"{name} is not fit for production: {reason}.", hint=hint, id=code)] if reason else []


def key_errors(secret_key: str, credentials_key: str | None, *, debug: bool, testing: bool) -> list[Error]:
    """The keys a production site (DEBUG off) must not run with; `testing`: the keys default as under
    pytest, where fleetui.env.secret_key and inventory.credentials pick the development ones."""
    if debug:
        return []
    errors = []
    if secret_key:  # an empty one is fleetui.E001's
        errors += _key_error(
            "SECRET_KEY",
            secret_key,
            DEV_SECRET_KEY,
            MIN_SECRET_KEY_LENGTH,
            "fleetui.E002",
            "Set it to a long random string: python -c 'import secrets; print(secrets.token_urlsafe(50))'",
        )
    errors += _key_error(
        "FLEETUI_CREDENTIALS_KEY",
        credentials_key or (DEV_CREDENTIALS_KEY if testing else ""),
        DEV_CREDENTIALS_KEY,
        MIN_CREDENTIALS_KEY_LENGTH,
        "fleetui.E003",
        "Set it to a Fernet key, and keep it (the stored hub credentials need it): python -c "
        "'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'",
    )
    return errors


@register(Tags.security, deploy=True)
def production_keys(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[Error]:
    return key_errors(
        settings.SECRET_KEY, settings.FLEETUI_CREDENTIALS_KEY, debug=settings.DEBUG, testing=settings.TESTING
    )
