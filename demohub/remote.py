"""`RemoteHub`: a `DemoHub` in a process of its own, driven over a pipe.

A benchmark that runs the dashboard's processes beside the hub wants the hub off its own interpreter
(a hub serving 50,000 clusters and their heartbeats would otherwise share one GIL with what it
measures), yet still steer it: pause heartbeats, write a label at a known moment, read its window.
The child is started with the `spawn` method, so it imports only the demo hub, never the caller's
state. `call("store.patch", ...)` runs that attribute of the child's DemoHub and answers its result
(anything picklable; an attribute that is not callable, such as "store.resource_version", is answered
as it is); an exception in the child is raised again here as `RemoteError`.
"""

from __future__ import annotations

import multiprocessing
import operator
import traceback
from multiprocessing.connection import Connection
from typing import Any, Self

from core.lifecycle import Started
from demohub.hub import DemoHub, own_process_collector

# How long a call may take: a list of every object of a 50,000-cluster hub is the slowest.
CALL_TIMEOUT = 600.0


class RemoteError(RuntimeError):
    """A call that raised in the hub's process; the message holds its traceback there."""


def _serve(connection: Connection, options: dict[str, Any]) -> None:
    """The child: build and start the hub, answer its address, then run calls until told to stop."""
    hub = DemoHub(**options)
    own_process_collector()
    try:
        hub.start()
        connection.send(("ok", {"url": hub.url, "seeded": hub.seeded}))
        while (request := connection.recv()) is not None:
            path, args, kwargs = request
            try:
                found = operator.attrgetter(path)(hub)
                connection.send(("ok", found(*args, **kwargs) if callable(found) else found))
            except Exception:  # noqa: BLE001 - any failure goes back to the caller, the hub keeps serving
                connection.send(("error", traceback.format_exc()))
    finally:
        hub.stop()


class RemoteHub(Started):
    """Start with `start()` (or as a context manager); `url`, `seeded` and `pid` once started."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._connection: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self.url = ""
        self.seeded: dict[str, int] = {}

    @property
    def pid(self) -> int:
        if self._process is None or self._process.pid is None:
            raise RuntimeError("the remote hub is not running; call start() first")
        return self._process.pid

    def start(self) -> Self:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs, self._options), name="demo-hub")
        self._process.start()
        theirs.close()
        self._connection = ours
        started = self._answer(CALL_TIMEOUT)
        self.url, self.seeded = started["url"], started["seeded"]
        return self

    def call(self, path: str, *args: Any, **kwargs: Any) -> Any:
        """Run `path` (an attribute of the hub, dotted: "churn.heartbeats") in the hub's process, or read
        it when it is not callable."""
        if self._connection is None:
            raise RuntimeError("the remote hub is not running; call start() first")
        self._connection.send((path, args, kwargs))
        return self._answer(CALL_TIMEOUT)

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.send(None)
            self._connection.close()
        if self._process is not None:
            self._process.join(30)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        self._connection, self._process = None, None

    def _answer(self, timeout: float) -> Any:
        assert self._connection is not None
        if not self._connection.poll(timeout):
            raise RemoteError(f"the demo hub's process did not answer within {timeout:.0f} s")
        status, value = self._connection.recv()
        if status == "error":
            raise RemoteError(value)
        return value
