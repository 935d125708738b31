"""The TaintToleration filter: validation, per-taint decision, requeue time."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from placement.scheduler.ocm.inventory import OcmInventory, TaintColumns, epoch_micros
from placement.scheduler.ocm.status import MISCONFIGURED, ScheduleStatus
from placement.scheduler.ocm.types import (
    EQUAL,
    EXISTS,
    NO_SELECT_IF_NEW,
    PREFER_NO_SELECT,
    ManagedCluster,
    Placement,
    Taint,
    Toleration,
)
from placement.scheduler.taint_rows import TaintRows
from placement.scheduler.timeutil import format_time

PLUGIN = "TaintToleration"


def toleration_error(tolerations: Sequence[Toleration]) -> str | None:
    """The Misconfigured message for the first invalid toleration, or None when all are valid."""
    for toleration in tolerations:
        # upstream: an empty operator is "not Exists" here, although matching reads it as Equal
        if not toleration.key and toleration.operator != EXISTS:
            return "If the key is empty, operator must be Exists."
        if toleration.operator == EXISTS and toleration.value:
            return "If the operator is Exists, the value should be empty."
    return None


@dataclass(frozen=True, slots=True)
class TaintVerdict:
    """Whether one taint is tolerated; `expires` is when the tolerating toleration runs out (None: never)."""

    tolerated: bool
    expires: datetime | None = None
    expired_at: datetime | None = None


def _matches(taint: Taint, toleration: Toleration) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", EQUAL):
        return toleration.value == taint.value
    return toleration.operator == EXISTS


def _expiry(taint: Taint, nanoseconds: int) -> datetime:
    """The taint's timeAdded plus `nanoseconds`, both to the nanosecond as Go adds them, then rounded up
    to the microsecond a datetime holds: `now` (never finer than a microsecond) is before it exactly
    when it is before Go's. Held at the ends of Python's calendar where Go's wider time type goes on: a
    negative toleration on a taint the hub never stamped (Go's zero time) has long expired, a long one
    on a far-future stamp does not expire in any representable time."""
    total = taint.time_added_nanoseconds + nanoseconds
    try:
        return taint.time_added + timedelta(microseconds=-(-total // 1000))
    except OverflowError:
        end = datetime.min if total < 0 else datetime.max
        return end.replace(tzinfo=taint.time_added.tzinfo)


def taint_verdict(
    taint: Taint, tolerations: Sequence[Toleration], in_decisions: bool, now: datetime
) -> TaintVerdict:
    """Upstream isTaintTolerated: PreferNoSelect and already-decided NoSelectIfNew pass; else the first
    matching, unexpired toleration (in spec order) tolerates it."""
    if taint.effect == PREFER_NO_SELECT:
        return TaintVerdict(True)
    if taint.effect == NO_SELECT_IF_NEW and in_decisions:
        return TaintVerdict(True)
    expired_at = None
    for toleration in tolerations:
        if not _matches(taint, toleration):
            continue
        nanoseconds = toleration.duration_nanoseconds
        if nanoseconds is None:
            return TaintVerdict(True)
        expiry = _expiry(taint, nanoseconds)
        # upstream: tolerated only while now is strictly before the expiry
        if now < expiry:
            return TaintVerdict(True, expires=expiry)
        expired_at = expiry
    return TaintVerdict(False, expired_at=expired_at)


def cluster_tolerated(
    cluster: ManagedCluster, tolerations: Sequence[Toleration], in_decisions: bool, now: datetime
) -> tuple[bool, datetime | None]:
    """(tolerated, earliest expiry among its taints) — upstream isClusterTolerated."""
    earliest = None
    for taint in cluster.taints:
        verdict = taint_verdict(taint, tolerations, in_decisions, now)
        if not verdict.tolerated:
            return False, None
        if verdict.expires is not None and (earliest is None or verdict.expires < earliest):
            earliest = verdict.expires
    return True, earliest


def untolerated_reason(
    cluster: ManagedCluster, tolerations: Sequence[Toleration], in_decisions: bool, now: datetime
) -> str | None:
    """Why TaintToleration drops `cluster`, naming the first untolerated taint; None if it passes."""
    for taint in cluster.taints:
        verdict = taint_verdict(taint, tolerations, in_decisions, now)
        if verdict.tolerated:
            continue
        if verdict.expired_at is not None:
            return f"taint {taint.describe()} toleration expired at {format_time(verdict.expired_at)}"
        if taint.effect == NO_SELECT_IF_NEW:
            return f"taint {taint.describe()} is not tolerated (the cluster is not already decided)"
        return f"taint {taint.describe()} is not tolerated"
    return None


def _taint_kinds(inventory: OcmInventory, position: int) -> Hashable:
    return tuple((taint.key, taint.value, taint.effect) for taint in inventory.clusters[position].taints)


def _taints(inventory: OcmInventory, position: int) -> Hashable:
    return inventory.clusters[position].taints


def untolerated_reason_columns(
    tolerations: Sequence[Toleration], inventory: OcmInventory, positions: np.ndarray, decided: np.ndarray
) -> list[np.ndarray]:
    """Columns over `positions` such that clusters equal in both get the same `untolerated_reason`: the
    reason reads the cluster's taints and whether it is decided (`decided`, a mask over the inventory),
    and a taint's timeAdded only through a toleration that expires. The taints are coded once per
    inventory for every placement, without their timeAdded when no toleration expires (clusters the hub
    marked unreachable at different times then share one reason)."""
    if any(toleration.duration_nanoseconds is not None for toleration in tolerations):
        codes = inventory.projection_codes(("untolerated reason", "taints"), _taints)
    else:
        codes = inventory.projection_codes(("untolerated reason", "taint kinds"), _taint_kinds)
    return [codes[positions], decided[positions]]


def requeue_time(
    decided: Sequence[ManagedCluster], tolerations: Sequence[Toleration], now: datetime
) -> datetime | None:
    """Earliest toleration expiry over the clusters already decided that are still tolerated (upstream
    RequeueAfter); new candidates get theirs on the reconcile their PlacementDecision update triggers."""
    earliest = None
    for cluster in decided:
        tolerated, expires = cluster_tolerated(cluster, tolerations, True, now)
        if tolerated and expires is not None and (earliest is None or expires < earliest):
            earliest = expires
    return earliest


def _matching_rows(rows: TaintRows, toleration: Toleration) -> np.ndarray:
    """Which taint rows `toleration` matches, as `_matches` decides for one taint."""
    matches = np.ones(len(rows), dtype=bool)
    if toleration.effect:
        matches &= rows.with_effect(toleration.effect)
    if toleration.key:
        matches &= rows.with_key(toleration.key)
    if toleration.operator in ("", EQUAL):
        matches &= rows.with_value(toleration.value)
    elif toleration.operator != EXISTS:
        matches[:] = False
    return matches


def tolerated_rows(
    taints: TaintColumns, tolerations: Sequence[Toleration], decided: np.ndarray, now: datetime
) -> np.ndarray:
    """`taint_verdict(...).tolerated` of every taint row at once; `decided` masks the clusters in the
    placement's decisions (by inventory position).

    A taint is tolerated when any matching toleration is unexpired (which one comes first only matters
    for when it expires). Expiry is compared in whole microseconds as `_expiry` rounds it:
    now < timeAdded + duration exactly when now - timeAdded (microseconds) is below the duration's
    whole microseconds plus the timeAdded's and the duration's leftover nanoseconds rounded up. Every
    term stays far inside int64 for any datetime, so times past what a datetime holds need no clamping.
    """
    rows = taints.rows
    tolerated: np.ndarray = rows.with_effect(PREFER_NO_SELECT)
    tolerated |= rows.with_effect(NO_SELECT_IF_NEW) & decided[rows.owner]
    elapsed_us = epoch_micros(now) - taints.added_us
    for toleration in tolerations:
        matches = _matching_rows(rows, toleration)
        nanoseconds = toleration.duration_nanoseconds
        if nanoseconds is not None:
            whole_us, rest_ns = divmod(nanoseconds, 1000)
            matches &= elapsed_us < whole_us + (taints.added_ns + rest_ns + 999) // 1000
        tolerated |= matches
    return tolerated


def filter_taints(
    placement: Placement, inventory: OcmInventory, candidates: np.ndarray, now: datetime
) -> tuple[np.ndarray | None, ScheduleStatus]:
    """Upstream TaintToleration.Filter over inventory positions (None when Misconfigured stopped it)."""
    if len(candidates) == 0:
        return candidates, ScheduleStatus(plugin=PLUGIN)
    if (message := toleration_error(placement.tolerations)) is not None:
        return None, ScheduleStatus(MISCONFIGURED, PLUGIN, message)
    taints = inventory.taints
    tolerated = tolerated_rows(taints, placement.tolerations, inventory.decided_mask(*placement.key), now)
    dropped = np.zeros(inventory.size, dtype=bool)
    dropped[taints.rows.owner[~tolerated]] = True
    return candidates[~dropped[candidates]], ScheduleStatus(plugin=PLUGIN)


def placement_requeue_time(placement: Placement, inventory: OcmInventory, now: datetime) -> datetime | None:
    """Upstream TaintToleration.RequeueAfter: over every existing cluster in the placement's decisions."""
    names = inventory.decided_cluster_names(*placement.key)
    decided = [cluster for name in sorted(names) if (cluster := inventory.cluster(name)) is not None]
    return requeue_time(decided, placement.tolerations, now)
