"""Live updates: one watch per hub and kind, each event written through the sync's row path.

A watch resumes from the resourceVersion of the last complete list; 410 Gone re-lists the hub (a
SyncRun with trigger watch-relist) and resumes from the new versions; a dropped connection reconnects
with exponential backoff.
"""

import logging
import threading
from typing import Any

from django.db import connection

from inventory.hubclient import GoneError, HubClient, HubError, Kind, served_kinds
from inventory.models import Hub, SyncRun
from inventory.sync import SyncFailed, apply_event
from inventory.tasks import run_locked_sync

logger = logging.getLogger(__name__)

BACKOFF_START = 1.0
BACKOFF_CAP = 30.0


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
        relists, resource_version = -1, ""
        while not self.stop.is_set():
            hub = Hub.objects.get(pk=self.hub_id)
            if relists != self._relists:
                # first start or after a re-list: resume from the versions that list recorded
                relists, resource_version = self._relists, hub.resource_versions.get(kind.name, "")
            try:
                if not resource_version:
                    raise GoneError(f"no list of {kind.name} to resume from yet")
                resource_version = self._follow(hub, kind, resource_version)
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

    def _follow(self, hub: Hub, kind: Kind, resource_version: str) -> str:
        """Apply events until the server ends the watch; answers the version to resume from."""
        with HubClient(hub) as client:
            for event in client.watch(kind, resource_version, self.timeout_seconds):
                obj = event["object"]
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    apply_event(hub, kind, event["type"], obj)
                    logger.debug("hub %s: %s %s %s", self.name, event["type"], kind.name, _name(obj))
                resource_version = (obj.get("metadata") or {}).get("resourceVersion") or resource_version
                if self.stop.is_set():
                    break
        return resource_version

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
