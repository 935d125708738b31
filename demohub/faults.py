"""Fault injection: failed requests (500, sometimes 429 with Retry-After), added latency, and conflicts.

An injected conflict is another writer's change landing between a client's read and its conditional
update (the server makes it, then the update meets a 409 as it would on a busy hub); see
`Store.write_concurrently`. Decisions come from `random.Random(seed)` in request order (conflicts from
a generator of their own), so one client doing one request at a time sees the same faults on every run.
"""

import random
import threading
import time
from dataclasses import dataclass

THROTTLE_SHARE = 0.2  # of injected failures answer 429 instead of 500, as a busy API server would
RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True)
class Fault:
    code: int
    retry_after: int | None = None

    @property
    def reason(self) -> str:
        reasons = {400: "BadRequest", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}
        return reasons.get(self.code, "InternalError")

    @property
    def message(self) -> str:
        if self.code == 429:
            return "the server has received too many requests and has asked us to try again later"
        return "Internal error occurred: fault injected by the demo hub"


class FaultInjector:
    def __init__(
        self, *, fail_rate: float = 0.0, latency_ms: int = 0, seed: int = 0, conflict_rate: float = 0.0
    ) -> None:
        for name, rate in (("fail_rate", fail_rate), ("conflict_rate", conflict_rate)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {rate}")
        self.fail_rate = fail_rate
        self.latency_ms = latency_ms
        self.conflict_rate = conflict_rate
        self.conflicts_injected = 0
        self._rng = random.Random(f"faults:{seed}")
        self._conflict_rng = random.Random(f"conflicts:{seed}")
        # the next requests' fates, in order: a fault, or None to serve it
        self._forced: list[Fault | None] = []
        # kinds (None: any) of the next conditional updates to meet a concurrent write, in order
        self._forced_conflicts: list[str | None] = []
        self._lock = threading.Lock()

    def fail_next(self, count: int, status: int = 500, *, after: int = 0) -> None:
        """Fail the next `count` requests with HTTP `status` (429 also sends Retry-After), once `after`
        more requests have been served: a fault set before a client starts hits the same request of its
        sequence however the client times its requests."""
        retry_after = RETRY_AFTER_SECONDS if status == 429 else None
        with self._lock:
            self._forced.extend([None] * after)
            self._forced.extend(Fault(status, retry_after) for _ in range(count))

    def next_fault(self) -> Fault | None:
        """The fault for the request being handled now, or None to serve it."""
        with self._lock:
            if self._forced:
                return self._forced.pop(0)
            if self.fail_rate <= 0 or self._rng.random() >= self.fail_rate:
                return None
            if self._rng.random() < THROTTLE_SHARE:
                return Fault(429, RETRY_AFTER_SECONDS)
            return Fault(500)

    def conflict_next(self, count: int, kind: str | None = None) -> None:
        """The next `count` conditional updates (of `kind` only, when given) meet a concurrent write."""
        with self._lock:
            self._forced_conflicts.extend([kind] * count)

    def conflict_due(self, kind: str) -> bool:
        """Whether a conditional update of `kind` that would succeed meets a concurrent write instead."""
        with self._lock:
            forced = next((i for i, k in enumerate(self._forced_conflicts) if k in (None, kind)), None)
            if forced is not None:
                del self._forced_conflicts[forced]
            elif self.conflict_rate <= 0 or self._conflict_rng.random() >= self.conflict_rate:
                return False
            self.conflicts_injected += 1
            return True

    def delay(self) -> None:
        if self.latency_ms > 0:
            time.sleep(self.latency_ms / 1000)
