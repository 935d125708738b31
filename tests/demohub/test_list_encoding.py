"""A list's items are encoded once per stored version (`Store.encoded`): the same bytes `json.dumps`
writes, a version written since encoded afresh, and the page read before a write still served as it
was read."""

import json
import urllib.request

from demohub.store import Store

CLUSTER = "ManagedCluster"


def cluster(name: str, labels: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": CLUSTER,
        "metadata": {"name": name, "labels": labels},
        "spec": {"hubAcceptsClient": True},
    }


def compact(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def test_items_encode_as_json_dumps_and_a_write_is_encoded_again() -> None:
    store = Store()
    store.create(cluster("east", {"region": "east"}))
    store.create(cluster("west", {"région": "ouest"}))
    page = store.list(CLUSTER)

    first = store.encoded(CLUSTER, page.items)
    assert first == [compact(obj) for obj in page.items]
    # the second list of the same versions answers the very bytes the first made
    again = store.encoded(CLUSTER, store.list(CLUSTER).items)
    assert all(a is b for a, b in zip(again, first, strict=True))

    store.patch(CLUSTER, "east", {"metadata": {"labels": {"region": "north"}}})
    now = store.list(CLUSTER).items
    assert store.encoded(CLUSTER, now) == [compact(obj) for obj in now]
    assert json.loads(store.encoded(CLUSTER, now)[0])["metadata"]["labels"] == {"region": "north"}
    # a page read before the write is still encoded as it was read
    assert store.encoded(CLUSTER, page.items) == first


def test_a_write_drops_the_encoding_of_the_version_it_replaces() -> None:
    store = Store()
    store.create(cluster("east", {"region": "east"}))
    store.encoded(CLUSTER, store.list(CLUSTER).items)

    store.patch(CLUSTER, "east", {"metadata": {"labels": {"region": "north"}}})
    store.delete(CLUSTER, "east")

    assert not store._encoded[store.resolve(CLUSTER)]


def test_a_list_over_http_is_the_api_servers_list(demo_hub) -> None:  # type: ignore[no-untyped-def]
    url = f"{demo_hub.url}/apis/cluster.open-cluster-management.io/v1/managedclusters?limit=2"
    with urllib.request.urlopen(url) as answer:
        body = json.loads(answer.read())
    assert (
        body["kind"] == "ManagedClusterList" and body["apiVersion"] == "cluster.open-cluster-management.io/v1"
    )
    assert len(body["items"]) == 2 and body["metadata"]["continue"]
    assert body["metadata"]["remainingItemCount"] >= 0
    assert [item["metadata"]["name"] for item in body["items"]] == sorted(
        item["metadata"]["name"] for item in body["items"]
    )
