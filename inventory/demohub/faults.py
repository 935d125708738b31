"""Fault injection: failed requests (500, sometimes 429 with Retry-After) and added latency.

Decisions come from `random.Random(seed)` in request order, so one client doing one request at a time
sees the same faults on every run.
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
        return {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(
            self.code, "InternalError"
        )

    @property
    def message(self) -> str:
        if self.code == 429:
            return "the server has received too many requests and has asked us to try again later"
        return "Internal error occurred: fault injected by the demo hub"


class FaultInjector:
    def __init__(self, *, fail_rate: float = 0.0, latency_ms: int = 0, seed: int = 0) -> None:
        if not 0.0 <= fail_rate <= 1.0:
            raise ValueError(f"fail_rate must be between 0 and 1, not {fail_rate}")
        self.fail_rate = fail_rate
        self.latency_ms = latency_ms
        self._rng = random.Random(f"faults:{seed}")
        self._forced: list[Fault] = []
        self._lock = threading.Lock()

    def fail_next(self, count: int, status: int = 500) -> None:
        """Fail the next `count` requests with HTTP `status` (429 also sends Retry-After)."""
        retry_after = RETRY_AFTER_SECONDS if status == 429 else None
        with self._lock:
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

    def delay(self) -> None:
        if self.latency_ms > 0:
            time.sleep(self.latency_ms / 1000)
