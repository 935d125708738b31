"""Cluster eligibility: the ClusterEligibility filter and the PickFixed validity check.

`eligibility_reason` answers for one cluster (upstream reason text); `EligibilityColumns` keeps the same
facts of every cluster as columns, finds the ineligible ones with numpy and words their reasons with
the same rule (`_reason`) over the columns, without going back to the cluster objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from placement.scheduler.fleet.types import AGENT_HEALTHY, AGENT_JOINED, MemberCluster
from placement.scheduler.positions import Shift
from placement.scheduler.timeutil import ZERO_TIME

HEARTBEAT_TIMEOUT = timedelta(minutes=5)
HEALTH_CHECK_TIMEOUT = timedelta(minutes=5)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MINUTE_NS = 60 * 10**9


LEFT = "cluster has left the fleet"
NOT_ONLINE = "cluster is not connected to the fleet: member agent not online yet"
NOT_JOINED = "cluster is not connected to the fleet: member agent not joined yet"
NO_HEALTH = "cluster is not connected to the fleet: health condition from member agent is not available"
_TIMEOUT_US = HEARTBEAT_TIMEOUT // timedelta(microseconds=1)
_HEALTH_TIMEOUT_US = HEALTH_CHECK_TIMEOUT // timedelta(microseconds=1)


def _go_minutes(elapsed_us: int) -> float:
    """Go's `Duration.Minutes()` of a duration (whole minutes plus the float remainder)."""
    nanoseconds = elapsed_us * 1000
    whole = int(nanoseconds / _MINUTE_NS) if nanoseconds < 0 else nanoseconds // _MINUTE_NS
    return float(whole) + float(nanoseconds - whole * _MINUTE_NS) / 60e9


def _microseconds(moment: datetime | None) -> int:
    return ((moment or ZERO_TIME) - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class _Facts:
    """What eligibility reads of a cluster: a reason that holds before the heartbeat is looked at
    (left, no agent), the heartbeat, a reason that holds after it (not joined, no Healthy condition),
    and whether and since when the agent reports it unhealthy; times in epoch microseconds."""

    early: str | None = None
    heartbeat: int = 0
    late: str | None = None
    unhealthy: bool = False
    transition: int = 0

    @classmethod
    def of(cls, cluster: MemberCluster) -> _Facts:
        agent = cluster.member_agent
        if cluster.deletion_timestamp is not None:
            return cls(LEFT)
        if agent is None:
            return cls(NOT_ONLINE)
        heartbeat = _microseconds(agent.last_received_heartbeat)
        joined = agent.condition(AGENT_JOINED)
        if joined is None or joined.status != "True":
            return cls(heartbeat=heartbeat, late=NOT_JOINED)
        healthy = agent.condition(AGENT_HEALTHY)
        if healthy is None:
            return cls(heartbeat=heartbeat, late=NO_HEALTH)
        return cls(
            heartbeat=heartbeat,
            unhealthy=healthy.status != "True",
            transition=_microseconds(healthy.last_transition_time),
        )


def _reason(
    early: str | None, heartbeat: int, late: str | None, unhealthy: bool, transition: int, now_us: int
) -> str | None:
    """Upstream's checks in upstream's order over one cluster's facts (`_Facts`)."""
    if early is not None:
        return early
    since_heartbeat = now_us - heartbeat
    if since_heartbeat > _TIMEOUT_US:
        return (
            "cluster is not connected to the fleet: no recent heartbeat signals "
            f"(last received {_go_minutes(since_heartbeat):.2f} minutes ago)"
        )
    if late is not None:
        return late
    since_transition = now_us - transition
    # upstream: a short-lived unhealthy report is tolerated
    if unhealthy and since_transition > _HEALTH_TIMEOUT_US:
        return (
            "cluster is not connected to the fleet: unhealthy for a prolonged period of time "
            f"(last transitioned {_go_minutes(since_transition):.2f} minutes ago)"
        )
    return None


def eligibility_reason(cluster: MemberCluster, now: datetime) -> str | None:
    """Why `cluster` is not eligible for resource placement at `now`, or None when it is."""
    facts = _Facts.of(cluster)
    return _reason(
        facts.early, facts.heartbeat, facts.late, facts.unhealthy, facts.transition, _microseconds(now)
    )


@dataclass(frozen=True, slots=True)
class EligibilityColumns:
    """The eligibility facts of every cluster as columns (`_Facts`, field by field), and which
    clusters are ineligible whatever the time (an early or a late reason)."""

    early: np.ndarray  # object: str or None
    heartbeat: np.ndarray
    late: np.ndarray  # object: str or None
    unhealthy: np.ndarray
    transition: np.ndarray
    static_ineligible: np.ndarray
    # Every cluster's reason at the last moment asked for (`reasons`): the runs of a full reschedule's
    # chunk share their moment, and worded one by one a large fleet's reasons (each stale heartbeat's
    # text carries its own minutes) cost a CRP more than the rest of its run.
    _worded: dict[int, tuple[list[str], np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False, kw_only=True
    )

    @classmethod
    def build(cls, clusters: Sequence[MemberCluster]) -> EligibilityColumns:
        facts = [_Facts.of(cluster) for cluster in clusters]
        return cls(
            np.array([f.early for f in facts], dtype=object),
            np.array([f.heartbeat for f in facts], dtype=np.int64),
            np.array([f.late for f in facts], dtype=object),
            np.array([f.unhealthy for f in facts], dtype=bool),
            np.array([f.transition for f in facts], dtype=np.int64),
            np.array([f.early is not None or f.late is not None for f in facts], dtype=bool),
        )

    def patched(self, clusters: Mapping[int, MemberCluster]) -> EligibilityColumns:
        """These columns with the clusters at these indices read again; copies, never changes `self`."""
        columns = tuple(np.copy(column) for column in self._columns())
        for index, cluster in clusters.items():
            facts = _Facts.of(cluster)
            static = facts.early is not None or facts.late is not None
            values = (facts.early, facts.heartbeat, facts.late, facts.unhealthy, facts.transition, static)
            for column, value in zip(columns, values, strict=True):
                column[index] = value
        return EligibilityColumns(*columns)

    def shifted(self, shift: Shift) -> EligibilityColumns:
        """These columns at new positions; an added cluster's entries are to be patched."""
        fills = (None, 0, None, False, 0, True)
        return EligibilityColumns(
            *(shift.column(column, fill) for column, fill in zip(self._columns(), fills, strict=True))
        )

    def _columns(self) -> tuple[np.ndarray, ...]:
        return (
            self.early,
            self.heartbeat,
            self.late,
            self.unhealthy,
            self.transition,
            self.static_ineligible,
        )

    def ineligible(self, now: datetime, candidates: np.ndarray) -> np.ndarray:
        """Mask of candidates that are not eligible at `now`."""
        now_us = _microseconds(now)
        stale = (now_us - self.heartbeat) > _TIMEOUT_US
        sick = self.unhealthy & ((now_us - self.transition) > _HEALTH_TIMEOUT_US)
        return candidates & (self.static_ineligible | stale | sick)

    def reasons(self, now: datetime, indices: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The upstream reason text of each (ineligible) cluster index, as its distinct texts and per
        index a code into them."""
        now_us = _microseconds(now)
        worded = self._worded.get(now_us)
        if worded is None:
            worded = self._word(now, now_us)
            self._worded.clear()
            self._worded[now_us] = worded
        texts, codes = worded
        found: np.ndarray = codes[indices]
        return texts, found

    def _word(self, now: datetime, now_us: int) -> tuple[list[str], np.ndarray]:
        """Every cluster's reason at `now`, as distinct texts and a code per cluster (-1: eligible)."""
        codes = np.full(len(self.heartbeat), -1, dtype=np.int64)
        indices = np.flatnonzero(self.ineligible(now, np.ones(len(self.heartbeat), dtype=bool)))
        rows = zip(
            self.early[indices].tolist(),
            self.heartbeat[indices].tolist(),
            self.late[indices].tolist(),
            self.unhealthy[indices].tolist(),
            self.transition[indices].tolist(),
            strict=True,
        )
        numbered: dict[str, int] = {}
        codes[indices] = [numbered.setdefault(_reason(*facts, now_us) or "", len(numbered)) for facts in rows]
        return list(numbered), codes
