"""The hub client's watch reads events line by line as they arrive, each decoded once: lines split across
chunks are joined, blank lines skipped, a line the server cut off dropped, invalid UTF-8 replaced; an
ERROR event raises what its status code means (410: GoneError)."""

from collections.abc import Iterator
from typing import Any

import pytest

from inventory.hubclient import KINDS_BY_NAME, GoneError, HubClient, HubError, TransientHubError
from tests.factories import HubFactory

pytestmark = pytest.mark.django_db


class Answer:
    """A streamed answer of the hub, in these chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = False

    def stream(self, amt: None, decode_content: bool) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


def watched(monkeypatch: pytest.MonkeyPatch, chunks: list[bytes]) -> tuple[list[dict[str, Any]], Answer]:
    answer = Answer(chunks)
    with HubClient(HubFactory(server_url="https://hub.invalid")) as client:
        monkeypatch.setattr(client.api, "list_cluster_custom_object", lambda *args, **kwargs: answer)
        events = list(client.watch(KINDS_BY_NAME["ManagedCluster"], "7"))
    return events, answer


def test_events_are_read_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [
        b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MOD',
        b'IFIED","object":{"metadata":{"name":"b","labels":{"x":"\xff"}}}}\n\n',
        b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n{"type":"DELETED","obj',
    ]

    events, answer = watched(monkeypatch, chunks)

    assert events == [
        {"type": "ADDED", "object": {"metadata": {"name": "a"}}},
        {"type": "MODIFIED", "object": {"metadata": {"name": "b", "labels": {"x": "\ufffd"}}}},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
    ]
    assert answer.closed


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (b'{"kind":"Status","code":410,"reason":"Expired","message":"too old"}', GoneError),
        (b'{"kind":"Status","code":500,"reason":"InternalError","message":"etcd"}', TransientHubError),
        (b'{"kind":"Status"}', HubError),
    ],
)
def test_an_error_event_raises_what_its_code_means(
    monkeypatch: pytest.MonkeyPatch, status: bytes, error: type[HubError]
) -> None:
    chunks = [
        b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ERROR","object":' + status + b"}\n"
    ]

    with pytest.raises(HubError) as raised:
        watched(monkeypatch, chunks)

    assert type(raised.value) is error


def test_a_line_that_is_not_json_fails_the_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HubError):
        watched(monkeypatch, [b"not json\n"])
