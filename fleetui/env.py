"""Typed readers for the environment variables that configure the site.

Kept free of Django imports so settings.py and the tests can both use them.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}

# Only ever used with DEBUG on or under pytest; never valid in production.
DEV_SECRET_KEY = "dev-insecure-fleetui-secret-key-do-not-use-in-production"


def env_str(name: str, default: str | None = None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The variable's value, or `default` when it is unset or blank."""
    value = environ.get(name, "").strip()
    return value or default


def env_bool(name: str, default: bool = False, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off."
    )


def env_int(name: str, default: int, environ: Mapping[str, str] = os.environ) -> int:
    raw = env_str(name, environ=environ)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None


def env_list(
    name: str, default: list[str] | None = None, environ: Mapping[str, str] = os.environ
) -> list[str]:
    """A comma-separated list; blanks around items and empty items are dropped."""
    raw = env_str(name, environ=environ)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


SECRET_KEY_REQUIRED = (
    "SECRET_KEY is required when DEBUG is off. Set SECRET_KEY to a long random string "
    "(for example: python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
    "or set DEBUG=1 for local development."
)


def secret_key(configured: str | None, *, debug: bool, testing: bool) -> str:
    """SECRET_KEY from the environment; a fixed dev key only with DEBUG on or under pytest.

    Missing in production gives "": offline commands that sign nothing (`schedule` in a CI job) still
    run, while the web entry points (`require_secret_key`) and the system checks (runserver, migrate,
    check) refuse to start, and Django itself refuses any use of an empty key.
    """
    if configured:
        return configured
    return DEV_SECRET_KEY if debug or testing else ""


def require_secret_key(configured: bool) -> None:
    """Fail fast where a key is indispensable (serving requests)."""
    if not configured:
        raise ImproperlyConfigured(SECRET_KEY_REQUIRED)


def database_config(url: str | None, sqlite_path: Path) -> dj_database_url.DBConfig:
    """Django DATABASES['default'] from DATABASE_URL, or a SQLite file at `sqlite_path` when unset."""
    if url is None:
        # The embedded default: one file, no server; the folder must exist before Django opens it.
        sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{sqlite_path}"
    try:
        config = dj_database_url.parse(url, conn_health_checks=True)
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL Django understands: {exc}") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config.setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
    return config


# The embedded database is written by the web server, the hub watcher and in-process tasks at once.
# WAL lets readers go on while one writer writes; writers take the write lock when their transaction
# begins (IMMEDIATE) and wait up to SQLITE_BUSY_SECONDS for it. A transaction that started as a reader
# and then writes (SQLite's default, DEFERRED) cannot wait: it fails at once with "database is locked"
# when another writer committed meanwhile. synchronous=NORMAL is durable in WAL mode except for the last
# transactions before a power loss, and saves an fsync per commit.
SQLITE_BUSY_SECONDS = 20
SQLITE_OPTIONS: dict[str, Any] = {
    "timeout": SQLITE_BUSY_SECONDS,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
}
