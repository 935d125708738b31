"""Settings come from the environment: helpers, required SECRET_KEY, DATABASE_URL, eager Celery."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from fleetui import checks, env
from fleetui.celery import app as celery_app

BASE_DIR = Path(__file__).resolve().parent.parent
CONFIG_VARIABLES = (
    "DEBUG",
    "SECRET_KEY",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "ALLOWED_HOSTS",
    "PYTEST_VERSION",
)

# Imports the real settings module in a fresh interpreter and prints what the test asks about.
PROBE = """
import json
from django.conf import settings
from fleetui.env import DEV_SECRET_KEY
print(json.dumps({
    "DEBUG": settings.DEBUG,
    "SECRET_KEY_IS_DEV": settings.SECRET_KEY == DEV_SECRET_KEY,
    "ENGINE": settings.DATABASES["default"]["ENGINE"],
    "NAME": str(settings.DATABASES["default"]["NAME"]),
    "ALLOWED_HOSTS": settings.ALLOWED_HOSTS,
    "CELERY_TASK_ALWAYS_EAGER": settings.CELERY_TASK_ALWAYS_EAGER,
    "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
    "CELERY_ACCEPT_CONTENT": settings.CELERY_ACCEPT_CONTENT,
    "CELERY_TASK_SERIALIZER": settings.CELERY_TASK_SERIALIZER,
    "CELERY_RESULT_SERIALIZER": settings.CELERY_RESULT_SERIALIZER,
}))
"""


def load_settings(**variables: str) -> subprocess.CompletedProcess[str]:
    """Run the settings module in a clean process: only `variables` configure it, not this test run."""
    environ = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    environ |= {"DJANGO_SETTINGS_MODULE": "fleetui.settings", **variables}
    return subprocess.run(
        [sys.executable, "-c", PROBE], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=60
    )


def settings_values(**variables: str) -> dict[str, object]:
    result = load_settings(**variables)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("Yes", True), ("on", True), ("0", False), ("off", False)],
)
def test_env_bool_parses_common_spellings(raw: str, expected: bool) -> None:
    assert env.env_bool("FLAG", environ={"FLAG": raw}) is expected


def test_env_bool_default_and_garbage() -> None:
    assert env.env_bool("FLAG", default=True, environ={}) is True
    with pytest.raises(ImproperlyConfigured, match="FLAG='maybe' is not a boolean"):
        env.env_bool("FLAG", environ={"FLAG": "maybe"})


def test_env_list_splits_and_trims() -> None:
    assert env.env_list("HOSTS", environ={"HOSTS": " a.example.com, ,b.example.com "}) == [
        "a.example.com",
        "b.example.com",
    ]
    assert env.env_list("HOSTS", default=["localhost"], environ={}) == ["localhost"]


def test_env_str_and_int() -> None:
    assert env.env_str("NAME", "fallback", environ={"NAME": "  "}) == "fallback"
    assert env.env_int("LIMIT", 5, environ={"LIMIT": "12"}) == 12
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env.env_int("LIMIT", 5, environ={"LIMIT": "twelve"})


def test_secret_key_required_without_debug() -> None:
    assert env.secret_key(None, debug=False, testing=False) == ""
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY is required when DEBUG is off"):
        env.require_secret_key(False)
    assert env.secret_key(None, debug=True, testing=False) == env.DEV_SECRET_KEY
    assert env.secret_key("s3cret", debug=False, testing=False) == "s3cret"


def _manage(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES} | variables
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_serving_refuses_to_start_without_secret_key_when_debug_is_off(tmp_path: Path) -> None:
    result = _manage("check", DEBUG="0", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert result.returncode != 0
    assert "fleetui.E001" in result.stderr and "SECRET_KEY is required when DEBUG is off" in result.stderr
    wsgi = subprocess.run(
        [sys.executable, "-c", "import fleetui.wsgi"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES},
        timeout=60,
    )
    assert "ImproperlyConfigured: SECRET_KEY is required when DEBUG is off" in wsgi.stderr


def test_offline_schedule_runs_without_secret_key() -> None:
    result = _manage("schedule", "-f", "demo/", "--now", "2026-11-20T12:00:00Z", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["placements"]


def test_settings_use_the_dev_key_only_with_debug() -> None:
    assert settings_values(DEBUG="1")["SECRET_KEY_IS_DEV"] is True
    values = settings_values(SECRET_KEY="production-secret", ALLOWED_HOSTS="fleet.example.com")
    assert values["DEBUG"] is False
    assert values["SECRET_KEY_IS_DEV"] is False
    assert values["ALLOWED_HOSTS"] == ["fleet.example.com"]


def test_database_url_parsing(tmp_path: Path) -> None:
    config = env.database_config("postgres://postgres@127.0.0.1:5432/test", tmp_path / "unused.sqlite3")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["HOST"], config["PORT"]) == (
        "test",
        "postgres",
        "127.0.0.1",
        5432,
    )
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        env.database_config("nonsense://x", tmp_path / "unused.sqlite3")


def test_database_defaults_to_sqlite_under_var(tmp_path: Path) -> None:
    sqlite_path = tmp_path / "var" / "fleetui.sqlite3"
    config = env.database_config(None, sqlite_path)
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(sqlite_path)
    assert sqlite_path.parent.is_dir()


def test_settings_default_database_is_the_sqlite_file_in_var() -> None:
    values = settings_values(DEBUG="1")
    assert values["ENGINE"] == "django.db.backends.sqlite3"
    assert values["NAME"] == str(BASE_DIR / "var" / "fleetui.sqlite3")


def test_celery_is_eager_and_json_only_without_a_broker() -> None:
    values = settings_values(DEBUG="1")
    assert values["CELERY_TASK_ALWAYS_EAGER"] is True
    assert values["CELERY_BROKER_URL"] == "memory://"
    assert values["CELERY_ACCEPT_CONTENT"] == ["json"]
    assert values["CELERY_TASK_SERIALIZER"] == values["CELERY_RESULT_SERIALIZER"] == "json"


def test_celery_uses_the_broker_when_one_is_set() -> None:
    values = settings_values(DEBUG="1", CELERY_BROKER_URL="redis://127.0.0.1:6379/0")
    assert values["CELERY_TASK_ALWAYS_EAGER"] is False
    assert values["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/0"


def test_celery_app_reads_django_settings(settings) -> None:
    assert celery_app.conf.accept_content == ["json"]
    assert celery_app.conf.task_always_eager is settings.CELERY_TASK_ALWAYS_EAGER


def test_system_check_warns_about_sqlite_with_a_separate_broker() -> None:
    sqlite, postgres = "django.db.backends.sqlite3", "django.db.backends.postgresql"
    warnings = checks.sqlite_broker_warnings(sqlite, tasks_run_in_process=False)
    assert [warning.id for warning in warnings] == ["fleetui.W001"]
    assert checks.sqlite_broker_warnings(sqlite, tasks_run_in_process=True) == []
    assert checks.sqlite_broker_warnings(postgres, tasks_run_in_process=False) == []


@pytest.mark.services
def test_redis_broker_is_reachable(broker_url: str) -> None:
    assert redis.Redis.from_url(broker_url, socket_connect_timeout=5).ping()
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1)


@pytest.mark.services
@pytest.mark.django_db
def test_database_is_the_configured_server(database_url: str) -> None:
    expected = env.database_config(database_url, BASE_DIR / "unused.sqlite3")["ENGINE"]
    assert connection.settings_dict["ENGINE"] == expected
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
