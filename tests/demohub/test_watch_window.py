"""The demo hub's watch window: per kind, recent events by count and age, bounded; older is 410 Expired."""

import threading
from datetime import UTC, datetime
from typing import Any

from demohub.seed import seed_store
from demohub.store import ERROR, Clock, Store

AT = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def seeded(**window: Any) -> Store:
    store = Store(seed=4, clock=Clock.frozen(AT), **window)
    seed_store(store, 4, fleet=True, seed=4)
    return store


def relabel(store: Store, kind: str, times: int) -> None:
    name = store.names(kind)[0]
    for index in range(times):
        store.patch(kind, name, {"metadata": {"labels": {"n": str(index)}}})


def watch(store: Store, kind: str, since: int, seconds: float = 0.2) -> list[dict[str, Any]]:
    return list(store.watch(kind, since=since, timeout=seconds, stopped=lambda: False))


def test_a_burst_of_one_kind_leaves_the_window_of_another_kind_alone() -> None:
    store = seeded(retained_events=5, max_events=5, window_seconds=0)
    since = store.resource_version
    relabel(store, "ManagedCluster", 1)
    relabel(store, "MemberCluster", 100)  # heartbeats: twenty times the window of their own kind

    events = watch(store, "ManagedCluster", since)

    assert [e["type"] for e in events] == ["MODIFIED"]
    assert store.window("ManagedCluster").expired_watches == 0


def test_a_watch_keeping_up_with_a_fast_writer_gets_every_event_and_no_410() -> None:
    store = Store(seed=4, retained_events=10)  # real time: the 75 s window holds every write below
    seed_store(store, 2, fleet=True, seed=4)
    since = store.resource_version
    writer = threading.Thread(target=relabel, args=(store, "MemberCluster", 3000))

    seen: list[dict[str, Any]] = []
    writer.start()
    for event in store.watch("MemberCluster", since=since, timeout=30, stopped=lambda: len(seen) >= 3000):
        seen.append(event)
    writer.join()

    assert ERROR not in {e["type"] for e in seen}
    assert [int(e["object"]["metadata"]["resourceVersion"]) for e in seen] == list(
        range(since + 1, since + 3001)
    )
    assert store.window("MemberCluster").events >= 3000


def test_a_watch_from_before_the_window_is_410_expired_once_its_events_aged_out() -> None:
    store = seeded(retained_events=3, window_seconds=60)
    since = store.resource_version
    relabel(store, "ManagedCluster", 10)
    assert len(watch(store, "ManagedCluster", since)) == 10  # all younger than 60 s: still there

    store.clock.advance(61)
    relabel(store, "ManagedCluster", 1)  # a write trims what aged out, down to the 3 kept at least

    [error] = watch(store, "ManagedCluster", since)
    assert error["type"] == ERROR
    assert (error["object"]["code"], error["object"]["reason"]) == (410, "Expired")
    assert len(watch(store, "ManagedCluster", store.resource_version - 3)) == 3
    assert store.window("ManagedCluster").events == 3
    assert store.window("ManagedCluster").expired_watches == 1


def test_the_window_never_holds_more_than_its_maximum_however_young_the_events() -> None:
    store = seeded(retained_events=10, max_events=50, window_seconds=3600)
    relabel(store, "MemberCluster", 1000)

    assert store.window("MemberCluster").events == 50
    assert watch(store, "MemberCluster", store.resource_version - 51)[0]["type"] == ERROR
    assert len(watch(store, "MemberCluster", store.resource_version - 50)) == 50
