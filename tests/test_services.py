"""`make services`: the project's own PostgreSQL and Redis, reused by a second start."""

import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ROOT / "scripts" / "services"
ENV_FILE = ROOT / "var" / "services" / "env"


def read_env(path: Path) -> dict[str, str]:
    lines = (line.split("=", 1) for line in path.read_text().splitlines() if line and line[0] != "#")
    return {name: value for name, value in lines}


@pytest.fixture
def services_env() -> dict[str, str]:
    """var/services/env, when it names the PostgreSQL server this test run uses."""
    server = require_service("DATABASE_URL", "the project's own PostgreSQL").rsplit("/", 1)[0]
    if not ENV_FILE.exists() or read_env(ENV_FILE)["DATABASE_URL"].rsplit("/", 1)[0] != server:
        pytest.skip("this run uses services other than those of scripts/services")
    return read_env(ENV_FILE)


@pytest.mark.services
def test_a_second_start_reuses_the_running_servers(services_env: dict[str, str]) -> None:
    again = subprocess.run([SERVICES, "start"], capture_output=True, text=True, timeout=120)

    assert again.returncode == 0, again.stderr
    assert "PostgreSQL already answers" in again.stderr and "Redis already answers" in again.stderr
    assert read_env(ENV_FILE) == services_env


@pytest.mark.services
def test_the_servers_listen_on_loopback_away_from_the_standard_ports(services_env: dict[str, str]) -> None:
    assert services_env["DATABASE_URL"].startswith("postgres://postgres@127.0.0.1:")
    assert services_env["CELERY_BROKER_URL"].startswith("redis://127.0.0.1:")
    assert {services_env["FLEETUI_PG_PORT"], services_env["FLEETUI_REDIS_PORT"]}.isdisjoint({"5432", "6379"})
    status = subprocess.run([SERVICES, "status"], capture_output=True, text=True, timeout=30)
    assert status.returncode == 0, status.stderr


@pytest.mark.services
def test_postgresql_runs_as_an_unprivileged_user(services_env: dict[str, str]) -> None:
    # postmaster.pid: the server's pid on its first line, its port on the fourth
    pid_file = (ROOT / "var" / "services" / "postgres" / "data" / "postmaster.pid").read_text().splitlines()
    owner = next(
        line.split()[1]
        for line in Path(f"/proc/{pid_file[0]}/status").read_text().splitlines()
        if line.startswith("Uid:")
    )

    assert pid_file[3] == services_env["FLEETUI_PG_PORT"]
    assert owner != "0"
