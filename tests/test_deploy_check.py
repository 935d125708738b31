"""`manage.py check --deploy` passes with production settings (TLS on, DEBUG off, real keys), and fails
with an error (not a warning) on a SECRET_KEY or credentials key that is public, generated for development
or guessable."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from fleetui.env import DEV_SECRET_KEY
from inventory.credentials import DEV_CREDENTIALS_KEY

ROOT = Path(__file__).resolve().parent.parent


def check_deploy(fail_level: str = "WARNING", **env: str) -> subprocess.CompletedProcess[str]:
    """The check as a deployment runs it: PYTEST_VERSION unset, unless `env` sets it again."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTEST_VERSION"} | env
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", fail_level],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DEBUG": "0",
    "HTTPS": "1",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "FLEETUI_CREDENTIALS_KEY": Fernet.generate_key().decode(),
    "ALLOWED_HOSTS": "fleet.example.com",
}


def test_production_settings_pass_the_deploy_check() -> None:
    result = check_deploy(**PRODUCTION)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_tls_the_deploy_check_names_what_is_missing() -> None:
    result = check_deploy(**(PRODUCTION | {"HTTPS": "0"}))

    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr + result.stdout


# random keys get fixed test ids, so every xdist worker collects the same tests
WEAK_KEYS = [
    ("SECRET_KEY", DEV_SECRET_KEY, "development default"),
    ("SECRET_KEY", "django-insecure-" + secrets.token_urlsafe(50), "Django generated for development"),
    ("SECRET_KEY", secrets.token_urlsafe(20), "fewer than 50 characters"),
    ("SECRET_KEY", "k" * 60, "fewer than 50 characters, or fewer than 5 different ones"),
    ("FLEETUI_CREDENTIALS_KEY", DEV_CREDENTIALS_KEY, "development default"),
    ("FLEETUI_CREDENTIALS_KEY", "hunter2", "fewer than 32 characters"),
    ("FLEETUI_CREDENTIALS_KEY", "", "not set"),
]


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    WEAK_KEYS,
    ids=[f"{variable}: {reason}" for variable, _, reason in WEAK_KEYS],
)
def test_a_weak_key_is_an_error(variable: str, value: str, reason: str) -> None:
    result = check_deploy("ERROR", **(PRODUCTION | {variable: value}))

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    code = "fleetui.E002" if variable == "SECRET_KEY" else "fleetui.E003"
    assert f"({code}) {variable} is not fit for production: it" in output and reason in output
    assert not value or value not in output  # the check names the problem, never the key


def test_the_keys_pytest_picks_fail_the_check_with_debug_off() -> None:
    """Under pytest the settings fall back to the development keys; with DEBUG off that is never a site."""
    environ = PRODUCTION | {"SECRET_KEY": "", "FLEETUI_CREDENTIALS_KEY": "", "PYTEST_VERSION": "9"}
    result = check_deploy("ERROR", **environ)

    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "fleetui.E002" in output and "fleetui.E003" in output and "development default" in output


def test_debug_on_takes_the_development_keys_without_an_error() -> None:
    result = check_deploy(
        "ERROR", **(PRODUCTION | {"DEBUG": "1", "SECRET_KEY": "", "FLEETUI_CREDENTIALS_KEY": ""})
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "security.W018" in result.stderr + result.stdout  # Django's own warning about DEBUG
