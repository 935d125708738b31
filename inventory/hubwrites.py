"""Every automatic write to a hub, as an optimistic-concurrency write that survives conflicts.

Other writers change the same objects as the dashboard (the hub's scheduler, a work applier, `kubectl`).
A write therefore carries the resourceVersion it was computed from; when the hub answers 409 Conflict,
the object is read again, the change is applied again to the fresh copy (the caller's `mutate`, which
touches the caller's fields only, and merges status conditions by type with `merge_conditions`), and
the write is retried after a short backoff, a bounded number of times. After the last attempt
`ConflictRetriesExhausted` (a HubError) is raised, so the caller's step fails visibly and is retried by
its runner; a conflict is never dropped as if the write had happened.

Edits a person makes in the editors (inventory.editing) do not come here: a stale human edit is answered
with its 409, to be looked at again, not re-applied blindly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from inventory.hubclient import HubClient, HubError

logger = logging.getLogger(__name__)

CONFLICT = 409
# client-go's retry.DefaultRetry (what kubectl and controllers use) makes 5 attempts.
ATTEMPTS = 5
# Seconds before the first retry, doubling after each further conflict: a busy object settles quickly,
# and the whole sequence stays far below the request timeout of one step.
BACKOFF_FIRST = 0.01

Mutate = Callable[[dict[str, Any]], dict[str, Any] | None]


class ConflictRetriesExhausted(HubError):
    """Every attempt met a 409: another writer kept changing the object. The caller's step fails and its
    runner tries it again later."""

    def __init__(self, message: str, conflicts: int) -> None:
        super().__init__(message, CONFLICT)
        self.conflicts = conflicts


@dataclass(frozen=True)
class Written:
    """The object as the hub holds it after the write (or as read, when nothing needed writing), whether
    a write happened, and how many conflicts were met on the way (each one resolved)."""

    obj: dict[str, Any]
    written: bool
    conflicts: int


class _Totals:
    """Process-wide figures of conflicts met, retries made and writes given up: the bench prints them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = {"writes": 0, "conflicts": 0, "retries": 0, "exhausted": 0}

    def add(self, **counts: int) -> None:
        with self._lock:
            for key, value in counts.items():
                self._counts[key] += value

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


totals = _Totals()


def merge_conditions(
    theirs: Iterable[Mapping[str, Any]], ours: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """`theirs` with each of `ours` replacing the condition of its type (in place) or appended: the
    conditions other writers own are kept whatever they are; a merge patch replaces a list whole, so
    the whole merged list is what gets written."""
    mine = {str(c.get("type")): dict(c) for c in ours}
    merged = [mine.pop(str(c.get("type")), dict(c)) for c in theirs]
    return merged + list(mine.values())


def update_with_retry(
    client: HubClient,
    kind: str,
    name: str,
    mutate: Mutate,
    *,
    namespace: str = "",
    subresource: str | None = None,
    current: dict[str, Any] | None = None,
    attempts: int = ATTEMPTS,
    backoff: float = BACKOFF_FIRST,
) -> Written:
    """Apply `mutate` to the object and write it conditionally, starting over from a fresh read on 409.

    `mutate(obj)` answers the JSON merge patch that takes `obj` (the hub's copy) to what the caller
    wants, or None when `obj` needs nothing; it must depend only on `obj` and the caller's own desired
    state, since it runs again on every fresh copy. `current` is a copy already read (a list's item),
    used for the first attempt instead of a GET. `subresource="status"` writes the status subresource.
    Raises ConflictRetriesExhausted after `attempts` conflicts, HubError for any other refusal.
    """
    status = subresource == "status"
    what = f"{kind} {namespace + '/' if namespace else ''}{name}{'/status' if status else ''}"
    conflicts = 0
    while True:
        obj = current if current is not None else client.get_object(kind, name, namespace)
        current = None
        patch = mutate(obj)
        if patch is None:
            totals.add(conflicts=conflicts)
            return Written(obj, False, conflicts)
        version = (obj.get("metadata") or {}).get("resourceVersion")
        metadata = {**(patch.get("metadata") or {}), "resourceVersion": version}
        try:
            written = client.patch_object(
                kind, name, {**patch, "metadata": metadata}, namespace=namespace, status=status
            )
        except HubError as exc:
            if exc.status != CONFLICT:
                raise
            conflicts += 1
            if conflicts >= attempts:
                totals.add(conflicts=conflicts, retries=conflicts - 1, exhausted=1)
                logger.warning(
                    "hub %s: %s still conflicting after %d attempts", client.hub.name, what, attempts
                )
                raise ConflictRetriesExhausted(
                    f"hub {client.hub.name}: {what}: another writer changed it before each of {attempts} "
                    "attempts (409 Conflict); the write is tried again with the next step",
                    conflicts,
                ) from exc
            delay = backoff * 2 ** (conflicts - 1)
            logger.info(
                "hub %s: %s changed since it was read (409 Conflict %d of %d): read again and retry in %.3fs",
                client.hub.name,
                what,
                conflicts,
                attempts,
                delay,
            )
            time.sleep(delay)
            continue
        totals.add(writes=1, conflicts=conflicts, retries=conflicts)
        return Written(written, True, conflicts)
