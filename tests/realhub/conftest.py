"""The `real_hub` fixture: etcd and kube-apiserver built from the upstream modules, with the upstream CRDs.

The binaries come from `make realhub-bin`; without them the tests marked `realhub` skip, since building
kube-apiserver takes minutes that `make test` should not spend.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml

from conformance.realhub import crd_paths
from tests.conftest import unavailable
from tests.realhub.hub import RealHub

CRD_TIMEOUT = 60.0


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


@pytest.fixture(scope="session")
def real_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHub]:
    """One real hub for the session (each xdist worker its own), the OCM and KubeFleet CRDs installed."""
    hub = RealHub(tmp_path_factory.mktemp("realhub"))
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
