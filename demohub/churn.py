"""Background change: random label/condition churn and Fleet agent heartbeats.

Heartbeats arrive as agents send them: each live member reports once per period on a schedule of its
own, so the fleet's heartbeats are a steady stream of members / period writes a second (50,000 members
every 60 s: about 830 a second), not one burst per period.

Every change goes through the store's write path with a resourceVersion precondition, so watches see
ordinary MODIFIED events and a concurrent write wins over churn rather than being overwritten.
"""

import logging
import math
import random
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from demohub.seed import ADDON_LABEL_PREFIX, SCORE_NAME, UNAVAILABLE_TAINT, UNREACHABLE_TAINT
from demohub.store import ApiError, Store, rfc3339

logger = logging.getLogger(__name__)

AVAILABLE_CONDITION = "ManagedClusterConditionAvailable"
HEARTBEAT_ALIVE = timedelta(minutes=5)  # Fleet's own staleness limit: older heartbeats stay stale
# How often the heartbeat stream writes the members that have come due since its last round.
HEARTBEAT_TICK = 0.05


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _with_condition(conditions: list[dict[str, Any]], replacement: dict[str, Any]) -> list[dict[str, Any]]:
    kept = [c for c in conditions if c.get("type") != replacement["type"]]
    return [*kept, replacement]


class Churn:
    def __init__(self, store: Store, *, seed: int = 0) -> None:
        self.store = store
        self._rng = random.Random(f"churn:{seed}")
        # per background activity ("churn", "heartbeats"): its thread and what stops it
        self._loops: dict[str, tuple[threading.Thread, threading.Event]] = {}

    # ---- one change ---------------------------------------------------------------------------

    def step(self) -> str | None:
        """Make one random change to one random cluster; answers what changed (None: nothing to do)."""
        names = self.store.names("ManagedCluster")
        if not names:
            return None
        name = self._rng.choice(names)
        changes: list[Callable[[str], str | None]] = [
            self._flip_addon,
            self._flip_availability,
            self._rescore,
        ]
        if self.store.count("MemberCluster"):
            changes.append(self._flip_member_health)
        change = self._rng.choice(changes)
        try:
            return change(name)
        except ApiError as error:  # deleted or changed meanwhile: skip this round
            logger.debug("churn on %s skipped: %s", name, error.message)
            return None

    def _flip_addon(self, name: str) -> str | None:
        cluster = self.store.get("ManagedCluster", name)
        labels = cluster["metadata"].get("labels") or {}
        addons = sorted(
            k for k, v in labels.items() if k.startswith(ADDON_LABEL_PREFIX) and v != "unreachable"
        )
        if not addons:
            return None
        key = self._rng.choice(addons)
        value = "unhealthy" if labels[key] == "available" else "available"
        self.store.patch(
            "ManagedCluster", name, {"metadata": {"labels": {key: value}, **self._version(cluster)}}
        )
        return f"{name}: {key}={value}"

    def _flip_availability(self, name: str) -> str:
        cluster = self.store.get("ManagedCluster", name)
        now = self.store.clock()
        conditions = cluster.get("status", {}).get("conditions", [])
        available = any(
            c.get("type") == AVAILABLE_CONDITION and c.get("status") == "True" for c in conditions
        )
        status, reason = (
            ("Unknown", "ManagedClusterLeaseUpdateStopped")
            if available
            else ("True", "ManagedClusterAvailable")
        )
        condition = {
            "type": AVAILABLE_CONDITION,
            "status": status,
            "reason": reason,
            "message": "",
            "lastTransitionTime": rfc3339(now),
        }
        updated = self.store.patch(
            "ManagedCluster",
            name,
            {
                "metadata": self._version(cluster),
                "status": {"conditions": _with_condition(conditions, condition)},
            },
            subresource="status",
        )
        taints = [
            t
            for t in updated["spec"].get("taints", [])
            if t["key"] not in (UNREACHABLE_TAINT, UNAVAILABLE_TAINT)
        ]
        if available:  # the hub's taint controller follows the condition
            taints.append({"key": UNREACHABLE_TAINT, "effect": "NoSelect", "timeAdded": rfc3339(now)})
        self.store.patch(
            "ManagedCluster", name, {"metadata": self._version(updated), "spec": {"taints": taints}}
        )
        return f"{name}: {AVAILABLE_CONDITION}={status}"

    def _rescore(self, name: str) -> str:
        score = self.store.get("AddOnPlacementScore", SCORE_NAME, namespace=name)
        values = [
            {"name": "cpuAvailable", "value": self._rng.randint(-100, 100)},
            {"name": "memAvailable", "value": self._rng.randint(-100, 100)},
        ]
        valid_until = rfc3339(self.store.clock() + timedelta(days=1))
        self.store.patch(
            "AddOnPlacementScore",
            SCORE_NAME,
            namespace=name,
            subresource="status",
            body={"metadata": self._version(score), "status": {"scores": values, "validUntil": valid_until}},
        )
        return f"{name}: {SCORE_NAME} rescored"

    def _flip_member_health(self, name: str) -> str:
        member = self.store.get("MemberCluster", name)
        agents = member.get("status", {}).get("agentStatus", [])
        for agent in agents:
            healthy = any(
                c["type"] == "Healthy" and c["status"] == "True" for c in agent.get("conditions", [])
            )
            condition = {
                "type": "Healthy",
                "status": "False" if healthy else "True",
                "reason": "HealthCheckFailed" if healthy else "HealthCheckSucceeded",
                "message": "",
                "lastTransitionTime": rfc3339(self.store.clock()),
            }
            agent["conditions"] = _with_condition(agent.get("conditions", []), condition)
        self.store.patch(
            "MemberCluster",
            name,
            {"metadata": self._version(member), "status": {"agentStatus": agents}},
            subresource="status",
        )
        return f"{name}: member agent health flipped"

    # ---- heartbeats -----------------------------------------------------------------------------

    def beat(self) -> int:
        """Refresh `lastReceivedHeartbeat` of every live member agent; answers how many were refreshed."""
        now = self.store.clock()
        return sum(self._beat_one(name, now) for name in self.store.names("MemberCluster"))

    def _beat_one(self, name: str, now: datetime) -> int:
        try:
            return self._refresh(name, now)
        except ApiError as error:
            logger.debug("heartbeat of %s skipped: %s", name, error.message)
            return 0

    def _refresh(self, name: str, now: datetime) -> int:
        """One agent report: the member's live agents get `now` as their last heartbeat. The stored member
        is read, not copied, and its new status shares all but the agents' entries with it (a write
        replaces a stored object, never changes it in place): at 50,000 members a heartbeat is the hub's
        most frequent write, and copying the whole member three times took a fifth of a core."""
        member = self.store.read("MemberCluster", name)
        if member is None:
            return 0
        status = member.get("status") or {}
        agents = status.get("agentStatus", [])
        alive = [
            now - _parse_time(a.get("lastReceivedHeartbeat", "1970-01-01T00:00:00Z")) < HEARTBEAT_ALIVE
            for a in agents
        ]
        if not any(alive):
            return 0
        stamp = rfc3339(now)
        beaten = [
            {**a, "lastReceivedHeartbeat": stamp} if live else a
            for a, live in zip(agents, alive, strict=True)
        ]
        body = {"metadata": self._version(member), "status": {**status, "agentStatus": beaten}}
        updated = self.store.replace("MemberCluster", name, body, subresource="status", handed_over=True)
        return int(updated["metadata"]["resourceVersion"] != member["metadata"]["resourceVersion"])

    # ---- background -----------------------------------------------------------------------------

    def start(self, *, per_minute: float = 0.0, heartbeat_seconds: float = 0.0) -> None:
        """Start the activities given a rate; those not given keep running as they are."""
        if per_minute > 0:
            self.churn(per_minute)
        if heartbeat_seconds > 0:
            self.heartbeats(heartbeat_seconds)

    def churn(self, per_minute: float) -> None:
        """Make `per_minute` random changes a minute from now on (0: none); replaces the rate before."""

        def loop(stop: threading.Event) -> None:
            while not stop.wait(60.0 / per_minute):
                self.step()

        self._replace("churn", loop if per_minute > 0 else None)

    def heartbeats(self, period: float) -> None:
        """Every live member's agent reports once per `period` seconds from now on, spread evenly over
        the period (0: no heartbeats); replaces the period before."""

        def loop(stop: threading.Event) -> None:
            while not stop.is_set():
                names, started, done = self.store.names("MemberCluster"), time.monotonic(), 0
                while done < len(names):
                    if stop.wait(HEARTBEAT_TICK):
                        return
                    elapsed = time.monotonic() - started
                    due = min(len(names), math.ceil(len(names) * elapsed / period))
                    now = self.store.clock()
                    for name in names[done:due]:
                        self._beat_one(name, now)
                    done = due
                stop.wait(max(0.0, started + period - time.monotonic()))

        self._replace("heartbeats", loop if period > 0 else None)

    def stop(self) -> None:
        for name in list(self._loops):
            self._replace(name, None)

    def _replace(self, name: str, loop: Callable[[threading.Event], None] | None) -> None:
        if (running := self._loops.pop(name, None)) is not None:
            thread, stop = running
            stop.set()
            thread.join()
        if loop is not None:
            stop = threading.Event()
            thread = threading.Thread(target=loop, args=(stop,), name=f"demo-hub-{name}", daemon=True)
            thread.start()
            self._loops[name] = (thread, stop)

    @staticmethod
    def _version(obj: dict[str, Any]) -> dict[str, str]:
        return {"resourceVersion": obj["metadata"]["resourceVersion"]}
