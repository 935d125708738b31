"""`DemoHub`: the store, the HTTP server, the background churn and (in Fleet mode) the simulated hub
controllers, started and stopped as one."""

import gc
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Self

from core.lifecycle import Started
from demohub.churn import Churn
from demohub.faults import FaultInjector
from demohub.fleetsim import ApplySettings, FleetSimulator
from demohub.hostile import seed_hostile
from demohub.seed import seed_store
from demohub.server import HubServer
from demohub.store import WINDOW_MAX_EVENTS, WINDOW_SECONDS, Clock, Store

# The collector's thresholds in a process of its own (Python's defaults: 700, 10, 10).
OWN_PROCESS_GC_THRESHOLD = (100_000, 20, 100)


def own_process_collector() -> None:
    """Set up the garbage collector of a process that serves one hub (call it once the hub is seeded).

    The store is acyclic dicts, freed by reference counting; yet at 50,000 clusters Python's collector
    traversed every seeded object in a full collection that stopped all the hub's threads for 0.9-1.3 s,
    and with heartbeats (833 writes a second) one came every few seconds: a client saw requests of over
    a second. The seeded objects go to the permanent generation (`gc.freeze`), and the young generation
    is collected after 100,000 allocations instead of 700 (and the older ones accordingly less often),
    so full collections, over what was written since the seeding, become rare.
    Measured at 50,000 clusters with heartbeats and controllers, a GET of one object for 40 s: p99
    180 -> 105-135 ms, slowest 1,350 -> 200-270 ms."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*OWN_PROCESS_GC_THRESHOLD)


class DemoHub(Started):
    """A Kubernetes API server for the OCM and Fleet kinds, in this process.

    `start()` binds (port 0: an ephemeral port) and serves from a background thread; `url` is then the
    address to give a `kubernetes.client.Configuration`. Use as a context manager or a pytest fixture.

    With `controllers=True` (Fleet mode only) it also plays the hub's controllers for the rollout kinds
    (see fleetsim.py): every `controller_seconds` of real time in a background thread (0: never), and
    whenever a test calls `reconcile()`. `clock` is the hub's time (real time by default); pass a
    `Clock.frozen(...)` and `advance()` it to step time by hand.

    `conflict_rate` (or `conflict_next()`) makes conditional updates meet a concurrent write and a 409
    Conflict, as on a hub where other controllers write the same objects (see faults.py).

    The watch window (store.py) keeps per kind at least `retained_events` events, every event younger
    than `window_seconds`, and never more than `max_events`; older resourceVersions answer 410 Gone.

    `hostile=True` also serves objects a broken or malicious hub could hold (see hostile.py); `hostile`
    is then their names by what makes each hostile.
    """

    def __init__(
        self,
        *,
        clusters: int = 0,
        fleet: bool = False,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        fail_rate: float = 0.0,
        latency_ms: int = 0,
        conflict_rate: float = 0.0,
        churn_per_minute: float = 0.0,
        heartbeat_seconds: float = 0.0,
        bookmark_seconds: float = 5.0,
        retained_events: int = 1000,
        window_seconds: float = WINDOW_SECONDS,
        max_events: int = WINDOW_MAX_EVENTS,
        clock: Callable[[], datetime] | None = None,
        controllers: bool = False,
        apply_seconds: float = 2.0,
        available_seconds: float = 3.0,
        apply_failure_rate: float = 0.0,
        controller_seconds: float = 0.2,
        hostile: bool = False,
    ) -> None:
        if controllers and not fleet:
            raise ValueError("the simulated hub controllers need fleet=True")
        self.store = Store(
            seed=seed,
            retained_events=retained_events,
            window_seconds=window_seconds,
            max_events=max_events,
            clock=clock,
        )
        self.seeded = seed_store(self.store, clusters, fleet=fleet, seed=seed)
        self.hostile = seed_hostile(self.store) if hostile else {}
        settings = ApplySettings(apply_seconds, available_seconds, apply_failure_rate, seed)
        self.controllers = FleetSimulator(self.store, settings) if controllers else None
        self._controller_seconds = controller_seconds
        self.faults = FaultInjector(
            fail_rate=fail_rate, latency_ms=latency_ms, seed=seed, conflict_rate=conflict_rate
        )
        self.churn = Churn(self.store, seed=seed)
        self._address = (host, port)
        self._churn_per_minute = churn_per_minute
        self._heartbeat_seconds = heartbeat_seconds
        self._bookmark_seconds = bookmark_seconds
        self._server: HubServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def clock(self) -> Clock:
        return self.store.clock

    @property
    def url(self) -> str:
        return f"http://{self._running().address}"

    def start(self) -> Self:
        """Bind and serve in a background thread; raises OSError when the port is taken."""
        self._server = HubServer(self._address, self.store, self.faults, self._bookmark_seconds)
        # a short poll interval keeps stop() quick, which matters for one hub per test
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="demo-hub", daemon=True
        )
        self._thread.start()
        self.churn.start(per_minute=self._churn_per_minute, heartbeat_seconds=self._heartbeat_seconds)
        if self.controllers is not None and self._controller_seconds > 0:
            self.controllers.start(self._controller_seconds)
        return self

    def stop(self) -> None:
        """Stop churn and the controllers, cut open watches and close the socket."""
        self.churn.stop()
        if self.controllers is not None:
            self.controllers.stop()
        if self._server is not None:
            self._server.stop()
        if self._thread is not None:
            self._thread.join()
        self._server, self._thread = None, None

    def fail_next(self, count: int, status: int = 500, *, after: int = 0) -> None:
        """The next `count` requests answer `status` (a Status body; 429 also sends Retry-After), once
        `after` more requests have been served."""
        self.faults.fail_next(count, status, after=after)

    def conflict_next(self, count: int, kind: str | None = None) -> None:
        """The next `count` conditional updates (of `kind` only, when given) that would succeed meet
        another writer's change first and answer 409 Conflict; `conflict_rate` does it at random."""
        self.faults.conflict_next(count, kind)

    @property
    def peak_requests_in_flight(self) -> int:
        """The most requests (watches aside) served at once since `reset_requests_in_flight()`."""
        return self._running().in_flight.peak

    def reset_requests_in_flight(self) -> None:
        self._running().in_flight.reset()

    def drop_watches(self) -> None:
        """Break every open watch connection mid-stream, as a network failure would."""
        self._running().drop_watches()

    def advance(self, seconds: float) -> datetime:
        """Move the hub's clock forward; answers the new time. Controllers act on it at their next pass."""
        return self.clock.advance(seconds)

    def reconcile(self) -> list[str]:
        """Let the simulated controllers act now until nothing changes; answers what they did."""
        if self.controllers is None:
            raise RuntimeError("the demo hub runs no controllers; create it with controllers=True")
        return self.controllers.reconcile()

    def compact(self) -> int:
        """Expire every older resourceVersion: watches from them and older continue tokens get 410 Gone."""
        return self.store.compact()

    def _running(self) -> HubServer:
        if self._server is None:
            raise RuntimeError("the demo hub is not running; call start() first")
        return self._server
