"""Servers and processes of one test alone: a free loopback port, a redis-server for taking a broker
down, and a test script run as a process of its own on a SQLite file.

The shared Redis of the test run is never stopped; a test's own listens on a free loopback port, keeps
nothing on disk, and is killed by its fixture (`own_redis` in tests/conftest.py).
"""

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from kombu.transport.redis import PRIORITY_STEPS, Channel

BASE_DIR = Path(__file__).resolve().parents[1]


def run_on_sqlite(module: str, database: Path, *args: str, broker_url: str = "") -> tuple[Any, str]:
    """Run `python -m module args` with the site on the SQLite file `database` (and this broker, or
    in-process tasks), as `make run` has it; answers the JSON it printed and its stderr."""
    return run_module(module, f"sqlite:///{database}", *args, broker_url=broker_url)


def run_module(
    module: str, database_url: str, *args: str, broker_url: str = "", timeout: float = 300
) -> tuple[Any, str]:
    """Run `python -m module args` with the site on `database_url` (and this broker, or in-process
    tasks); answers the JSON it printed and its stderr. Fails after `timeout` seconds."""
    environ = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environ |= {"DEBUG": "1", "DATABASE_URL": database_url}
    if broker_url:
        environ["CELERY_BROKER_URL"] = broker_url
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout), result.stderr


def on_redis_database(url: str, database: int) -> str:
    """The Redis URL `url` with its database number replaced by `database`."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """Not started until `start()`; `stop()` kills it, and `start()` again serves the same port."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not answer within 10 s"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def queued(self, queue: str = "celery") -> int:
        """Messages waiting in a Celery queue (the default one unless named), at every priority: the
        Redis transport keeps each priority step but the first in a list of its own."""
        client = redis.Redis.from_url(self.url)
        lists = [queue, *(f"{queue}{Channel.sep}{step}" for step in PRIORITY_STEPS if step)]
        return sum(int(client.llen(name)) for name in lists)


@contextmanager
def celery_worker(env: dict[str, str], queue: str, log: Path, pool: str) -> Iterator[subprocess.Popen[bytes]]:
    """`celery worker --concurrency 1` in its own process, taking `queue` alone and logging to `log`;
    stopped (by its pid) on the way out unless already dead."""
    command = [sys.executable, "-m", "celery", "-A", "fleetui", "worker", "--pool", pool, "-c", "1"]
    command += ["-Q", queue, "-n", f"{log.stem}@%h", "--without-gossip", "--without-mingle", "-l", "INFO"]
    with log.open("ab") as output:
        process = subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
