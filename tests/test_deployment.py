"""The production topology: docker-compose.yml validates, and `make up` / `make down` bring the same
processes up on this machine against the real PostgreSQL and Redis."""

import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.conftest import IN_CI, require_service
from tests.servers import free_port, on_redis_database

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = {"web", "worker", "beat", "watch"}


def compose_command() -> list[str]:
    """`docker compose` (v2) or Debian's `docker-compose` (v1); CI installs the latter."""
    if (
        shutil.which("docker")
        and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
    ):
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if IN_CI:
        pytest.fail(
            "neither `docker compose` nor `docker-compose` is installed; .ci/run installs docker-compose"
        )
    pytest.skip("no docker compose here")


def test_compose_file_validates_with_the_example_environment(tmp_path: Path) -> None:
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")

    result = subprocess.run(
        [*compose_command(), "config", "-q"], cwd=tmp_path, capture_output=True, text=True
    )

    assert result.returncode == 0, result.stderr


def test_compose_runs_every_process_with_health_checks() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]

    assert set(services) == {"postgres", "redis", *APP_SERVICES}
    assert services["worker"]["deploy"]["replicas"] == 2
    # the workers' niceness orders nothing outside their containers: their CPU weight yields instead
    assert services["worker"]["cpu_shares"] < services["web"].get("cpu_shares", 1024)
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    for name in APP_SERVICES:
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert services[name]["env_file"] == ".env"


def test_procfile_matches_the_compose_topology() -> None:
    processes = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line and line[0] != "#"
    )

    assert set(processes) == {"web", "worker1", "worker2", "beat", "watch"}
    assert "gunicorn fleetui.wsgi" in processes["web"]
    assert all("--concurrency 1" in processes[f"worker{n}"] for n in (1, 2))


def make_up_and_down(tmp_path: Path, settings: list[str], *make_args: str) -> str:
    """`make up` with these .env lines, its health probe, then `make down`; returns the processes' log."""
    port = free_port()
    env_file, pid_file, log_file = tmp_path / "up.env", tmp_path / "up.pid", tmp_path / "up.log"
    lines = ["SECRET_KEY=" + "k" * 60, "DEBUG=0", f"WEB_BIND=127.0.0.1:{port}", *settings]
    env_file.write_text("\n".join(lines) + "\n")
    make = ["make", "-s", f"DOTENV={env_file}", f"UP_PID={pid_file}", f"UP_LOG={log_file}", *make_args]
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    try:
        up = subprocess.run([*make, "up"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        assert up.returncode == 0, up.stdout + up.stderr + log_file.read_text()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            assert answer.status == 200
        pid = int(pid_file.read_text())
    finally:
        down = subprocess.run([*make, "down"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    log = log_file.read_text()
    for process in ("web.1", "worker1.1", "worker2.1", "beat.1", "watch.1"):
        assert f"{process} started" in log and f"{process} stopped" in log, process
    assert not pid_file.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return up.stdout + up.stderr + log


def _separate_services(database_url: str, broker_url: str) -> tuple[str, str]:
    """A database and a Redis database of their own, so the topology's beat leaves no work for the tests."""
    return database_url.rsplit("/", 1)[0] + "/fleetui_make_up_test", on_redis_database(broker_url, 11)


@pytest.mark.services
def test_make_up_starts_the_topology_and_make_down_stops_it(tmp_path: Path) -> None:
    database_url, broker_url = _separate_services(
        require_service("DATABASE_URL", "the PostgreSQL `make up` runs against"),
        require_service("CELERY_BROKER_URL", "the Redis `make up` runs against"),
    )

    output = make_up_and_down(tmp_path, [f"DATABASE_URL={database_url}", f"CELERY_BROKER_URL={broker_url}"])

    assert "using the project's own services" not in output


@pytest.mark.services
def test_make_up_uses_the_projects_own_services_when_env_names_none(tmp_path: Path) -> None:
    database_url, broker_url = _separate_services(
        require_service("DATABASE_URL", "the PostgreSQL `make services` runs"),
        require_service("CELERY_BROKER_URL", "the Redis `make services` runs"),
    )
    # what `make services` wrote, pointed at the separate databases
    services_env = tmp_path / "services.env"
    services_env.write_text(f"DATABASE_URL={database_url}\nCELERY_BROKER_URL={broker_url}\n")

    output = make_up_and_down(
        tmp_path, ["DATABASE_URL=", "CELERY_BROKER_URL="], f"SERVICES_ENV={services_env}"
    )

    assert "using the project's own services" in output
    assert "Redis already answers" in output or "Redis on 127.0.0.1" in output
