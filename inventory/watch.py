"""Live updates: one watch per hub and kind, its events written through the sync's row path.

A watch resumes from the resourceVersion of the last complete list; 410 Gone re-lists the hub (a
SyncRun with trigger watch-relist) and resumes from the new versions; a kind the last sync could not
list because the hub refused it waits for a sync that lists it instead of re-listing the hub again; a
dropped connection, a database that is unavailable, or any other failure of the stream reconnects with
exponential backoff (with jitter) from the last batch written. The hub is untrusted: an event that
cannot be written (a malformed object, a bug it triggers) is logged with its object's identity, counted
and passed over, so a watch thread ends only when it is told to stop, or when its hub is removed.

Events are written in batches, one transaction each: a background thread reads the stream while the
watching thread writes what has arrived, so a burst (a hub's heartbeats, a label change on many
clusters) costs a few transactions, not one per event, and a lone event waits at most BATCH_LINGER.
"""

import logging
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError, connection

from inventory.hubclient import GoneError, HubClient, HubError, Kind, served_kinds
from inventory.models import Hub, SyncRun
from inventory.sync import Event, SyncFailed, apply_events, object_name
from inventory.tasks import run_locked_sync
from inventory.validation import RESOURCE_VERSION_MAX, shown

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
# The database itself failing (down, connection lost): the batch is written again once it is back.
UNAVAILABLE = (OperationalError, InterfaceError)


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
        # per kind: events passed over because they could not be written, and streams restarted after
        # an unexpected failure
        self.failed_events: Counter[str] = Counter()
        self.restarts: Counter[str] = Counter()

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
        except BaseException:
            logger.critical(
                "hub %s: the %s watch thread ended by an error", self.name, kind.name, exc_info=True
            )
            raise
        finally:
            connection.close()  # each thread has its own database connection
        logger.info("hub %s: %s watch stopped", self.name, kind.name)

    def run_kind(self, kind: Kind) -> None:
        """Watch one kind in the calling thread until `stop` is set."""
        backoff = BACKOFF_START
        relists = -1
        while not self.stop.is_set():
            try:
                hub = Hub.objects.filter(pk=self.hub_id).first()
                if hub is None:
                    logger.warning("hub %s: removed; its %s watch ends", self.name, kind.name)
                    return
                if relists != self._relists:
                    # first start or after a re-list: resume from the versions that list recorded
                    relists = self._relists
                    self.versions[kind.name] = hub.resource_versions.get(kind.name, "")
                if not self.versions[kind.name]:
                    if self._refused(hub, kind):
                        # re-listing the hub would be refused again; the periodic sync lists the kind once
                        # the hub grants it, and the watch resumes from that list
                        relists = -1
                        backoff = self._pause(BACKOFF_CAP)
                        continue
                    raise GoneError(f"no list of {kind.name} to resume from yet")
                self._follow(hub, kind)
                backoff = BACKOFF_START
            except GoneError as exc:
                logger.info("hub %s: %s; re-listing", self.name, exc)
                if not self._relist(relists):
                    backoff = self._pause(backoff)
            except HubError as exc:
                logger.warning("hub %s: watch lost: %s; reconnecting in %.0fs", self.name, exc, backoff)
                backoff = self._pause(backoff)
            except DatabaseError as exc:
                # nothing of the refused batch was written: the hub sends it again from the last version
                logger.warning(
                    "hub %s: %s events not written: %s; resuming in %.0fs", self.name, kind.name, exc, backoff
                )
                connection.close_if_unusable_or_obsolete()
                backoff = self._pause(backoff)
            except Exception:
                # a failure nobody foresaw (a bug a hub object triggers): the stream starts again, from the
                # last batch written, rather than the thread dying with its watch
                self.restarts[kind.name] += 1
                logger.exception(
                    "hub %s: %s watch failed; restarting it in %.0fs", self.name, kind.name, backoff
                )
                connection.close_if_unusable_or_obsolete()
                backoff = self._pause(backoff)

    def _refused(self, hub: Hub, kind: Kind) -> bool:
        """Whether the hub's latest sync could not list `kind` because the hub refused it (the token
        lacks the verb, or the hub does not serve the kind)."""
        latest = SyncRun.objects.filter(hub=hub).exclude(state=SyncRun.State.RUNNING).first()
        return latest is not None and kind.name in dict(latest.kind_errors)

    def _pause(self, backoff: float) -> float:
        """Wait about `backoff` seconds (up to half less, at random, so the watches of many hubs and kinds
        do not reconnect in step) or until stopped; answers the next backoff, doubled up to the cap."""
        self.stop.wait(backoff * random.uniform(0.5, 1.0))
        return min(backoff * 2, BACKOFF_CAP)

    def _follow(self, hub: Hub, kind: Kind) -> None:
        """Write events in batches until the server ends the watch, recording the version written."""
        stream = EventStream(hub, kind, self.versions[kind.name], self.timeout_seconds)
        try:
            for batch in stream.batches(self.stop):
                written = [(e["type"], e.get("object")) for e in batch if e.get("type") in WRITTEN]
                for event_type, obj in written:
                    if not isinstance(obj, dict):
                        self._passed_over(kind, f"{event_type} event without an object: {shown(obj)}")
                events = [(event_type, obj) for event_type, obj in written if isinstance(obj, dict)]
                if events:
                    self._apply(hub, kind, events)
                    logger.debug(
                        "hub %s: %d %s events, last %s",
                        self.name,
                        len(events),
                        kind.name,
                        shown(object_name(events[-1][1])),
                    )
                for event in reversed(batch):
                    if version := _version(event):
                        self.versions[kind.name] = version
                        break
        finally:
            stream.close()

    def _apply(self, hub: Hub, kind: Kind, events: list[Event]) -> None:
        """Write a batch of events; when it fails for a reason of its own (not the database being
        unavailable), write its events one at a time, so a bad event costs itself alone."""
        try:
            apply_events(hub, kind, events)
            return
        except UNAVAILABLE:
            raise
        except Exception:
            if len(events) == 1:
                self._passed_over(kind, f"{events[0][0]} {shown(object_name(events[0][1]))} not written")
                return
            logger.warning(
                "hub %s: a batch of %d %s events failed; writing them one at a time",
                self.name,
                len(events),
                kind.name,
                exc_info=True,
            )
        for event in events:
            try:
                apply_events(hub, kind, [event])
            except UNAVAILABLE:
                raise
            except Exception:
                self._passed_over(kind, f"{event[0]} {shown(object_name(event[1]))} not written")

    def _passed_over(self, kind: Kind, what: str) -> None:
        """Count and log (with the exception being handled, if any) an event the watch goes past."""
        self.failed_events[kind.name] += 1
        logger.error("hub %s: %s event passed over: %s", self.name, kind.name, what, exc_info=True)

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


def _version(event: dict[str, Any]) -> str:
    """The resourceVersion an event carries, where a lost watch resumes ("" when it has none usable)."""
    obj = event.get("object")
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    version = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
    return version if isinstance(version, str) and len(version) <= RESOURCE_VERSION_MAX else ""


def watch_hubs(hubs: list[Hub], stop: threading.Event, timeout_seconds: int = 60) -> list[HubWatcher]:
    """Start a watcher per hub; set `stop` and join them to end."""
    return [HubWatcher(hub, stop, timeout_seconds).start() for hub in hubs]
