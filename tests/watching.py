"""Running a real `HubWatcher` on one kind in a test until a signal says it heard what the test waits for."""

import threading
from collections.abc import Callable

from django.dispatch import Signal

from inventory.hubclient import KINDS_BY_NAME
from inventory.models import Hub
from inventory.watch import HubWatcher


def watch_kind_until(
    hub: Hub, kind: str, signal: Signal, heard: Callable[..., bool], seconds: float = 15
) -> None:
    """Watch `kind` on `hub` until `heard(**arguments)` of a `signal` it sends answers true; a watch that
    never hears it stops after `seconds` (the test's assertions then fail), so it never hangs."""
    stop = threading.Event()
    safety = threading.Timer(seconds, stop.set)

    def receiver(sender: object, **arguments: object) -> None:
        if heard(**arguments):
            stop.set()

    signal.connect(receiver)
    safety.start()
    try:
        HubWatcher(hub, stop, timeout_seconds=5).run_kind(KINDS_BY_NAME[kind])
    finally:
        safety.cancel()
        signal.disconnect(receiver)
