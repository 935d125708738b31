"""The demo hub's heartbeat stream: each live agent once per period, spread over it; 0 pauses it."""

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from demohub.churn import Churn
from demohub.seed import seed_store
from demohub.store import Clock, Store

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def churn() -> Iterator[Churn]:
    store = Store(seed=6, clock=Clock.frozen(AT))
    seed_store(store, 40, fleet=True, seed=6)
    store.clock.advance(60)  # a heartbeat a minute after the seeded ones changes each live agent
    churn = Churn(store, seed=6)
    yield churn
    churn.stop()


def arrivals(store: Store, since: int, seconds: float) -> list[tuple[float, str]]:
    """(arrival time, member name) of every MemberCluster write for `seconds` after `since`."""
    stream = store.watch("MemberCluster", since=since, timeout=seconds, stopped=lambda: False)
    return [(time.monotonic(), event["object"]["metadata"]["name"]) for event in stream]


def test_each_live_agent_reports_once_per_period_spread_over_it(churn: Churn) -> None:
    since = churn.store.resource_version
    churn.heartbeats(1.0)

    seen = arrivals(churn.store, since, 0.95)

    names = [name for _, name in seen]
    assert len(names) >= 20  # most of the 40 agents are alive
    assert len(set(names)) == len(names)  # nobody twice within one period
    assert seen[-1][0] - seen[0][0] >= 0.4  # a stream over the period, not one burst


def test_a_period_of_zero_pauses_the_heartbeats(churn: Churn) -> None:
    churn.heartbeats(0.2)
    arrivals(churn.store, churn.store.resource_version, 0.3)
    churn.heartbeats(0)
    paused_at = churn.store.resource_version

    assert arrivals(churn.store, paused_at, 0.5) == []
