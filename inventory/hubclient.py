"""The hub's Kubernetes API through the official client: the only module that imports `kubernetes`.

One `HubClient` (one `ApiClient`) per hub, built from its server URL and decrypted credentials.
Errors are classified once here: `TransientHubError` is worth retrying, `HubError` is not.
"""

import gc
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import orjson
import urllib3
from django.conf import settings
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from inventory.credentials import CredentialsError
from inventory.models import Hub
from placement.scheduler.untrusted import load_yaml

OCM_GROUP = "cluster.open-cluster-management.io"
FLEET_CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
FLEET_PLACEMENT_GROUP = "placement.kubernetes-fleet.io"
# Seconds to connect; reading waits settings.HUB_REQUEST_TIMEOUT between bytes of an answer.
CONNECT_TIMEOUT = 10.0
# A method of the kubernetes client's CustomObjectsApi: it answers the decoded JSON body (the object, the
# list, or the Status of a delete).
ApiCall = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    version: str
    plural: str
    namespaced: bool
    fleet: bool = False


# In sync order: sets before clusters (memberships), placements before their decisions and bindings.
KINDS: tuple[Kind, ...] = (
    Kind("ManagedClusterSet", OCM_GROUP, "v1beta2", "managedclustersets", namespaced=False),
    Kind("ManagedCluster", OCM_GROUP, "v1", "managedclusters", namespaced=False),
    Kind("ManagedClusterSetBinding", OCM_GROUP, "v1beta2", "managedclustersetbindings", namespaced=True),
    Kind("AddOnPlacementScore", OCM_GROUP, "v1alpha1", "addonplacementscores", namespaced=True),
    Kind("Placement", OCM_GROUP, "v1beta1", "placements", namespaced=True),
    Kind("PlacementDecision", OCM_GROUP, "v1beta1", "placementdecisions", namespaced=True),
    *(
        Kind(name, group, "v1beta1", plural, namespaced=False, fleet=True)
        for name, group, plural in (
            ("MemberCluster", FLEET_CLUSTER_GROUP, "memberclusters"),
            ("ClusterResourcePlacement", FLEET_PLACEMENT_GROUP, "clusterresourceplacements"),
            ("ClusterResourceBinding", FLEET_PLACEMENT_GROUP, "clusterresourcebindings"),
            ("ClusterStagedUpdateStrategy", FLEET_PLACEMENT_GROUP, "clusterstagedupdatestrategies"),
            # runs after their placements, approval requests after their runs
            ("ClusterStagedUpdateRun", FLEET_PLACEMENT_GROUP, "clusterstagedupdateruns"),
            ("ClusterApprovalRequest", FLEET_PLACEMENT_GROUP, "clusterapprovalrequests"),
        )
    ),
)
KINDS_BY_NAME = {kind.name: kind for kind in KINDS}
APPROVAL_REQUEST = "ClusterApprovalRequest"


def served_kinds(hub: Hub) -> list[Kind]:
    return [kind for kind in KINDS if (hub.serves_fleet if kind.fleet else hub.serves_ocm)]


class HubError(Exception):
    """The hub refused or cannot be used (401/403/404/other 4xx, bad credentials); retrying will not help."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TransientHubError(HubError):
    """Connection error, timeout, 429 or 5xx: worth retrying later."""


class GoneError(HubError):
    """410 Gone: the resourceVersion or continue token expired; list again from the start."""


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    continue_token: str
    resource_version: str


def _path(kind: Kind, name: str, namespace: str) -> str:
    return f"{kind.plural} {namespace}/{name}" if kind.namespaced else f"{kind.plural} {name}"


def classify(exc: Exception, what: str) -> HubError:
    """The HubError subclass for an exception raised by the client or urllib3."""
    if isinstance(exc, client.ApiException):
        status = exc.status or 0
        message = f"{what}: HTTP {status} {exc.reason or ''}".rstrip()
        if status == 410:
            return GoneError(message, status)
        if status == 429 or status >= 500 or status == 0:
            return TransientHubError(message, status)
        return HubError(message, status)
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return TransientHubError(f"{what}: {type(exc).__name__}: {exc}")
    return HubError(f"{what}: {exc}")


def _status_message(exc: Exception) -> str:
    """`message` of the `kind: Status` body an API server answers a refused request with."""
    try:
        return str(json.loads(getattr(exc, "body", None) or "{}").get("message") or "")
    except (TypeError, ValueError, AttributeError):
        return ""


def explained(exc: Exception, what: str) -> HubError:
    """`classify` with the hub's own reason appended (a webhook's denial, what RBAC refused, a Conflict):
    what the person reading the error needs."""
    error = classify(exc, what)
    reason = _status_message(exc)
    return type(error)(f"{error}: {reason}" if reason else str(error), error.status)


# Every digit made a "0" and every other byte a space, to find runs of digits in a body at C speed.
_DIGITS_ONLY = bytes(48 if byte in b"0123456789" else 32 for byte in range(256))
# orjson reads an integer literal beyond 64 bits as a float, where `json` keeps it exact; such a literal
# has at least this many digits in a row.
_LONG_INTEGER = b"0" * 19


class _CollectorPause:
    """Python's cyclic garbage collector held off while any thread is inside (`with`), then restored.

    Decoding a page of a list creates tens of thousands of dicts and lists, each of which counts towards
    the collector's next pass; the passes it sets off while decoding (about half of a page's decoding
    time) can find nothing to free, since decoded JSON holds no reference cycle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if not self._inside:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._inside += 1
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                if not self._inside and self._was_enabled:
                    gc.enable()


_collector_paused = _CollectorPause()


def decode(data: bytes) -> Any:
    """A JSON body as `json.loads` decodes it, through orjson (about 1.4 times faster on a hub's pages)
    when the result is certain to be the same, with the garbage collector held off meanwhile (which
    halves what is left: `_CollectorPause`).

    orjson refuses a few things `json` accepts (NaN and Infinity, escaped lone surrogates, a byte order
    mark, bodies in UTF-16 or UTF-32) and reads integers beyond 64 bits as floats: a body holding one
    (or, rarely, only a long run of digits in a string) is decoded by `json`, so a hub object holding
    such a value is validated and refused alone, exactly as before, rather than failing its page."""
    with _collector_paused():
        if _LONG_INTEGER in data.translate(_DIGITS_ONLY):
            return json.loads(data)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data)


def _lines(response: Any) -> Iterator[bytes]:
    """The complete non-blank lines of a streamed answer, as they arrive; a last line the server cut off
    is dropped, as the client's own watch drops it."""
    rest = b""
    for chunk in response.stream(amt=None, decode_content=False):
        *lines, rest = (rest + chunk).split(b"\n")
        yield from (line for line in lines if line.strip())


def _error_event(status: Any, what: str) -> HubError:
    """The error a watch's ERROR event (a Status object) stands for, classified as the answer would be."""
    code = status.get("code") if isinstance(status, dict) else None
    if not isinstance(code, int):
        return HubError(f"{what}: an ERROR event without a status code")
    reason = f"{status.get('reason')}: {status.get('message')}"
    return classify(client.ApiException(status=code, reason=reason), what)


def _configuration() -> client.Configuration:
    configuration = client.Configuration()
    # urllib3 would retry 429/5xx on its own (read when the ApiClient is made); the sync task decides.
    configuration.retries = False
    return configuration


class HubClient:
    """A typed slice of the hub's API: paged lists and watches of the kinds in `KINDS`."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        read = float(settings.HUB_REQUEST_TIMEOUT)
        self.timeout = (min(CONNECT_TIMEOUT, read), read)
        self._temp_files: list[str] = []
        # requests the next page of a list while the caller stores this one (`list_pages`)
        self._prefetch: ThreadPoolExecutor | None = None
        try:
            self.api_client = self._api_client(hub.credentials)
        # ValueError covers the kubeconfig YAML the loader refuses (InputError)
        except (CredentialsError, ConfigException, ValueError, KeyError) as exc:
            self.close()
            raise HubError(f"hub {hub.name}: unusable credentials: {exc}") from None
        self.api = client.CustomObjectsApi(self.api_client)

    @property
    def host(self) -> str:
        """The server URL the client talks to (from the kubeconfig when the hub has none)."""
        host: str = self.api_client.configuration.host
        return host

    def _api_client(self, credentials: dict[str, Any]) -> client.ApiClient:
        if "kubeconfig" in credentials:
            configuration = _configuration()
            api_client = config.new_client_from_config_dict(
                load_yaml(credentials["kubeconfig"]),
                context=credentials.get("context") or None,
                persist_config=False,
                client_configuration=configuration,
            )
            if self.hub.server_url:
                configuration.host = self.hub.server_url.rstrip("/")
            return api_client
        configuration = _configuration()
        configuration.host = self.hub.server_url.rstrip("/")
        if credentials.get("token"):
            configuration.api_key = {"authorization": credentials["token"]}
            configuration.api_key_prefix = {"authorization": "Bearer"}
        if credentials.get("ca_data"):
            configuration.ssl_ca_cert = self._temp_file(credentials["ca_data"])
        configuration.verify_ssl = not credentials.get("insecure", False)
        return client.ApiClient(configuration)

    def _temp_file(self, content: str) -> str:
        """The client reads CA bundles from files; removed again by close()."""
        handle, path = tempfile.mkstemp(prefix="fleetui-ca-", suffix=".pem")
        with os.fdopen(handle, "w") as file:
            file.write(content)
        self._temp_files.append(path)
        return path

    def list_page(self, kind: Kind, continue_token: str = "", limit: int = 500) -> Page:
        """One page of a cluster-wide list (every namespace for namespaced kinds).

        The body is decoded from its bytes (`decode`) directly: the client would first copy it into a
        string, then decode that, and keep the string as its last response until the next request.
        """
        what = f"hub {self.hub.name}: list {kind.plural}"
        try:
            response = self._raw_list(
                kind, limit=limit, _continue=continue_token or None, _request_timeout=self.timeout
            )
            try:
                body = decode(response.data)
            finally:
                response.release_conn()
        except ValueError as exc:
            raise HubError(f"{what}: the answer is not JSON: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - every client failure is classified, none escapes raw
            # with the hub's reason: a refused list names what the token lacks on the hub page
            raise explained(exc, what) from exc
        if not isinstance(body, dict):
            raise HubError(f"{what}: the answer is not a list")
        metadata = body.get("metadata") or {}
        return Page(
            body.get("items") or [], metadata.get("continue") or "", metadata.get("resourceVersion") or ""
        )

    def _raw_list(self, kind: Kind, **params: Any) -> Any:
        """A cluster-wide list or watch of `kind` answered as the raw response (its body not decoded by
        the client: `decode` reads it)."""
        return self.api.list_cluster_custom_object(
            kind.group, kind.version, kind.plural, _preload_content=False, **params
        )

    def list_pages(self, kind: Kind, limit: int = 500) -> Iterator[Page]:
        """Every page of a list, in order (`list_page`); a failure is raised where its page would be.

        The next page is requested as soon as a page arrives, from a thread of this client, so the hub
        encodes and sends it while the caller stores this one: a list costs about the larger of the
        hub's time and the caller's, not their sum. One request is in flight at a time, and at most two
        pages are held."""
        if self._prefetch is None:
            self._prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"hub-list-{self.hub.name}")
        pending: Future[Page] = self._prefetch.submit(self.list_page, kind, "", limit)
        while True:
            page = pending.result()
            if page.continue_token:
                pending = self._prefetch.submit(self.list_page, kind, page.continue_token, limit)
            yield page
            if not page.continue_token:
                return

    def watch(self, kind: Kind, resource_version: str, timeout_seconds: int = 60) -> Iterator[dict[str, Any]]:
        """Events {type, object} from `resource_version` until the server ends the watch.

        BOOKMARK events are passed on (their object carries only the resourceVersion); a 410 Gone, as the
        answer or as an ERROR event, raises GoneError. Closing the iterator closes the connection. Each
        event is decoded once from its line (`decode`, invalid UTF-8 replaced as the client's own watch
        does), where the client's watch decodes it, encodes its object and decodes that again.
        """
        what = f"hub {self.hub.name}: watch {kind.plural}"
        try:
            response = self._raw_list(
                kind,
                watch=True,
                resource_version=resource_version,
                allow_watch_bookmarks=True,
                timeout_seconds=timeout_seconds,
                _request_timeout=(self.timeout[0], timeout_seconds + self.timeout[1]),
            )
        except Exception as exc:  # noqa: BLE001 - classified like list errors
            raise classify(exc, what) from exc
        try:
            for line in _lines(response):
                event = decode(line.decode("utf-8", errors="replace").encode())
                if not isinstance(event, dict):
                    raise HubError(f"{what}: an event that is not an object")
                if event.get("type") == "ERROR":
                    raise _error_event(event.get("object"), what)
                yield {"type": event.get("type"), "object": event.get("object")}
        except (GeneratorExit, HubError):
            raise
        except Exception as exc:  # noqa: BLE001 - classified like list errors
            raise classify(exc, what) from exc
        finally:
            response.close()
            response.release_conn()

    # --- PlacementDecision writes (publishing) -------------------------------------------------------

    def _decision_call(self, what: str, call: ApiCall, *args: Any, **kwargs: Any) -> dict[str, Any]:
        kind = KINDS_BY_NAME["PlacementDecision"]
        try:
            return call(kind.group, kind.version, *args, _request_timeout=self.timeout, **kwargs)
        except Exception as exc:  # noqa: BLE001 - classified like list errors
            raise explained(exc, f"hub {self.hub.name}: {what}") from exc

    def list_placement_decisions(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        """PlacementDecisions in `namespace` matching `label_selector` (kubectl syntax)."""
        body = self._decision_call(
            f"list placementdecisions in {namespace}",
            self.api.list_namespaced_custom_object,
            namespace,
            "placementdecisions",
            label_selector=label_selector,
        )
        return body.get("items") or []

    def create_placement_decision(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create a PlacementDecision; the API server drops `status` (a subresource): patch it after."""
        name = body["metadata"]["name"]
        return self._decision_call(
            f"create placementdecision {namespace}/{name}",
            self.api.create_namespaced_custom_object,
            namespace,
            "placementdecisions",
            body,
        )

    def delete_placement_decision(self, namespace: str, name: str) -> None:
        self._decision_call(
            f"delete placementdecision {namespace}/{name}",
            self.api.delete_namespaced_custom_object,
            namespace,
            "placementdecisions",
            name,
        )

    # --- ClusterResourceBinding writes (dashboard-owned CRPs' bindings, placement.hubbindings) ------------

    def _binding_call(self, what: str, call: ApiCall, *args: Any, **kwargs: Any) -> dict[str, Any]:
        kind = KINDS_BY_NAME["ClusterResourceBinding"]
        try:
            return call(kind.group, kind.version, kind.plural, *args, _request_timeout=self.timeout, **kwargs)
        except Exception as exc:  # noqa: BLE001 - classified like list errors
            raise explained(exc, f"hub {self.hub.name}: {what}") from exc

    def list_cluster_resource_bindings(self, label_selector: str) -> list[dict[str, Any]]:
        """ClusterResourceBindings matching `label_selector` (kubectl syntax)."""
        body = self._binding_call(
            "list clusterresourcebindings", self.api.list_cluster_custom_object, label_selector=label_selector
        )
        return body.get("items") or []

    def create_cluster_resource_binding(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a binding; the API server drops `status` (a subresource)."""
        name = body["metadata"]["name"]
        return self._binding_call(
            f"create clusterresourcebinding {name}", self.api.create_cluster_custom_object, body
        )

    def delete_cluster_resource_binding(self, name: str) -> None:
        self._binding_call(
            f"delete clusterresourcebinding {name}", self.api.delete_cluster_custom_object, name
        )

    # --- any kind by name: the reads and conditional writes of inventory.hubwrites ----------------------

    def get_object(self, kind_name: str, name: str, namespace: str = "") -> dict[str, Any]:
        """The object as the hub has it now (never a cached copy)."""
        kind = KINDS_BY_NAME[kind_name]
        where = (namespace, kind.plural) if kind.namespaced else (kind.plural,)
        call = (
            self.api.get_namespaced_custom_object if kind.namespaced else self.api.get_cluster_custom_object
        )
        return self._edit_call(kind_name, f"get {_path(kind, name, namespace)}", call, *where, name)

    def patch_object(
        self, kind_name: str, name: str, patch: dict[str, Any], *, namespace: str = "", status: bool = False
    ) -> dict[str, Any]:
        """A JSON merge patch (the client's content type for custom objects) of the object, or of its status
        subresource with `status=True`; a `metadata.resourceVersion` in `patch` makes it conditional (409
        Conflict when the object changed since that version)."""
        kind = KINDS_BY_NAME[kind_name]
        api = self.api
        if kind.namespaced:
            call = api.patch_namespaced_custom_object_status if status else api.patch_namespaced_custom_object
            where: tuple[str, ...] = (namespace, kind.plural)
        else:
            call = api.patch_cluster_custom_object_status if status else api.patch_cluster_custom_object
            where = (kind.plural,)
        what = f"patch {_path(kind, name, namespace)}{'/status' if status else ''}"
        return self._edit_call(kind_name, what, call, *where, name, patch)

    def get_approval_request(self, name: str) -> dict[str, Any]:
        """The ClusterApprovalRequest as the hub has it now (never a cached copy)."""
        return self.get_object(APPROVAL_REQUEST, name)

    # --- cluster taints and ManagedClusterSetBindings (the editors of inventory.editing) ------------------

    def _edit_call(self, kind_name: str, what: str, call: ApiCall, *args: Any) -> dict[str, Any]:
        """`call(group, version, *args)` for `kind_name`; a refusal carries the hub's own reason (a
        webhook's denial, a Conflict), which is what the person editing needs to read."""
        kind = KINDS_BY_NAME[kind_name]
        try:
            return call(kind.group, kind.version, *args, _request_timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - classified like list errors
            raise explained(exc, f"hub {self.hub.name}: {what}") from exc

    def _cluster_call(
        self, verb: str, call: ApiCall, kind_name: str, name: str, *extra: Any
    ) -> dict[str, Any]:
        plural = KINDS_BY_NAME[kind_name].plural
        return self._edit_call(kind_name, f"{verb} {plural} {name}", call, plural, name, *extra)

    def get_cluster(self, kind_name: str, name: str) -> dict[str, Any]:
        """A ManagedCluster or MemberCluster (`kind_name`) as the hub has it now."""
        return self._cluster_call("get", self.api.get_cluster_custom_object, kind_name, name)

    def patch_cluster(self, kind_name: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch of a ManagedCluster or MemberCluster; a `metadata.resourceVersion` in `patch`
        makes it conditional (409 Conflict when the cluster changed meanwhile)."""
        return self._cluster_call("patch", self.api.patch_cluster_custom_object, kind_name, name, patch)

    def _set_binding_call(
        self, verb: str, call: ApiCall, namespace: str, name: str, argument: Any
    ) -> dict[str, Any]:
        kind = KINDS_BY_NAME["ManagedClusterSetBinding"]
        what = f"{verb} {kind.plural} {namespace}/{name}"
        return self._edit_call(kind.name, what, call, namespace, kind.plural, argument)

    def create_cluster_set_binding(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create a ManagedClusterSetBinding in `namespace` (named after its set, as the hub requires)."""
        create = self.api.create_namespaced_custom_object
        return self._set_binding_call("create", create, namespace, body["metadata"]["name"], body)

    def delete_cluster_set_binding(self, namespace: str, name: str) -> dict[str, Any]:
        """Delete a ManagedClusterSetBinding; answers what the hub returns (the object, or a Status)."""
        delete = self.api.delete_namespaced_custom_object
        return self._set_binding_call("delete", delete, namespace, name, name)

    def close(self) -> None:
        if self._prefetch is not None:
            # a page requested for a list the caller left is waited for, not cut off mid-answer
            self._prefetch.shutdown(wait=True)
            self._prefetch = None
        api_client = getattr(self, "api_client", None)
        if api_client is not None:
            api_client.close()
        for path in self._temp_files:
            os.unlink(path)
        self._temp_files.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
