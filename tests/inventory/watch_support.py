"""A real watcher on a synced demo hub row, for tests that write beside it, and a poll with a deadline."""

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from demohub import DemoHub
from inventory.models import Hub
from inventory.watch import HubWatcher
from tests.factories import synced_demo_hub_row


@contextmanager
def watched(demo_hub: DemoHub) -> Iterator[tuple[Hub, HubWatcher]]:
    """The demo hub synced into a row and watched by its own threads until the block ends."""
    hub = synced_demo_hub_row(demo_hub)
    stop = threading.Event()
    watcher = HubWatcher(hub, stop, timeout_seconds=5).start()
    try:
        yield hub, watcher
    finally:
        stop.set()
        watcher.join(30)


def wait_for(condition: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "did not happen in time"
        time.sleep(0.05)
