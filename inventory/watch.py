"""Live updates: one watch per hub and kind, its events written through the sync's row path.

A watch resumes from the resourceVersion of the last complete list; 410 Gone re-lists the hub (a
SyncRun with trigger watch-relist) and resumes from the new versions; a dropped connection, or a batch
the database refused, reconnects with exponential backoff from the last batch written.

Events are written in batches, one transaction each: a background thread reads the stream while the
watching thread writes what has arrived, so a burst (a hub's heartbeats, a label change on many
clusters) costs a few transactions, not one per event, and a lone event waits at most BATCH_LINGER.
"""

import logging
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError, connection

from inventory.hubclient import GoneError, HubClient, HubError, Kind, served_kinds
from inventory.models import Hub, SyncRun
from inventory.sync import SyncFailed, apply_events
from inventory.tasks import run_locked_sync

logger = logging.getLogger(__name__)

BACKOFF_START = 1.0
BACKOFF_CAP = 30.0
# At most this many events in one transaction, so a long burst still commits as it goes.
BATCH_MAX = 500
# The first event of a batch waits this long for the rest of its burst.
BATCH_LINGER = 0.05
# How often a thread blocked on the stream looks at `stop`.
STOP_POLL = 0.5
WRITTEN = ("ADDED", "MODIFIED", "DELETED")


class EventStream:
    """One watch read by a background thread; the caller takes its events in batches (`batches`).

    The reader never touches the database, so the rows are written by the thread that watches.
    """

    _END = object()

    def __init__(self, hub: Hub, kind: Kind, resource_version: str, timeout_seconds: int) -> None:
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=BATCH_MAX * 4)
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=self._read,
            args=(hub, kind, resource_version, timeout_seconds),
            name=f"watch-read-{hub.name}-{kind.name}",
            daemon=True,
        )
        self._thread.start()

    def _read(self, hub: Hub, kind: Kind, resource_version: str, timeout_seconds: int) -> None:
        try:
            with HubClient(hub) as client:
                for event in client.watch(kind, resource_version, timeout_seconds):
                    if not self._put(event):
                        return
        except Exception as exc:  # noqa: BLE001 - raised again in the watching thread
            self._put(exc)
            return
        self._put(self._END)

    def _put(self, item: Any) -> bool:
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=STOP_POLL)
                return True
            except queue.Full:
                continue
        return False

    def batches(self, stop: threading.Event) -> Iterator[list[dict[str, Any]]]:
        """Lists of events until the server ends the watch or `stop` is set: a list ends at BATCH_MAX
        events, or once BATCH_LINGER has passed since its first event and none is waiting. Raises what
        the watch raised, after the events that came before it."""
        while not stop.is_set():
            try:
                item = self._queue.get(timeout=STOP_POLL)
            except queue.Empty:
                continue
            batch: list[dict[str, Any]] = []
            deadline = time.monotonic() + BATCH_LINGER
            while isinstance(item, dict):
                batch.append(item)
                if len(batch) >= BATCH_MAX:
                    item = None
                    break
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    item = None
            if batch:
                yield batch
            if item is self._END:
                return
            if isinstance(item, Exception):
                raise item

    def close(self) -> None:
        """Let the reader go; it ends with its connection, at the latest when the watch times out."""
        self._closed.set()


class HubWatcher:
    """Watches every kind one hub serves, from background threads, until `stop` is set."""

    def __init__(self, hub: Hub, stop: threading.Event, timeout_seconds: int = 60) -> None:
        self.hub_id, self.name = hub.pk, hub.name
        self.kinds = served_kinds(hub)
        self.stop = stop
        self.timeout_seconds = timeout_seconds
        self._relist_lock = threading.Lock()
        # bumped by every re-list, so threads that saw the same 410 re-list once between them
        self._relists = 0
        # per kind: the resourceVersion of the last batch written, where a lost watch resumes
        self.versions: dict[str, str] = {}
        self.threads: list[threading.Thread] = []

    def start(self) -> "HubWatcher":
        for kind in self.kinds:
            thread = threading.Thread(target=self._run, args=(kind,), name=f"watch-{self.name}-{kind.name}")
            thread.daemon = True
            thread.start()
            self.threads.append(thread)
        logger.info("hub %s: watching %s", self.name, ", ".join(kind.name for kind in self.kinds))
        return self

    def join(self, timeout: float | None = None) -> None:
        for thread in self.threads:
            thread.join(timeout)

    def _run(self, kind: Kind) -> None:
        try:
            self.run_kind(kind)
        finally:
            connection.close()  # each thread has its own database connection

    def run_kind(self, kind: Kind) -> None:
        """Watch one kind in the calling thread until `stop` is set."""
        backoff = BACKOFF_START
        relists = -1
        while not self.stop.is_set():
            try:
                hub = Hub.objects.get(pk=self.hub_id)
                if relists != self._relists:
                    # first start or after a re-list: resume from the versions that list recorded
                    relists = self._relists
                    self.versions[kind.name] = hub.resource_versions.get(kind.name, "")
                if not self.versions[kind.name]:
                    raise GoneError(f"no list of {kind.name} to resume from yet")
                self._follow(hub, kind)
                backoff = BACKOFF_START
            except GoneError as exc:
                logger.info("hub %s: %s; re-listing", self.name, exc)
                if not self._relist(relists):
                    self.stop.wait(backoff)
                    backoff = min(backoff * 2, BACKOFF_CAP)
            except HubError as exc:
                logger.warning("hub %s: watch lost: %s; reconnecting in %.0fs", self.name, exc, backoff)
                self.stop.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_CAP)
            except DatabaseError as exc:
                # nothing of the refused batch was written: the hub sends it again from the last version
                logger.warning(
                    "hub %s: %s events not written: %s; resuming in %.0fs", self.name, kind.name, exc, backoff
                )
                connection.close_if_unusable_or_obsolete()
                self.stop.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_CAP)

    def _follow(self, hub: Hub, kind: Kind) -> None:
        """Write events in batches until the server ends the watch, recording the version written."""
        stream = EventStream(hub, kind, self.versions[kind.name], self.timeout_seconds)
        try:
            for batch in stream.batches(self.stop):
                events = [(e["type"], e["object"]) for e in batch if e["type"] in WRITTEN]
                if events:
                    apply_events(hub, kind, events)
                    logger.debug(
                        "hub %s: %d %s events, last %s",
                        self.name,
                        len(events),
                        kind.name,
                        _name(events[-1][1]),
                    )
                for event in reversed(batch):
                    if version := (event["object"].get("metadata") or {}).get("resourceVersion"):
                        self.versions[kind.name] = version
                        break
        finally:
            stream.close()

    def _relist(self, relists_seen: int) -> bool:
        """One re-list for every thread that hit the same 410; False when it could not run now."""
        with self._relist_lock:
            if self._relists != relists_seen:
                return True
            try:
                run = run_locked_sync(self.hub_id, SyncRun.Trigger.WATCH_RELIST)
            except SyncFailed as exc:
                logger.warning("hub %s: re-list failed: %s", self.name, exc)
                return False
            if run is None:
                return False  # another sync holds the lock; its versions are picked up on the next try
            self._relists += 1
            return True


def _name(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return "/".join(filter(None, (metadata.get("namespace"), metadata.get("name"))))


def watch_hubs(hubs: list[Hub], stop: threading.Event, timeout_seconds: int = 60) -> list[HubWatcher]:
    """Start a watcher per hub; set `stop` and join them to end."""
    return [HubWatcher(hub, stop, timeout_seconds).start() for hub in hubs]
