"""Upstream controllers run against a real hub as child processes: the common part.

A `Controller` writes a kubeconfig of the hub's admin into its own directory, starts its binary with it
(the log beside it), waits until `ready()` holds, and stops it again. Subclasses say which binary, with
which arguments, and what ready means: `tests.realhub.upstream.PlacementController` (OCM) and
`tests.realhub.hubagent.HubAgent` (KubeFleet).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Self

import yaml

from core.lifecycle import Started
from tests.realhub.hub import STOP_TIMEOUT, RealHub, ServerProcess, wait_ready


def kubeconfig(hub: RealHub) -> dict[str, object]:
    """A kubeconfig of the hub's admin (client certificate), as controllers read one."""
    assert hub.credentials is not None, "start the hub first"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "realhub",
                "cluster": {"server": hub.server, "certificate-authority": str(hub.credentials.ca)},
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate": str(hub.credentials.client_cert),
                    "client-key": str(hub.credentials.client_key),
                },
            }
        ],
        "contexts": [{"name": "realhub", "context": {"cluster": "realhub", "user": "admin"}}],
        "current-context": "realhub",
    }


class Controller(Started):
    """One upstream controller process on `hub`, its kubeconfig and log in `directory`."""

    name = ""
    stop_grace = STOP_TIMEOUT

    def __init__(self, hub: RealHub, directory: Path | None = None) -> None:
        self.hub = hub
        self.binary = hub.bin_dir / self.name
        self.directory = directory or hub.workdir / self.name
        self.log = self.directory / f"{self.name}.log"
        self.started_in = 0.0
        self._process: ServerProcess | None = None

    def command(self, kubeconfig: Path) -> list[str]:
        """The arguments after the binary."""
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        """The process's environment; None inherits the test's."""
        return None

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self) -> Self:
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "kubeconfig"
        config.write_text(yaml.safe_dump(kubeconfig(self.hub)))
        began = time.monotonic()
        self._process = ServerProcess(
            self.name, [str(self.binary), *self.command(config)], self.log, env=self.environment()
        )
        try:
            wait_ready([self._process], self.ready)
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - began
        return self

    def _running(self) -> ServerProcess:
        assert self._process is not None, "start() first"
        return self._process

    def check_alive(self) -> None:
        self._running().check_alive()

    def tail(self) -> str:
        return self._process.tail() if self._process is not None else ""

    def rss_bytes(self) -> int:
        return self._running().rss_bytes()

    @property
    def pid(self) -> int:
        return self._running().popen.pid

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop(grace=self.stop_grace)
            self._process = None
