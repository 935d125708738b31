"""HTTP front of the demo hub: Kubernetes REST paths and verbs mapped onto the `Store`.

Standard library only: `ThreadingHTTPServer` (one thread per connection), JSON bodies, watches as
chunked newline-delimited JSON.
"""

import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from demohub import discovery
from demohub.faults import Fault, FaultInjector
from demohub.patch import MERGE_PATCH
from demohub.resources import BY_PATH, Resource
from demohub.store import ApiError, ListPage, Store, bad_request
from placement.scheduler.labels import SelectorError, parse_selector_query

logger = logging.getLogger(__name__)

DEFAULT_WATCH_SECONDS = 1800  # the apiserver's minimum request timeout when a client sets none
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def _no_such_path() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


@dataclass(frozen=True)
class Route:
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str | None

    @property
    def object_namespace(self) -> str:
        return self.namespace or ""


def _discovery(segments: list[str], server_address: str) -> dict[str, Any] | None:
    """The discovery document at `segments`, or None when the path is not a discovery path."""
    if segments == ["api"]:
        return discovery.api_versions(server_address)
    if segments == ["api", "v1"]:
        return discovery.core_resources()
    if segments == ["apis"]:
        return discovery.api_group_list()
    if segments[:1] != ["apis"] or len(segments) not in (2, 3):
        return None
    document = (
        discovery.api_group(segments[1]) if len(segments) == 2 else discovery.api_resource_list(*segments[1:])
    )
    if document is None:
        raise _no_such_path()
    return document


def parse_route(segments: list[str]) -> Route:
    """`/apis/<g>/<v>[/namespaces/<ns>]/<plural>[/<name>[/status]]` to a Route, or 404."""
    if segments[:1] != ["apis"] or len(segments) < 4:
        raise _no_such_path()
    group, version, rest = segments[1], segments[2], segments[3:]
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = BY_PATH.get((group, version, rest[0]))
    if resource is None or len(rest) > 3 or (namespace is not None and not resource.namespaced):
        raise _no_such_path()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if subresource not in (None, "status") or (name and resource.namespaced and namespace is None):
        raise _no_such_path()
    return Route(resource, namespace, name, subresource)


def _first(query: dict[str, list[str]], key: str) -> str:
    return (query.get(key) or [""])[0]


def _flag(query: dict[str, list[str]], key: str) -> bool:
    """A boolean query parameter, read as Go's strconv.ParseBool does (the Python client sends "True")."""
    return _first(query, key) in ("1", "t", "T", "true", "TRUE", "True")


def _int_param(query: dict[str, list[str]], key: str) -> int | None:
    raw = _first(query, key)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError as error:
        raise bad_request(f"{key}: invalid integer {raw!r}") from error


def _limit(query: dict[str, list[str]]) -> int | None:
    """`limit`; zero or negative means no limit, as on the API server."""
    limit = _int_param(query, "limit")
    return limit if limit and limit > 0 else None


def _list_body(route: Route, page: ListPage, items: list[bytes]) -> bytes:
    """The list's JSON, its items already encoded (`Store.encoded`)."""
    metadata: dict[str, Any] = {"resourceVersion": str(page.resource_version)}
    if page.continue_token:
        metadata["continue"] = page.continue_token
    if page.continue_token and page.remaining is not None:
        metadata["remainingItemCount"] = page.remaining
    head = {"apiVersion": route.resource.api_version, "kind": route.resource.list_kind, "metadata": metadata}
    return b'%s,"items":[%s]}' % (json.dumps(head, separators=(",", ":")).encode()[:-1], b",".join(items))


class InFlight:
    """Requests being served at once (watches excluded: they stay open), and the most there have been
    since `reset()`: a client that issues its writes in parallel shows as more than one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0

    @contextmanager
    def serving(self) -> Iterator[None]:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1

    def reset(self) -> None:
        with self._lock:
            self.peak = self.now


class HubServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # open watches must not hold up stop()
    # The listen backlog (socketserver's default is 5, an API server's the system's, thousands): clients
    # that open several connections at once (a rollout round's parallel writes) overflowed 5 while the
    # accepting thread waited for the interpreter, and each connection dropped so was retried by TCP a
    # second later: at 50,000 clusters a round stalled about 1 s in two.
    request_queue_size = 1024

    def __init__(
        self, address: tuple[str, int], store: Store, faults: FaultInjector, bookmark_seconds: float
    ) -> None:
        super().__init__(address, HubRequestHandler)
        self.store = store
        self.faults = faults
        self.in_flight = InFlight()
        self.bookmark_seconds = bookmark_seconds
        self.stopping = False
        self.watch_epoch = 0

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        # a TCP server's own host is a str; the stubs also allow the bytes a caller may bind to
        assert isinstance(host, str)
        return f"{host}:{port}"

    def drop_watches(self) -> None:
        """Cut every open watch connection mid-stream, as a network failure would."""
        self.watch_epoch += 1
        self.store.wake()

    def stop(self) -> None:
        self.stopping = True
        self.store.wake()
        self.shutdown()
        self.server_close()


class HubRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and chunked responses for watches
    server: HubServer

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes; without this, Nagle + delayed ACK add 40 ms each
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's signature
        logger.debug("%s %s", self.address_string(), format % args)

    # ---- dispatch ----------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        body = self._read_body()
        url = urlsplit(self.path)
        if url.path in HEALTH_PATHS:
            self._send(200, b"ok", "text/plain")
            return
        query = parse_qs(url.query)
        with nullcontext() if _flag(query, "watch") else self.server.in_flight.serving():
            self._answer(method, url.path, query, body)

    def _answer(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> None:
        self.server.faults.delay()
        fault = self.server.faults.next_fault()
        if fault is not None:
            self._send_fault(fault)
            return
        try:
            self._serve(method, path, query, body)
        except ApiError as error:
            self._send_json(error.code, error.status())
        except Exception:  # a bug here must still answer like an API server would: a 500 Status
            logger.exception("demo hub failed on %s %s", method, self.path)
            self._send_json(500, ApiError(500, "InternalError", "Internal error occurred").status())

    def _serve(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> None:
        segments = [segment for segment in path.split("/") if segment]
        if segments == ["version"]:
            self._send_json(200, discovery.SERVER_VERSION)
            return
        document = _discovery(segments, self.server.address)
        if document is not None:
            self._require(method, "GET")
            self._send_json(200, document)
            return
        route = parse_route(segments)
        if route.name is None:
            self._serve_collection(method, route, query, body)
        else:
            self._serve_object(method, route, body)

    def _serve_collection(self, method: str, route: Route, query: dict[str, list[str]], body: bytes) -> None:
        if method == "POST":
            self._send_json(201, self._create(route, _json_object(body)))
            return
        self._require(method, "GET")
        if _first(query, "fieldSelector"):
            raise bad_request("field selectors are not supported by the demo hub")
        if _flag(query, "watch"):
            self._stream_watch(route, query)
            return
        try:
            selector = parse_selector_query(_first(query, "labelSelector"))
        except SelectorError as error:
            raise bad_request(f"unable to parse requirement: {error.message}") from error
        page = self.server.store.list(
            route.resource,
            namespace=route.namespace,
            selector=selector,
            limit=_limit(query),
            continue_token=_first(query, "continue"),
        )
        body = _list_body(route, page, self.server.store.encoded(route.resource, page.items))
        self._send(200, body, "application/json")

    def _serve_object(self, method: str, route: Route, body: bytes) -> None:
        store, name, namespace = self.server.store, route.name or "", route.object_namespace
        if method == "GET":
            self._send_json(200, store.get(route.resource, name, namespace))
        elif method == "PUT":
            obj = _json_object(body)
            self._concurrent_write(route, obj)
            self._send_json(
                200,
                store.replace(route.resource, name, obj, namespace=namespace, subresource=route.subresource),
            )
        elif method == "PATCH":
            patch_type = (self.headers.get("Content-Type") or MERGE_PATCH).split(";")[0].strip()
            patch = _json(body)
            if patch_type == MERGE_PATCH:
                self._concurrent_write(route, patch)
            self._send_json(
                200,
                store.patch(
                    route.resource,
                    name,
                    patch,
                    namespace=namespace,
                    patch_type=patch_type,
                    subresource=route.subresource,
                ),
            )
        elif method == "DELETE" and route.subresource is None:
            self._send_json(
                200, _deleted(route.resource, store.delete(route.resource, name, namespace=namespace))
            )
        else:
            raise _method_not_allowed(method)

    def _concurrent_write(self, route: Route, body: Any) -> None:
        """An injected conflict: another writer changes the object first, so this conditional update
        (one carrying the resourceVersion it was computed from) meets a 409."""
        sent = (body.get("metadata") or {}).get("resourceVersion") if isinstance(body, dict) else None
        if not sent:
            return
        self.server.store.write_concurrently(
            route.resource,
            route.name or "",
            sent,
            lambda: self.server.faults.conflict_due(route.resource.kind),
            namespace=route.object_namespace,
            status=route.subresource == "status",
        )

    def _create(self, route: Route, obj: dict[str, Any]) -> dict[str, Any]:
        obj.setdefault("apiVersion", route.resource.api_version)
        obj.setdefault("kind", route.resource.kind)
        if (obj["apiVersion"], obj["kind"]) != (route.resource.api_version, route.resource.kind):
            raise bad_request(
                f"the body is a {obj['kind']} ({obj['apiVersion']}), not a {route.resource.kind}"
            )
        body_namespace = (obj.get("metadata") or {}).get("namespace")
        if route.namespace and body_namespace and body_namespace != route.namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        obj.pop("status", None)  # status is a subresource: a create never stores it
        return self.server.store.create(obj, namespace=route.object_namespace)

    # ---- watch -------------------------------------------------------------------------------

    def _stream_watch(self, route: Route, query: dict[str, list[str]]) -> None:
        try:
            selector = parse_selector_query(_first(query, "labelSelector"))
        except SelectorError as error:
            raise bad_request(f"unable to parse requirement: {error.message}") from error
        since = _int_param(query, "resourceVersion") or None  # "" and "0" both mean "start from now"
        server, epoch = self.server, self.server.watch_epoch
        events = server.store.watch(
            route.resource,
            since=since,
            namespace=route.namespace,
            selector=selector,
            timeout=_int_param(query, "timeoutSeconds") or DEFAULT_WATCH_SECONDS,
            stopped=lambda: server.stopping or server.watch_epoch != epoch,
            bookmark_seconds=server.bookmark_seconds if _flag(query, "allowWatchBookmarks") else None,
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for event in events:
                self._write_chunk(json.dumps(event, separators=(",", ":")).encode() + b"\n")
            if server.stopping or server.watch_epoch != epoch:
                self.close_connection = True  # dropped: no final chunk, the client sees a broken stream
                return
            self._write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    # ---- responses ---------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _require(self, method: str, allowed: str) -> None:
        if method != allowed:
            raise _method_not_allowed(method)

    def _send_fault(self, fault: Fault) -> None:
        status = ApiError(fault.code, fault.reason, fault.message).status()
        headers = {}
        if fault.retry_after is not None:
            status["details"] = {"retryAfterSeconds": fault.retry_after}
            headers["Retry-After"] = str(fault.retry_after)
        self._send_json(fault.code, status, headers)

    def _send_json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(payload, separators=(",", ":")).encode(), "application/json", headers)

    def _send(self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _deleted(resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """What kube-apiserver answers a delete of a custom object: a Success Status naming it (the generic
    registry's finalizeDelete), not the object."""
    metadata = obj["metadata"]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": metadata["name"],
            "group": resource.group,
            "kind": resource.plural,
            "uid": metadata["uid"],
        },
    }


def _method_not_allowed(method: str) -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", f"the server does not allow this method on the requested resource: {method}"
    )


def _json(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError as error:
        raise bad_request(f"the request body is not valid JSON: {error}") from error


def _json_object(body: bytes) -> dict[str, Any]:
    obj = _json(body)
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
        raise bad_request("the request body must be a JSON object with object metadata")
    return obj
