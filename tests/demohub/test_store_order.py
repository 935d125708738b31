"""A kind's key order is sorted again only after an add or a delete (a replace keeps it): lists and names
stay in key order through every kind of write, and a paged list keeps the snapshot of its first page."""

from demohub.store import Store

CLUSTER = "ManagedCluster"


def cluster(name: str) -> dict[str, object]:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": CLUSTER,
        "metadata": {"name": name},
        "spec": {"hubAcceptsClient": True},
    }


def listed(store: Store) -> list[str]:
    return [obj["metadata"]["name"] for obj in store.list(CLUSTER).items]


def test_lists_and_names_keep_key_order_through_adds_replaces_and_deletes() -> None:
    store = Store()
    for name in ("delta", "alpha", "charlie"):
        store.create(cluster(name))
    assert listed(store) == store.names(CLUSTER) == ["alpha", "charlie", "delta"]

    store.patch(CLUSTER, "charlie", {"metadata": {"labels": {"tier": "gold"}}})
    store.create(cluster("bravo"))
    assert listed(store) == store.names(CLUSTER) == ["alpha", "bravo", "charlie", "delta"]
    assert store.list(CLUSTER).items[2]["metadata"]["labels"] == {"tier": "gold"}

    store.delete(CLUSTER, "alpha")
    store.patch(CLUSTER, "delta", {"metadata": {"labels": {"tier": "silver"}}})
    assert listed(store) == store.names(CLUSTER) == ["bravo", "charlie", "delta"]
    assert store.list(CLUSTER).items[2]["metadata"]["labels"] == {"tier": "silver"}


def test_a_paged_list_reads_the_snapshot_of_its_first_page() -> None:
    store = Store()
    for name in ("alpha", "charlie", "echo"):
        store.create(cluster(name))
    first = store.list(CLUSTER, limit=1)
    assert first.continue_token is not None

    store.create(cluster("bravo"))
    store.delete(CLUSTER, "echo")
    rest = store.list(CLUSTER, limit=10, continue_token=first.continue_token)

    assert [obj["metadata"]["name"] for obj in rest.items] == ["charlie", "echo"]
    assert listed(store) == ["alpha", "bravo", "charlie"]
