"""The two hubs the hub contract tests run against, behind one small interface.

`DemoContractHub` is our demo hub; `RealContractHub` is kube-apiserver with the upstream CRDs, reset
and seeded with exactly the objects the demo hub seeds (`DemoHub(**SEED)`), so one test states one
contract for both. Each offers an admin client, writes "by someone else" (the demo hub's writes go
through its store, as its own controllers' do; the real hub's through the API as its admin) and
`compact()`, after which older resourceVersions and continue tokens are 410 Gone.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import kubernetes
from kubernetes.client import ApiClient, CustomObjectsApi
from kubernetes.client.rest import ApiException
from kubernetes.watch import Watch

from demohub import DemoHub
from demohub.resources import BY_KIND, OCM_GROUP, RESOURCES, Resource
from tests.realhub.conftest import delete_custom_objects
from tests.realhub.hub import RealHub

# what the `demo_hub` fixture serves, and what a real hub is seeded with
SEED: dict[str, Any] = {"clusters": 24, "fleet": True, "seed": 7}
# metadata only the server sets: a seeded object is created without it
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
# Seeded kinds the pinned KubeFleet CRDs refuse, left off the real hub. The dashboard's staged
# update runs follow a newer KubeFleet API (spec.state Initialize/Run/Stop) than the v0.1.2 CRD
# (Initialize/Execute/Pause/Abandon), and no contract test reads a run.
REFUSED_BY_UPSTREAM = frozenset({"ClusterStagedUpdateRun"})
# concurrent writes while seeding; the apiserver takes them in parallel, and each costs a round trip
SEED_WORKERS = 8
TIMEOUT = 10  # seconds; a hung request fails the test instead of hanging it


class ContractHub(Protocol):
    """A hub under the contract tests: an admin client, writes by others, and compaction."""

    client: ApiClient

    @property
    def objects(self) -> CustomObjectsApi: ...

    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def patch(self, kind: str, name: str, body: dict[str, Any], namespace: str = "") -> dict[str, Any]: ...

    def delete(self, kind: str, name: str, namespace: str = "") -> None: ...

    def compact(self) -> None: ...


class _Hub:
    def __init__(self, client: ApiClient) -> None:
        self.client = client

    @property
    def objects(self) -> CustomObjectsApi:
        return CustomObjectsApi(self.client)


class DemoContractHub(_Hub):
    """The demo hub: others write through its store, as its churn and simulated controllers do."""

    def __init__(self, hub: DemoHub, client: ApiClient) -> None:
        super().__init__(client)
        self.hub = hub

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.hub.store.create(obj)

    def patch(self, kind: str, name: str, body: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        return self.hub.store.patch(kind, name, body, namespace=namespace)

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self.hub.store.delete(kind, name, namespace=namespace)

    def compact(self) -> None:
        self.hub.compact()


class RealContractHub(_Hub):
    """kube-apiserver: others write through the API as its admin."""

    def __init__(self, hub: RealHub, client: ApiClient) -> None:
        super().__init__(client)
        self.hub = hub

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        resource = BY_KIND[obj["kind"]]
        namespace = obj["metadata"].get("namespace", "")
        created: dict[str, Any] = self._call(resource, namespace, "create", obj)
        if obj.get("status"):
            # status is a subresource: a create drops it, as it would anyone's
            created = self._call(resource, namespace, "patch", created["metadata"]["name"], obj, status=True)
        return created

    def patch(self, kind: str, name: str, body: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        result: dict[str, Any] = self._call(BY_KIND[kind], namespace, "patch", name, body)
        return result

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        self._call(BY_KIND[kind], namespace, "delete", name)

    def compact(self) -> None:
        self.hub.compact()

    def _call(self, resource: Resource, namespace: str, verb: str, *args: Any, status: bool = False) -> Any:
        """A CustomObjectsApi call on `resource`: the namespaced or cluster variant of `verb`."""
        scope = "namespaced" if resource.namespaced else "cluster"
        method = getattr(self.objects, f"{verb}_{scope}_custom_object{'_status' if status else ''}")
        where = (namespace,) if resource.namespaced else ()
        return method(resource.group, resource.version, *where, resource.plural, *args)

    def seed(self, objects: Iterable[dict[str, Any]]) -> None:
        """Every custom object deleted, then `objects` created as the demo hub holds them, status
        included; their namespaces are created first when missing, since a real hub, unlike the demo
        hub, refuses objects in a namespace that does not exist."""
        objects = list(objects)
        delete_custom_objects(self.client)
        core = kubernetes.client.CoreV1Api(self.client)
        existing = {namespace.metadata.name for namespace in core.list_namespace().items}
        wanted = {obj["metadata"]["namespace"] for obj in objects if obj["metadata"].get("namespace")}
        _in_parallel(
            lambda name: core.create_namespace({"metadata": {"name": name}}), sorted(wanted - existing)
        )
        _in_parallel(self.create, objects)


def _in_parallel(call: Callable[[Any], object], items: Iterable[Any]) -> None:
    with ThreadPoolExecutor(SEED_WORKERS) as pool:
        for _ in pool.map(call, items):
            pass  # consumed, so that the first failure is raised


@functools.cache
def seed_objects() -> tuple[dict[str, Any], ...]:
    """The objects `DemoHub(**SEED)` starts with, as a client would create them: no server metadata,
    and none of a kind in REFUSED_BY_UPSTREAM. Shared by every test: read-only."""
    store = DemoHub(**SEED).store
    objects = []
    for resource in (r for r in RESOURCES if r.kind not in REFUSED_BY_UPSTREAM):
        for item in store.list(resource).items:
            obj = copy.deepcopy(item)
            for field in SERVER_METADATA:
                obj["metadata"].pop(field, None)
            objects.append(obj)
    return tuple(objects)


def clusters(api: CustomObjectsApi, **kwargs: Any) -> dict[str, Any]:
    """A list of ManagedClusters."""
    listing: dict[str, Any] = api.list_cluster_custom_object(
        OCM_GROUP, "v1", "managedclusters", _request_timeout=TIMEOUT, **kwargs
    )
    return listing


def names(listing: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in listing["items"]]


def status_body(error: ApiException) -> dict[str, Any]:
    """The `kind: Status` object of an error answer."""
    body: dict[str, Any] = json.loads(error.body)
    return body


def new_cluster(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{OCM_GROUP}/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"hubAcceptsClient": True},
        "status": {
            "conditions": [
                {
                    "type": "ManagedClusterConditionAvailable",
                    "status": "True",
                    "reason": "ManagedClusterAvailable",
                    "message": "the agent is available",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        },
    }


def watch_clusters(
    api: CustomObjectsApi, resource_version: str, seconds: int = 1, **kwargs: Any
) -> list[dict[str, Any]]:
    """Every event of a ManagedCluster watch from `resource_version` until its timeout."""
    stream = Watch().stream(
        api.list_cluster_custom_object,
        OCM_GROUP,
        "v1",
        "managedclusters",
        resource_version=resource_version,
        timeout_seconds=seconds,
        _request_timeout=TIMEOUT + seconds,
        **kwargs,
    )
    return list(stream)
