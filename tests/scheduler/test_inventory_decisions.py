"""Replacing PlacementDecisions in a shared OcmInventory: the adjusted counts are a fresh count's, also
when worker threads replace decisions of different placements at the same time."""

import threading

from placement.scheduler.ocm.inventory import DecisionIndex, OcmInventory
from tests.scheduler.ocm.builders import cluster, decision, hub

CLUSTERS = [cluster(name) for name in ("a", "b", "c", "d")]


def _shared() -> OcmInventory:
    return hub(
        CLUSTERS,
        decisions=[
            decision("web", ["a", "b"]),
            decision("web", ["c"], name="web-decision-2"),
            decision("api", ["a", "gone"]),
            decision(None, ["d"], name="unlabelled"),
            decision("web", ["a"], namespace="other"),
        ],
    )


def _grouped(index: DecisionIndex) -> dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]:
    grouped = index.by_placement.items()
    return {key: sorted((d.name, d.cluster_names) for d in pages) for key, pages in grouped}


def _assert_as_fresh(index: DecisionIndex) -> None:
    """`index` holds what an index built from scratch over its decisions holds."""
    fresh = hub(CLUSTERS, decisions=index.decisions).decision_index()
    assert index.counts.tolist() == fresh.counts.tolist()
    assert +index.outside == +fresh.outside
    assert {k: v for k, v in _grouped(index).items() if v} == _grouped(fresh)


def test_replace_adjusts_counts_to_what_a_fresh_inventory_counts() -> None:
    inventory = _shared()
    inventory.balance_counts("apps", "web")  # the index exists before the replacement
    inventory.replace_decisions("apps", "web", [decision("web", ["b", "d", "elsewhere"])])
    inventory.replace_decisions("apps", "api", [])
    inventory.replace_decisions("apps", "new", [decision("new", ["c"])])
    _assert_as_fresh(inventory.decision_index())
    assert inventory.decided_cluster_names("apps", "web") == {"b", "d", "elsewhere"}
    assert inventory.own_decisions("apps", "api") == []
    fresh = hub(CLUSTERS, decisions=inventory.decisions)
    for key in (("apps", "web"), ("apps", "api"), ("apps", "new"), ("other", "web")):
        counts, max_count = inventory.balance_counts(*key)
        expected_counts, expected_max = fresh.balance_counts(*key)
        assert (counts.tolist(), max_count) == (expected_counts.tolist(), expected_max)


def test_replace_with_the_same_decisions_keeps_the_index() -> None:
    inventory = _shared()
    before = inventory.decision_index()
    same = [decision("web", ["c"], name="web-decision-2"), decision("web", ["a", "b"])]
    inventory.replace_decisions("apps", "web", same)
    assert inventory.decision_index() is before


def test_refresh_replaces_only_the_placements_that_differ() -> None:
    inventory = _shared()
    hub_now = [
        decision("web", ["a", "b"]),
        decision("web", ["c"], name="web-decision-2"),
        decision("api", ["b"]),
        decision("web", ["a"], namespace="other"),
        decision("batch", ["d"]),
    ]
    # api moved, batch is new; web in both namespaces is unchanged
    assert inventory.refresh_decisions(hub_now) == 2
    _assert_as_fresh(inventory.decision_index())
    assert inventory.decided_cluster_names("apps", "api") == {"b"}
    assert inventory.decided_cluster_names("apps", "batch") == {"d"}
    assert inventory.refresh_decisions(hub_now) == 0


def test_refresh_drops_the_decisions_of_placements_gone_from_the_hub() -> None:
    inventory = _shared()
    # web lost a page; api and other/web are gone
    assert inventory.refresh_decisions([decision("web", ["a", "b"])]) == 3
    assert inventory.own_decisions("apps", "api") == []
    assert inventory.own_decisions("other", "web") == []
    counts, max_count = inventory.balance_counts("apps", "none")
    # the unlabelled decision belongs to no placement, so no refresh replaces it
    assert counts.tolist() == [1, 1, 0, 1] and max_count == 1


def test_concurrent_replacements_leave_consistent_counts() -> None:
    inventory = _shared()
    names = [f"p{i}" for i in range(8)]
    rounds = 200
    seen: list[DecisionIndex] = []
    done = threading.Event()

    def replace(name: str, offset: int) -> None:
        for step in range(rounds):
            picked = [CLUSTERS[(offset + step + k) % len(CLUSTERS)].name for k in range(1 + step % 3)]
            inventory.replace_decisions("apps", name, [])
            inventory.replace_decisions("apps", name, [decision(name, picked, name=f"{name}-1")])

    def read() -> None:
        while not done.is_set():
            seen.append(inventory.decision_index())

    writers = [threading.Thread(target=replace, args=(name, i)) for i, name in enumerate(names)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    done.set()
    reader.join()
    final = inventory.decision_index()
    _assert_as_fresh(final)
    last = rounds - 1
    for i, name in enumerate(names):
        expected = {CLUSTERS[(i + last + k) % len(CLUSTERS)].name for k in range(1 + last % 3)}
        assert inventory.decided_cluster_names("apps", name) == expected
    for index in seen[:: max(1, len(seen) // 50)]:
        _assert_as_fresh(index)
