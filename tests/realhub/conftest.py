"""The real hub's fixtures: etcd and kube-apiserver built from the upstream modules, with the upstream CRDs
(`start_real_hub`; the session's `real_hub` fixture is in tests/conftest.py, for the contract tests too).

The binaries come from `make realhub-bin`; without them the tests marked `realhub` skip, since building
kube-apiserver takes minutes that `make test` should not spend. `registered_hub` is the dashboard's view
of it: a Hub added with `hubs add`, holding a token of the ServiceAccount `deploy/hub-rbac.yaml` grants
(the least privilege the README tells operators to apply). `empty_hub` deletes every custom object
first, since one hub serves the whole session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from django.core.management import call_command

from conformance.realhub import REPOSITORY, crd_paths
from inventory.models import Hub
from tests.conftest import unavailable
from tests.realhub.hub import RealHub

CRD_TIMEOUT = 60.0
EMPTY_TIMEOUT = 30.0
LIST_WORKERS = 8
# the RBAC operators apply on their hubs, applied as is to the real hub
HUB_RBAC = REPOSITORY / "deploy" / "hub-rbac.yaml"
SERVICE_ACCOUNT = ("fleetui", "fleetui")  # namespace, name, as HUB_RBAC creates it
TOKEN_SECONDS = 24 * 3600
REGISTERED_NAME = "realhub"


def api_client(hub: RealHub) -> kubernetes.client.ApiClient:
    """A client of the hub as its admin (client certificate, group system:masters)."""
    assert hub.credentials is not None
    config = kubernetes.client.Configuration()
    config.host = hub.server
    config.ssl_ca_cert = str(hub.credentials.ca)
    config.cert_file = str(hub.credentials.client_cert)
    config.key_file = str(hub.credentials.client_key)
    return kubernetes.client.ApiClient(config)


def install_crds(client: kubernetes.client.ApiClient, paths: list[Path]) -> list[str]:
    """Create every CRD of `paths` and wait until the hub serves them all; their names."""
    extensions = kubernetes.client.ApiextensionsV1Api(client)
    names = []
    for path in paths:
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CustomResourceDefinition":
                extensions.create_custom_resource_definition(document)
                names.append(document["metadata"]["name"])
    deadline = time.monotonic() + CRD_TIMEOUT
    waiting = set(names)
    while waiting:
        for name in sorted(waiting):
            conditions = extensions.read_custom_resource_definition(name).status.conditions or []
            if any(c.type == "Established" and c.status == "True" for c in conditions):
                waiting.discard(name)
        if waiting and time.monotonic() > deadline:
            raise AssertionError(f"CRDs not established within {CRD_TIMEOUT:g} s: {sorted(waiting)}")
        time.sleep(0.1)
    return names


def require_binaries(hub: RealHub) -> None:
    """The hub's binaries must exist: missing, the test skips locally and fails in CI, where `make
    test-realhub` builds them first."""
    missing = hub.missing_binaries()
    if missing:
        unavailable(f"no {', '.join(missing)} in {hub.bin_dir}: make realhub-bin builds them")


def start_real_hub(workdir: Path) -> Iterator[RealHub]:
    """A real hub with the OCM and KubeFleet CRDs installed, stopped after; `real_hub` in tests/conftest.py
    makes it the session's."""
    hub = RealHub(workdir)
    require_binaries(hub)
    with hub:
        with api_client(hub) as client:
            hub.crds = install_crds(client, crd_paths())
        yield hub


@pytest.fixture
def hub_client(real_hub: RealHub) -> Iterator[kubernetes.client.ApiClient]:
    with api_client(real_hub) as client:
        yield client


def managed_cluster(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "ManagedCluster",
        "metadata": {"name": name, "labels": {"env": "test"}},
        "spec": {"hubAcceptsClient": True, **spec},
    }


@dataclass(frozen=True)
class DashboardCredentials:
    """What an operator hands `hubs add`: the ServiceAccount's token and the hub's CA, as files."""

    token_file: Path
    ca_file: Path


def service_account_token(client: kubernetes.client.ApiClient, namespace: str, name: str) -> str:
    """A bound token of the ServiceAccount (TokenRequest), as `kubectl create token` asks for one."""
    request = kubernetes.client.AuthenticationV1TokenRequest(
        spec=kubernetes.client.V1TokenRequestSpec(audiences=[], expiration_seconds=TOKEN_SECONDS)
    )
    answer = kubernetes.client.CoreV1Api(client).create_namespaced_service_account_token(
        name, namespace, request
    )
    return str(answer.status.token)


@pytest.fixture(scope="session")
def dashboard_credentials(
    real_hub: RealHub, tmp_path_factory: pytest.TempPathFactory
) -> DashboardCredentials:
    """deploy/hub-rbac.yaml applied to the hub, and a token of its ServiceAccount."""
    assert real_hub.credentials is not None
    directory = tmp_path_factory.mktemp("dashboard")
    with api_client(real_hub) as client:
        kubernetes.utils.create_from_yaml(client, yaml_file=str(HUB_RBAC))
        token = service_account_token(client, *SERVICE_ACCOUNT)
    (directory / "token").write_text(token)
    return DashboardCredentials(token_file=directory / "token", ca_file=real_hub.credentials.ca)


def register_hub(real_hub: RealHub, credentials: DashboardCredentials, *options: str) -> Hub:
    """`hubs add` as an operator runs it, with the token and CA files; answers the Hub it stored."""
    call_command(
        "hubs",
        "add",
        REGISTERED_NAME,
        "--server",
        real_hub.server,
        "--token-file",
        str(credentials.token_file),
        "--ca-file",
        str(credentials.ca_file),
        *options,
    )
    return Hub.objects.get(name=REGISTERED_NAME)


@pytest.fixture
def registered_hub(
    db: None, tasks_in_process: None, real_hub: RealHub, dashboard_credentials: DashboardCredentials
) -> Hub:
    """The real hub as the dashboard knows it: serving OCM and KubeFleet kinds, publishing to `default`.
    What a sync or an edit sets off (reschedules, publishing) runs inside the test, also in CI, where a
    broker is configured but no worker runs for these tests."""
    return register_hub(real_hub, dashboard_credentials, "--fleet", "--publish-namespace", "default")


def custom_resources(client: kubernetes.client.ApiClient) -> list[tuple[str, str, str, bool]]:
    """(group, served storage version, plural, namespaced) of every CRD the hub serves."""
    resources = []
    for crd in kubernetes.client.ApiextensionsV1Api(client).list_custom_resource_definition().items:
        version = next(v.name for v in crd.spec.versions if v.storage)
        resources.append((crd.spec.group, version, crd.spec.names.plural, crd.spec.scope == "Namespaced"))
    return resources


def delete_custom_objects(client: kubernetes.client.ApiClient) -> None:
    """Every custom object deleted, and waited for. Finalizers are cleared, since no controller that set
    one runs to remove it, and an object made again meanwhile (a controller still reacting to an earlier
    test's objects) is deleted again."""
    objects = kubernetes.client.CustomObjectsApi(client)
    resources = custom_resources(client)
    # every kind listed at once: after a start or a restart the apiserver builds a CRD's storage and
    # fills its watch cache on the first request for it, about half a second each when asked in turn
    with ThreadPoolExecutor(LIST_WORKERS) as pool:
        listings = list(pool.map(lambda r: objects.list_cluster_custom_object(*r[:3]), resources))
    for (group, version, plural, namespaced), listed in zip(resources, listings, strict=True):
        if not namespaced:
            objects.delete_collection_cluster_custom_object(group, version, plural)
            continue
        for namespace in {item["metadata"]["namespace"] for item in listed["items"]}:
            objects.delete_collection_namespaced_custom_object(group, version, namespace, plural)
    deadline = time.monotonic() + EMPTY_TIMEOUT
    for group, version, plural, namespaced in resources:
        while items := objects.list_cluster_custom_object(group, version, plural)["items"]:
            for item in items:
                metadata = item["metadata"]
                where = (metadata["namespace"],) if namespaced else ()
                name = metadata["name"]
                try:
                    if metadata.get("finalizers"):
                        patch = {"metadata": {"finalizers": None}}
                        if namespaced:
                            patch_item = objects.patch_namespaced_custom_object
                            patch_item(group, version, *where, plural, name, patch)
                        else:
                            objects.patch_cluster_custom_object(group, version, plural, name, patch)
                    if not metadata.get("deletionTimestamp"):
                        if namespaced:
                            objects.delete_namespaced_custom_object(group, version, *where, plural, name)
                        else:
                            objects.delete_cluster_custom_object(group, version, plural, name)
                except kubernetes.client.ApiException as exc:
                    if exc.status not in (404, 409):  # gone meanwhile, or changed: the next round sees it
                        raise
            if time.monotonic() > deadline:
                names = [f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}" for i in items]
                raise AssertionError(f"{plural} still on the hub after {EMPTY_TIMEOUT:g} s: {names}")
            time.sleep(0.1)


@pytest.fixture
def empty_hub(real_hub: RealHub, hub_client: kubernetes.client.ApiClient) -> RealHub:
    """The session's hub with no custom object left by an earlier test."""
    delete_custom_objects(hub_client)
    return real_hub
