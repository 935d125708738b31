"""The demo hub's state: objects per resource, one global resourceVersion, and a watch window per kind.

Stored objects are never mutated after a write (each write stores a fresh copy), so lists, snapshots
and events can share them safely; callers of `list` must treat the items as read-only.

The watch window is kube-apiserver's watch cache: each kind keeps its recent events, at least
`retained_events` of them and every one younger than `window_seconds`, never more than `max_events`
(so memory stays bounded however fast the hub writes), and a watch from a resourceVersion whose
successors of that kind are no longer all there answers 410 Expired. One window per kind, as upstream
keeps one cache per resource: a burst of one kind (heartbeats) does not push another kind's watchers out.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import builtins
import copy
import itertools
import json
import random
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from demohub.patch import JSON_PATCH, MERGE_PATCH, PatchError, json_patch, merge_patch
from demohub.resources import BY_KIND, RESOURCES, Resource
from placement.scheduler.labels import LabelSelector

Key = tuple[str, str]  # (namespace, name); namespace is "" for cluster-scoped objects
ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
# What an injected concurrent writer leaves behind: an annotation counting its writes and, on status
# writes, a condition of its own; a client retrying its update must keep both.
CONCURRENT_WRITES_ANNOTATION = "demo.fleetui.io/concurrent-writes"
CONCURRENT_WRITER_CONDITION = "DemoConcurrentWriter"
# Kinds whose status holds no conditions (PlacementDecision's is its list of decisions).
_NO_STATUS_CONDITIONS = frozenset({"PlacementDecision"})
# Fields a client can never set: the server owns them.
SYSTEM_METADATA = ("uid", "creationTimestamp", "generation", "resourceVersion", "name", "namespace")
_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet
# kube-apiserver's watch cache: it grows to hold at least 75 s of events (eventFreshDuration), up to
# 100 * 1024 events per resource (the cache's upper capacity), and keeps 100 or more once grown.
WINDOW_SECONDS = 75.0
WINDOW_MAX_EVENTS = 100 * 1024


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock:
    """The hub's "now": a base clock (real time unless given) plus an offset that `advance` moves.

    Every timestamp the hub writes comes from here, so a test can freeze time (`Clock.frozen`) and
    step it, and seeding can rewind it to play a rollout's history forward.
    """

    def __init__(self, base: Callable[[], datetime] | None = None) -> None:
        self._base = base or (lambda: datetime.now(UTC))
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    @classmethod
    def frozen(cls, at: datetime) -> Clock:
        """A clock that stands still at `at` until advanced."""
        return cls(lambda: at)

    def __call__(self) -> datetime:
        with self._lock:
            return self._base() + self._offset

    def advance(self, seconds: float) -> datetime:
        """Move now by `seconds` (negative rewinds, which only seeding does); answers the new now."""
        with self._lock:
            self._offset += timedelta(seconds=seconds)
            return self._base() + self._offset


class ApiError(Exception):
    """A failed request, rendered as a `kind: Status` object with `code` and `reason`."""

    def __init__(
        self, code: int, reason: str, message: str, *, resource: Resource | None = None, name: str = ""
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.resource, self.name = resource, name

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.resource is not None:
            body["details"] = {"name": self.name, "group": self.resource.group, "kind": self.resource.plural}
        return body


def not_found(resource: Resource, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource.qualified} "{name}" not found', resource=resource, name=name)


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid(resource: Resource, name: str, message: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'{resource.kind}.{resource.group} "{name}" is invalid: {message}',
        resource=resource,
        name=name,
    )


@dataclass(frozen=True)
class Event:
    resource_version: int
    resource: Resource
    key: Key
    type: str
    obj: dict[str, Any]
    old: dict[str, Any] | None
    at: datetime  # the hub's time of the write, which the window's age counts from


@dataclass(frozen=True)
class WindowStats:
    """One kind's watch window: events held, the age of the oldest, and watches answered 410."""

    events: int
    oldest_seconds: float
    expired_watches: int


@dataclass(frozen=True)
class ListPage:
    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str | None
    remaining: int | None


@dataclass(frozen=True)
class _Snapshot:
    keys: list[Key]
    objects: list[dict[str, Any]]


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def _spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    """Everything a CRD counts towards `metadata.generation`: all but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _encode_continue(resource_version: int, key: Key) -> str:
    raw = json.dumps({"v": "demohub/v1", "rv": resource_version, "start": list(key)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[int, Key]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(raw["rv"]), (str(raw["start"][0]), str(raw["start"][1]))
    except (binascii.Error, ValueError, KeyError, IndexError, TypeError) as error:
        # kube-apiserver answers a token it cannot decode 400, not 410: no list can resume from it
        raise bad_request(f"invalid continue token: {error}") from error


def _remaining(snapshot: _Snapshot, last: Key, namespace: str | None, selector: LabelSelector) -> int | None:
    """The objects a list leaves after `last`: counted by position in the sorted keys, and unknown (None)
    under a label selector, as the API server leaves remainingItemCount unset then."""
    if not selector.is_empty:
        return None
    # every key of the namespace sorts before (namespace + NUL, ""), every key after it at or above
    end = (
        len(snapshot.keys)
        if namespace is None
        else bisect.bisect_left(snapshot.keys, (namespace + "\x00", ""))
    )
    return end - bisect.bisect_right(snapshot.keys, last)


class Store:
    """In-memory objects with Kubernetes write semantics; thread-safe (one lock, a condition per kind)."""

    def __init__(
        self,
        *,
        seed: int = 0,
        retained_events: int = 1000,
        window_seconds: float = WINDOW_SECONDS,
        max_events: int = WINDOW_MAX_EVENTS,
        retained_snapshots: int = 64,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not 0 < retained_events <= max_events:
            raise ValueError("the watch window needs 0 < retained_events <= max_events")
        self.clock = clock if isinstance(clock, Clock) else Clock(clock)
        self._lock = threading.RLock()
        # one condition per kind on the one lock: a write wakes only the watches of its kind
        self._kind_changed = {r: threading.Condition(self._lock) for r in RESOURCES}
        self._rng = random.Random(f"store:{seed}")
        self._rv = 0
        self._compacted_rv = 0  # continue tokens from before this are expired
        self._objects: dict[Resource, dict[Key, dict[str, Any]]] = {r: {} for r in RESOURCES}
        self._windows: dict[Resource, deque[Event]] = {r: deque() for r in RESOURCES}
        # per kind: every event with a resourceVersion above this one is still in its window
        self._expired_below = dict.fromkeys(RESOURCES, 0)
        self._last_written = dict.fromkeys(RESOURCES, 0)
        self._expired_watches = dict.fromkeys(RESOURCES, 0)
        self._retained_events, self._max_events = retained_events, max_events
        self._window_age = timedelta(seconds=window_seconds)
        self._snapshots: OrderedDict[tuple[Resource, int], _Snapshot] = OrderedDict()
        self._retained_snapshots = retained_snapshots
        # per kind: its keys in order, kept until an object of the kind is added or deleted (a heartbeat,
        # the hub's commonest write, replaces an object and leaves the order as it was); None: to sort
        self._sorted_keys: dict[Resource, builtins.list[Key] | None] = dict.fromkeys(RESOURCES)
        # per kind: the JSON of a stored object, beside the very object it encodes (see `encoded`)
        self._encoded: dict[Resource, dict[Key, tuple[dict[str, Any], bytes]]] = {r: {} for r in RESOURCES}

    # ---- reads -------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    @staticmethod
    def resolve(kind: Resource | str) -> Resource:
        return kind if isinstance(kind, Resource) else BY_KIND[kind]

    def window(self, kind: Resource | str) -> WindowStats:
        resource = self.resolve(kind)
        with self._lock:
            window = self._windows[resource]
            oldest = (self.clock() - window[0].at).total_seconds() if window else 0.0
            return WindowStats(len(window), oldest, self._expired_watches[resource])

    def count(self, kind: Resource | str) -> int:
        with self._lock:
            return len(self._objects[self.resolve(kind)])

    def get(self, kind: Resource | str, name: str, namespace: str = "") -> dict[str, Any]:
        resource = self.resolve(kind)
        with self._lock:
            return copy.deepcopy(self._current(resource, name, namespace))

    def read(self, kind: Resource | str, name: str, namespace: str = "") -> dict[str, Any] | None:
        """The stored object itself, or None: for readers in the hub's process that never change it (a
        write replaces a stored object, never changes it in place), where `get`'s copy would cost more
        than the reading (the simulated controllers read a MemberCluster per binding, every pass)."""
        resource = self.resolve(kind)
        with self._lock:
            return self._objects[resource].get((namespace if resource.namespaced else "", name))

    def names(self, kind: Resource | str, namespace: str | None = None) -> list[str]:
        with self._lock:
            keys = self._keys(self.resolve(kind))
        return [name for ns, name in keys if namespace is None or ns == namespace]

    def list(
        self,
        kind: Resource | str,
        *,
        namespace: str | None = None,
        selector: LabelSelector | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListPage:
        """One page of a list; a continue token resumes the same snapshot or raises 410 Expired."""
        resource = self.resolve(kind)
        selector = selector or LabelSelector()
        with self._lock:
            if continue_token:
                resource_version, start = _decode_continue(continue_token)
                snapshot = self._pinned_snapshot(resource, resource_version)
            else:
                resource_version, start = self._rv, None
                snapshot = self._snapshot(resource)
        position = bisect.bisect_right(snapshot.keys, start) if start else 0
        everything = namespace is None and selector.is_empty
        # a page reads only as far as the object after it: paging through a kind costs one pass, not
        # one pass per page
        matching = list(
            itertools.islice(
                (
                    (key, obj)
                    for key, obj in zip(
                        itertools.islice(snapshot.keys, position, None),
                        itertools.islice(snapshot.objects, position, None),
                        strict=True,
                    )
                    if everything
                    or ((namespace is None or key[0] == namespace) and selector.matches(_labels(obj)))
                ),
                limit + 1 if limit else None,
            )
        )
        if not limit or len(matching) <= limit:
            return ListPage([obj for _, obj in matching], resource_version, None, None)
        page = matching[:limit]
        self._keep_snapshot(resource, resource_version, snapshot)
        token = _encode_continue(resource_version, page[-1][0])
        return ListPage(
            [obj for _, obj in page],
            resource_version,
            token,
            _remaining(snapshot, page[-1][0], namespace, selector),
        )

    def encoded(self, kind: Resource | str, objects: Iterable[dict[str, Any]]) -> builtins.list[bytes]:
        """The compact JSON of stored objects (as `json.dumps` writes it with `(",", ":")` separators),
        each version encoded once. A list serves the same objects page after page and resync after
        resync; encoding them again was most of a resync's cost on the hub's side. An entry holds the
        very object it encodes and is used for that object only (stored objects are replaced, never
        changed in place), so a version replaced since, even between the page's read and this call, is
        encoded again; a write drops its key's entry so an old version is not kept alive."""
        resource = self.resolve(kind)
        cache = self._encoded[resource]
        out: builtins.list[bytes] = []
        for obj in objects:
            metadata = obj["metadata"]
            key = (metadata.get("namespace", "") if resource.namespaced else "", metadata["name"])
            entry = cache.get(key)
            if entry is None or entry[0] is not obj:
                entry = (obj, json.dumps(obj, separators=(",", ":")).encode())
                cache[key] = entry
            out.append(entry[1])
        return out

    # ---- writes ------------------------------------------------------------------------------

    def create(self, obj: dict[str, Any], *, namespace: str = "") -> dict[str, Any]:
        """Store a new object (status included: callers that mimic the API server strip it first)."""
        resource = self._resource_of(obj)
        new = copy.deepcopy(obj)
        metadata = new.setdefault("metadata", {})
        with self._lock:
            name = metadata.get("name") or self._generated_name(resource, metadata.get("generateName"))
            namespace = self._namespace_for(resource, metadata.get("namespace") or namespace, name)
            key = (namespace, name)
            if key in self._objects[resource]:
                raise ApiError(
                    409,
                    "AlreadyExists",
                    f'{resource.qualified} "{name}" already exists',
                    resource=resource,
                    name=name,
                )
            metadata.update(
                name=name,
                uid=str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
                creationTimestamp=rfc3339(self.clock()),
                generation=1,
            )
            metadata.pop("deletionTimestamp", None)
            if namespace:
                metadata["namespace"] = namespace
            else:
                metadata.pop("namespace", None)
            return copy.deepcopy(self._commit(resource, key, ADDED, new, None))

    def replace(
        self,
        kind: Resource | str,
        name: str,
        obj: dict[str, Any],
        *,
        namespace: str = "",
        subresource: str | None = None,
        handed_over: bool = False,
    ) -> dict[str, Any]:
        """PUT: optimistic concurrency on `metadata.resourceVersion` (409 Conflict when stale).

        `handed_over=True`: the caller gives `obj` away and never changes what it is answered (the
        hub's own controllers), so neither is copied: the stored object and the answer are shared."""
        resource = self.resolve(kind)
        body_name = (obj.get("metadata") or {}).get("name")
        if body_name and body_name != name:
            raise bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        with self._lock:
            current = self._current(resource, name, namespace)
            sent_version = (obj.get("metadata") or {}).get("resourceVersion")
            if not sent_version:
                raise invalid(
                    resource,
                    name,
                    "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
                )
            self._check_precondition(resource, current, sent_version)
            if handed_over:
                return self._update(resource, current, obj, subresource, handed_over=True)
            return copy.deepcopy(self._update(resource, current, obj, subresource))

    def patch(
        self,
        kind: Resource | str,
        name: str,
        body: Any,
        *,
        namespace: str = "",
        patch_type: str = MERGE_PATCH,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """PATCH: merge patch or JSON patch; a resourceVersion set by the patch is a precondition."""
        resource = self.resolve(kind)
        with self._lock:
            current = self._current(resource, name, namespace)
            try:
                patched = self._apply_patch(current, body, patch_type)
            except PatchError as error:
                raise invalid(resource, name, str(error)) from error
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata", {}), dict):
                raise invalid(resource, name, "the patched object must be an object with object metadata")
            sent_version = patched.get("metadata", {}).get("resourceVersion")
            self._check_precondition(resource, current, sent_version)
            return copy.deepcopy(self._update(resource, current, patched, subresource))

    def write_concurrently(
        self,
        kind: Resource | str,
        name: str,
        sent_version: Any,
        when: Callable[[], bool],
        *,
        namespace: str = "",
        status: bool = False,
    ) -> bool:
        """Another controller's write, made when an update conditional on `sent_version` would succeed
        and `when()` says so: the update then meets a 409 Conflict, and the fresh copy its client reads
        holds this writer's change (an annotation, and on `status` writes a condition of its own), which
        a correct retry keeps. Answers whether it wrote; a missing object is left to the update."""
        resource = self.resolve(kind)
        with self._lock:
            obj = self._objects[resource].get((namespace if resource.namespaced else "", name))
            if obj is None or not sent_version or str(sent_version) != obj["metadata"]["resourceVersion"]:
                return False
            if not when():
                return False
            new = copy.deepcopy(obj)
            annotations = new["metadata"].setdefault("annotations", {})
            count = int(annotations.get(CONCURRENT_WRITES_ANNOTATION) or 0) + 1
            annotations[CONCURRENT_WRITES_ANNOTATION] = str(count)
            if status and resource.kind not in _NO_STATUS_CONDITIONS:
                conditions = [
                    c
                    for c in (new.get("status") or {}).get("conditions") or []
                    if c.get("type") != CONCURRENT_WRITER_CONDITION
                ]
                conditions.append(
                    {
                        "type": CONCURRENT_WRITER_CONDITION,
                        "status": "True",
                        "reason": "ConcurrentWrite",
                        "message": f"write {count} of another controller",
                        "observedGeneration": new["metadata"].get("generation"),
                        "lastTransitionTime": rfc3339(self.clock()),
                    }
                )
                new["status"] = {**(new.get("status") or {}), "conditions": conditions}
            metadata = obj["metadata"]
            self._commit(resource, (metadata.get("namespace", ""), metadata["name"]), MODIFIED, new, obj)
            return True

    def delete(self, kind: Resource | str, name: str, *, namespace: str = "") -> dict[str, Any]:
        """Delete at once (no finalizers); answers the object as it was, at the deletion's version."""
        resource = self.resolve(kind)
        with self._lock:
            current = self._current(resource, name, namespace)
            gone = copy.deepcopy(current)
            committed = self._commit(
                resource, (namespace if resource.namespaced else "", name), DELETED, gone, current
            )
            return copy.deepcopy(committed)

    def compact(self) -> int:
        """Forget history: watches and continue tokens from before now answer 410 Gone."""
        with self._lock:
            self._compacted_rv = self._rv
            for resource, window in self._windows.items():
                window.clear()
                self._expired_below[resource] = self._rv
            self._snapshots.clear()
            self._notify_all()
            return self._rv

    def wake(self) -> None:
        """Wake every waiting watch so it can notice it should stop."""
        with self._lock:
            self._notify_all()

    def _notify_all(self) -> None:
        for condition in self._kind_changed.values():
            condition.notify_all()

    # ---- watch -------------------------------------------------------------------------------

    def watch(
        self,
        kind: Resource | str,
        *,
        since: int | None,
        timeout: float,
        stopped: Callable[[], bool],
        namespace: str | None = None,
        selector: LabelSelector | None = None,
        bookmark_seconds: float | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Watch events after `since` (None: the current objects as ADDED first), until timeout or stop."""
        resource, selector = self.resolve(kind), selector or LabelSelector()
        deadline = time.monotonic() + timeout
        with self._lock:
            if since is not None and since < self._expired_below[resource]:
                initial, position = [self._expired_event(resource, since)], -1
            elif since is None:
                snapshot, position = self._snapshot(resource), self._rv
                initial = [
                    {"type": ADDED, "object": obj}
                    for key, obj in zip(snapshot.keys, snapshot.objects, strict=True)
                    if (namespace is None or key[0] == namespace) and selector.matches(_labels(obj))
                ]
            else:
                initial, position = [], since
        yield from initial
        if position < 0:
            return
        # no bookmark until the hub has got past where the watch started: kube-apiserver's watch cache
        # drops every event (bookmarks included) not newer than the version a watcher starts from
        last_sent, started = time.monotonic(), position
        while not stopped() and (remaining := deadline - time.monotonic()) > 0:
            wait = min(remaining, bookmark_seconds) if bookmark_seconds else remaining
            events, reached = self._events_after(resource, position, stopped, wait)
            if reached < 0:
                with self._lock:
                    expired_event = self._expired_event(resource, position)
                yield expired_event
                return
            position = reached
            for event in events:
                if (shown := _as_seen(event, namespace, selector)) is not None:
                    last_sent = time.monotonic()
                    yield shown
            due = bookmark_seconds and time.monotonic() - last_sent >= bookmark_seconds
            if due and position > started:
                last_sent = time.monotonic()
                yield _bookmark(resource, position)

    def _events_after(
        self, resource: Resource, position: int, stopped: Callable[[], bool], wait: float
    ) -> tuple[builtins.list[Event], int]:
        """Wait up to `wait` for writes of the kind past `position`; answers its events after `position`
        and the hub's resourceVersion now, or a position of -1 when the window no longer reaches back."""
        condition = self._kind_changed[resource]
        with condition:
            condition.wait_for(lambda: self._last_written[resource] > position or stopped(), wait)
            if position < self._expired_below[resource]:
                return [], -1
            # the newest first, back to `position`: a watch that keeps up reads only what is new
            fresh = list(
                itertools.takewhile(
                    lambda e: e.resource_version > position, reversed(self._windows[resource])
                )
            )
            fresh.reverse()
            return fresh, self._rv

    # ---- internals ---------------------------------------------------------------------------

    def _resource_of(self, obj: dict[str, Any]) -> Resource:
        resource = BY_KIND.get(obj.get("kind", ""))
        if resource is None or obj.get("apiVersion") != resource.api_version:
            raise bad_request(
                f"no kind {obj.get('kind')!r} is registered for version {obj.get('apiVersion')!r}"
            )
        return resource

    def _namespace_for(self, resource: Resource, namespace: str, name: str) -> str:
        if not resource.namespaced:
            return ""
        if not namespace:
            raise invalid(resource, name, "metadata.namespace: Required value")
        return namespace

    def _generated_name(self, resource: Resource, prefix: str | None) -> str:
        if not prefix:
            raise invalid(resource, "", "metadata.name: Required value: name or generateName is required")
        return prefix + "".join(self._rng.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))

    def _current(self, resource: Resource, name: str, namespace: str) -> dict[str, Any]:
        obj = self._objects[resource].get((namespace if resource.namespaced else "", name))
        if obj is None:
            raise not_found(resource, name)
        return obj

    def _check_precondition(self, resource: Resource, current: dict[str, Any], sent: Any) -> None:
        if sent and str(sent) != current["metadata"]["resourceVersion"]:
            name = current["metadata"]["name"]
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {resource.qualified} "{name}": the object has been '
                "modified; please apply your changes to the latest version and try again",
                resource=resource,
                name=name,
            )

    @staticmethod
    def _apply_patch(current: dict[str, Any], body: Any, patch_type: str) -> Any:
        if patch_type == MERGE_PATCH:
            return merge_patch(current, body)
        if patch_type == JSON_PATCH:
            return json_patch(current, body)
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - "
            f"accepted media types include: {JSON_PATCH}, {MERGE_PATCH}",
        )

    def _update(
        self,
        resource: Resource,
        current: dict[str, Any],
        incoming: dict[str, Any],
        subresource: str | None,
        *,
        handed_over: bool = False,
    ) -> dict[str, Any]:
        """Apply subresource rules (status vs everything else), bump generation on spec change, commit."""
        if subresource == "status":
            # all but the status is the current version's, shared with it (stored objects are replaced,
            # never changed in place); metadata is copied, as the commit sets its resourceVersion
            new = {**current, "metadata": dict(current["metadata"])}
            status = incoming.get("status")
            _set_or_drop(new, "status", status if handed_over else copy.deepcopy(status))
        else:
            new = incoming if handed_over else copy.deepcopy(incoming)
            _set_or_drop(new, "status", copy.deepcopy(current.get("status")))
            new["apiVersion"], new["kind"] = current["apiVersion"], current["kind"]
            metadata = new.setdefault("metadata", {})
            for field in SYSTEM_METADATA:
                _set_or_drop(metadata, field, current["metadata"].get(field))
            if _spec_part(new) != _spec_part(current):
                metadata["generation"] = current["metadata"]["generation"] + 1
        if new == current:
            return current  # a no-op write changes nothing, not even the resourceVersion
        metadata = current["metadata"]
        return self._commit(
            resource, (metadata.get("namespace", ""), metadata["name"]), MODIFIED, new, current
        )

    def _commit(
        self, resource: Resource, key: Key, event_type: str, new: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        self._rv += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        self._encoded[resource].pop(key, None)
        objects = self._objects[resource]
        if event_type == DELETED:
            del objects[key]
            self._sorted_keys[resource] = None
        else:
            if key not in objects:
                self._sorted_keys[resource] = None
            objects[key] = new
        now = self.clock()
        window = self._windows[resource]
        window.append(Event(self._rv, resource, key, event_type, new, old, now))
        horizon = now - self._window_age
        while len(window) > self._max_events or (
            len(window) > self._retained_events and window[0].at < horizon
        ):
            self._expired_below[resource] = window.popleft().resource_version
        self._last_written[resource] = self._rv
        self._kind_changed[resource].notify_all()
        return new

    def _snapshot(self, resource: Resource) -> _Snapshot:
        """The kind's objects in key order. The order is sorted again only after an add or a delete: a
        list of 50,000 members every second (the simulated staged update run reads them all) sorted
        them every time, though heartbeats only replace them. The key list is shared by the snapshots
        until then and never changed in place (an add or a delete makes a new one)."""
        objects, keys = self._objects[resource], self._keys(resource)
        return _Snapshot(keys, [objects[key] for key in keys])

    def _keys(self, resource: Resource) -> builtins.list[Key]:
        keys = self._sorted_keys[resource]
        if keys is None:
            keys = self._sorted_keys[resource] = sorted(self._objects[resource])
        return keys

    def _pinned_snapshot(self, resource: Resource, resource_version: int) -> _Snapshot:
        snapshot = self._snapshots.get((resource, resource_version))
        if snapshot is None or resource_version < self._compacted_rv:
            raise expired(
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter."
            )
        self._snapshots.move_to_end((resource, resource_version))
        return snapshot

    def _keep_snapshot(self, resource: Resource, resource_version: int, snapshot: _Snapshot) -> None:
        with self._lock:
            self._snapshots[(resource, resource_version)] = snapshot
            self._snapshots.move_to_end((resource, resource_version))
            while len(self._snapshots) > self._retained_snapshots:
                self._snapshots.popitem(last=False)

    def _expired_event(self, resource: Resource, since: int) -> dict[str, Any]:
        self._expired_watches[resource] += 1
        error = expired(f"too old resource version: {since} ({self._expired_below[resource] + 1})")
        return {"type": ERROR, "object": error.status()}


def _set_or_drop(mapping: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _as_seen(event: Event, namespace: str | None, selector: LabelSelector) -> dict[str, Any] | None:
    """The event as a selector-filtered watch sees it: leaving the selection reads as DELETED."""
    if namespace is not None and event.key[0] != namespace:
        return None
    matches_now = selector.matches(_labels(event.obj))
    matched_before = event.old is not None and selector.matches(_labels(event.old))
    if event.type != MODIFIED:
        return {"type": event.type, "object": event.obj} if matches_now else None
    if matches_now:
        return {"type": MODIFIED if matched_before else ADDED, "object": event.obj}
    if not matched_before or event.old is None:
        return None
    # as kube-apiserver's watch cache has it: the object as it was when it still matched, at the
    # resourceVersion of the write that moved it out
    gone = copy.deepcopy(event.old)
    gone["metadata"]["resourceVersion"] = str(event.resource_version)
    return {"type": DELETED, "object": gone}


def _bookmark(resource: Resource, resource_version: int) -> dict[str, Any]:
    return {
        "type": BOOKMARK,
        "object": {
            "kind": resource.kind,
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(resource_version)},
        },
    }
