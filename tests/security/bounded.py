"""The site and its commands run as processes of their own under a memory limit, for hostile-input tests.

`LiveSite` serves the site with gunicorn (the production server: `Procfile`'s web process, one sync
worker) on the test database; `run_command` runs `manage.py COMMAND` the same way. Both processes get an
address-space limit (`MEMORY_LIMIT`), so a resource bomb ends in a MemoryError inside that process
instead of taking the machine down, and both report their peak resident memory so a test can bound it.

Data a test writes must be committed to be seen by these processes: use `transactional_db`.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import requests
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from tests.servers import BASE_DIR, free_port

MEMORY_LIMIT = 1536 * 1024 * 1024
# a worker's timeout well above any bounded answer, so a slow answer is measured, not cut off
WORKER_TIMEOUT_SECONDS = 120


def limit_memory() -> None:
    """`preexec_fn` of every process started here: the address-space limit, inherited by its children."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_database_url() -> str:
    """DATABASE_URL of the database this test run uses (PostgreSQL's test database or the SQLite file)."""
    settings = connection.settings_dict
    if settings["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{settings['NAME']}"
    credentials = quote(settings["USER"] or "", safe="")
    if settings["PASSWORD"]:
        credentials += ":" + quote(settings["PASSWORD"], safe="")
    return f"postgres://{credentials}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"


def environment() -> dict[str, str]:
    """This process's environment, on the test database and without debug pages; one BLAS thread so
    the address-space limit is not spent on thread arenas."""
    return os.environ | {"DATABASE_URL": test_database_url(), "DEBUG": "0", "OPENBLAS_NUM_THREADS": "1"}


def peak_rss(pid: int) -> int:
    """The highest resident memory (bytes) process `pid` has had so far (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


@dataclass(frozen=True)
class Answer:
    """A response of the live site, with how long it took."""

    response: requests.Response
    elapsed: float


class LiveSite:
    """gunicorn serving the site on a free loopback port until `stop()`."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="fleetui-live-", suffix=".log", delete=False)  # noqa: SIM115
        command = [sys.executable, "-m", "gunicorn", "fleetui.wsgi", "--bind", f"127.0.0.1:{self.port}"]
        command += ["--workers", "1", "--timeout", str(WORKER_TIMEOUT_SECONDS)]
        self.process = subprocess.Popen(
            command,
            cwd=BASE_DIR,
            env=environment(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=limit_memory,
        )
        self._wait_until_serving()

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            assert self.process.poll() is None, f"gunicorn exited: {self.output()}"
            try:
                requests.get(f"{self.url}/healthz", timeout=5)
                return
            except (requests.ConnectionError, requests.Timeout):
                assert time.monotonic() < deadline, f"gunicorn did not answer within 60 s: {self.output()}"
                time.sleep(0.2)

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-5000:]

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        return [int(pid) for pid in children.split()]

    def peak_rss(self) -> int:
        """The highest resident memory of the master and its worker(s) so far, in bytes."""
        return max(peak_rss(pid) for pid in [self.process.pid, *self.worker_pids()])

    def alive(self) -> bool:
        return self.process.poll() is None and requests.get(f"{self.url}/healthz", timeout=10).ok

    def session(self, user: User) -> requests.Session:
        """A browser-like session logged in as `user` (its session cookie), with a CSRF token."""
        client = Client()
        client.force_login(user)
        session = requests.Session()
        session.cookies.set("sessionid", client.cookies["sessionid"].value)
        session.get(f"{self.url}/", timeout=30)
        session.headers["X-CSRFToken"] = session.cookies.get("csrftoken", "")
        session.headers["Referer"] = f"{self.url}/"
        return session

    def request(self, session: requests.Session, method: str, path: str, **kwargs: object) -> Answer:
        started = time.monotonic()
        response = session.request(method, f"{self.url}{path}", timeout=WORKER_TIMEOUT_SECONDS, **kwargs)
        return Answer(response, time.monotonic() - started)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()
        os.unlink(self.log.name)


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    peak_rss: int  # bytes


def run_command(*args: str, stdin: str = "", timeout: float = 120) -> CommandResult:
    """`manage.py ARGS` on the test database under the memory limit, with its exit code, output, time
    and peak resident memory (from the child's own rusage, so other children do not count)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=BASE_DIR,
            env=environment(),
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            preexec_fn=limit_memory,
        )
        killer = threading.Timer(timeout, process.kill)
        killer.start()
        try:
            assert process.stdin is not None
            process.stdin.write(stdin.encode())
            process.stdin.close()
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            killer.cancel()
        elapsed = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return CommandResult(
            process.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            elapsed,
            usage.ru_maxrss * 1024,
        )
