"""The columnar TaintToleration filter gives every taint the verdict `taint_verdict` gives it alone,
at the edges of its time arithmetic too: Go's zero time, nanoseconds below the microsecond, expiries
exactly at `now`, tolerationSeconds that wrap around, stamps near the end of the calendar."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import numpy as np

from placement.scheduler.ocm.inventory import OcmInventory
from placement.scheduler.ocm.taints import filter_taints, taint_verdict, tolerated_rows
from placement.scheduler.ocm.types import (
    NO_SELECT,
    NO_SELECT_IF_NEW,
    PREFER_NO_SELECT,
    ManagedCluster,
    Placement,
    Taint,
    Toleration,
)
from placement.scheduler.timeutil import ZERO_TIME
from tests.scheduler.ocm.builders import NOW, decision

KEYS = ("gpu", "maintenance")
VALUES = ("", "shared")
EFFECTS = (NO_SELECT, PREFER_NO_SELECT, NO_SELECT_IF_NEW)
TIMES_ADDED = (
    ZERO_TIME,
    NOW - timedelta(seconds=10),
    NOW - timedelta(seconds=10, microseconds=-1),
    NOW + timedelta(seconds=5),
    (NOW - timedelta(seconds=10)).astimezone(timezone(timedelta(hours=5))),
    datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
)
NANOSECONDS = (0, 1, 999)
SECONDS = (None, 0, 9, 10, 11, -1, 9_223_372_036, 9_223_372_037, 18_446_744_174, 2**63 - 1, -(2**63))


def _taint(rng: random.Random) -> Taint:
    return Taint(
        key=rng.choice(KEYS),
        effect=rng.choice(EFFECTS),
        value=rng.choice(VALUES),
        time_added=rng.choice(TIMES_ADDED),
        time_added_nanoseconds=rng.choice(NANOSECONDS),
    )


def _toleration(rng: random.Random) -> Toleration:
    return Toleration(
        key=rng.choice(("", "other", *KEYS)),
        operator=rng.choice(("", "Equal", "Exists")),
        value=rng.choice(VALUES),
        effect=rng.choice(("", *EFFECTS)),
        toleration_seconds=rng.choice(SECONDS),
    )


def test_every_row_gets_the_verdict_of_the_taint_alone() -> None:
    rng = random.Random(21)
    for _ in range(300):
        clusters = [
            ManagedCluster(f"c{i}", taints=tuple(_taint(rng) for _ in range(rng.randint(0, 3))))
            for i in range(4)
        ]
        tolerations = tuple(_toleration(rng) for _ in range(rng.randint(0, 3)))
        decided = np.array([rng.random() < 0.5 for _ in clusters])
        inventory = OcmInventory(clusters)
        rows = inventory.taints
        expected = [
            taint_verdict(taint, tolerations, bool(decided[position]), NOW).tolerated
            for position, cluster in enumerate(inventory.clusters)
            for taint in cluster.taints
        ]
        assert tolerated_rows(rows, tolerations, decided, NOW).tolist() == expected, (clusters, tolerations)


def test_a_cluster_is_dropped_when_any_of_its_taints_is_not_tolerated() -> None:
    gpu, spot = Taint("gpu", NO_SELECT, "shared"), Taint("spot", NO_SELECT_IF_NEW)
    clusters = [
        ManagedCluster("both", taints=(gpu, spot)),
        ManagedCluster("decided", taints=(gpu, spot)),
        ManagedCluster("gpu", taints=(gpu,)),
        ManagedCluster("plain"),
    ]
    inventory = OcmInventory(clusters, decisions=[decision("web", ["decided", "gone"])])
    placement = Placement("apps", "web", tolerations=(Toleration("gpu", "Equal", "shared"),))
    filtered, status = filter_taints(placement, inventory, np.array([3, 2, 1, 0]), NOW)
    assert status.code == "Success"
    assert filtered is not None and [inventory.names[p] for p in filtered] == ["plain", "gpu", "decided"]
