"""`manage.py check --deploy` passes with production settings (TLS on, DEBUG off, real keys)."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent


def check_deploy(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTEST_VERSION"} | env
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
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
