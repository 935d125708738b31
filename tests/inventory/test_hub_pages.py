"""The hub client's list pages: decoded as `json` decodes them (through orjson when it can), and read one
after another with the next requested ahead, every object once and in the hub's order."""

import gc
import json
from typing import Any

import orjson
import pytest

from demohub import DemoHub
from inventory.hubclient import KINDS_BY_NAME, HubClient, decode
from inventory.models import ManagedCluster, SyncRun
from inventory.sync import sync_hub
from tests.factories import DemoHubRowFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        b'{"items": [{"metadata": {"name": "a", "labels": {"x": "\\u00e9\\u0000"}}}], "n": -0, "f": 1.5e-7}',
        # what orjson refuses and json accepts: NaN and Infinity, lone surrogates, a byte order mark, UTF-16
        b'{"nan": NaN, "inf": -Infinity, "huge": 1e400}',
        b'{"name": "\\ud800"}',
        b'\xef\xbb\xbf{"bom": 1}',
        '{"utf16": "é"}'.encode("utf-16"),
        # integers beyond 64 bits, which orjson would read as floats
        b'{"big": 123456789012345678901234567890, "small": -9223372036854775809}',
    ],
)
def test_a_body_decodes_as_json_decodes_it(body: bytes) -> None:
    decoded, expected = decode(body), json.loads(body)
    # NaN is not equal to itself: compare the encodings
    assert json.dumps(decoded) == json.dumps(expected)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_held_off_while_decoding_and_left_as_it_was(
    monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    seen: list[bool] = []
    real = orjson.loads

    def loads(data: bytes) -> Any:
        seen.append(gc.isenabled())
        return real(data)

    monkeypatch.setattr(orjson, "loads", loads)
    (gc.enable if enabled else gc.disable)()
    try:
        assert decode(b'{"items": []}') == {"items": []}
        assert seen == [False] and gc.isenabled() is enabled
    finally:
        gc.enable()


def test_pages_come_in_order_every_object_once(demo_hub: DemoHub) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    kind = KINDS_BY_NAME["ManagedCluster"]

    with HubClient(hub) as client:
        pages = list(client.list_pages(kind, limit=5))

    assert len(pages) > 2 and all(page.continue_token for page in pages[:-1]) and not pages[-1].continue_token
    names = [item["metadata"]["name"] for page in pages for item in page.items]
    assert names == demo_hub.store.names("ManagedCluster")


def test_an_object_only_json_decodes_is_synced_with_its_page(demo_hub: DemoHub) -> None:
    cluster = {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": "odd-numbers", "labels": {"tier": "odd"}},
        "spec": {"hubAcceptsClient": True, "extra": {"big": 10**30, "nan": float("nan")}},
    }
    demo_hub.store.create(cluster)
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)

    run = sync_hub(hub, trigger=SyncRun.Trigger.COMMAND)

    assert run.state == SyncRun.State.SUCCEEDED
    stored = ManagedCluster.objects.get(hub=hub, kind="ManagedCluster", name="odd-numbers")
    assert stored.labels == {"tier": "odd"}
    assert ManagedCluster.objects.filter(hub=hub, kind="ManagedCluster").count() == len(
        demo_hub.store.names("ManagedCluster")
    )
