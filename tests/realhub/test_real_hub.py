"""The real hub itself: ready behind TLS, RBAC on, the upstream CRDs served and enforced, and gone after."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes
import pytest

from tests.realhub.conftest import managed_cluster, require_binaries
from tests.realhub.hub import RealHub, process_exists

pytestmark = pytest.mark.realhub

OCM_CLUSTER = ("cluster.open-cluster-management.io", "v1", "managedclusters")


def test_the_hub_is_ready_and_reports_its_release(real_hub: RealHub) -> None:
    assert real_hub.get("/readyz") == (200, "ok")
    status, body = real_hub.get("/version")
    assert status == 200
    assert json.loads(body)["gitVersion"] == "v1.34.1"


def test_an_unknown_client_is_anonymous_and_rbac_refuses_it(real_hub: RealHub) -> None:
    assert real_hub.credentials is not None
    anonymous = kubernetes.client.Configuration()
    anonymous.host = real_hub.server
    anonymous.ssl_ca_cert = str(real_hub.credentials.ca)
    with (
        kubernetes.client.ApiClient(anonymous) as client,
        pytest.raises(kubernetes.client.ApiException) as refused,
    ):
        kubernetes.client.CustomObjectsApi(client).list_cluster_custom_object(*OCM_CLUSTER)
    assert refused.value.status == 403


def test_the_ocm_and_kubefleet_crds_are_served(real_hub: RealHub) -> None:
    for name in (
        "managedclusters.cluster.open-cluster-management.io",
        "placementdecisions.cluster.open-cluster-management.io",
        "addonplacementscores.cluster.open-cluster-management.io",
        "clusterresourceplacements.placement.kubernetes-fleet.io",
        "clusterapprovalrequests.placement.kubernetes-fleet.io",
    ):
        assert name in real_hub.crds


@pytest.mark.usefixtures("empty_hub")
def test_a_managed_cluster_is_created_and_its_schema_enforced(
    hub_client: kubernetes.client.ApiClient,
) -> None:
    objects = kubernetes.client.CustomObjectsApi(hub_client)
    created = objects.create_cluster_custom_object(*OCM_CLUSTER, managed_cluster("cluster-a"))
    assert created["metadata"]["resourceVersion"]
    listed = objects.list_cluster_custom_object(*OCM_CLUSTER, label_selector="env=test")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["cluster-a"]
    # the CRD's schema admits what the demo hub would have taken
    with pytest.raises(kubernetes.client.ApiException) as refused:
        objects.create_cluster_custom_object(
            *OCM_CLUSTER, managed_cluster("cluster-b", hubAcceptsClient="yes")
        )
    assert refused.value.status == 422


def test_stopping_leaves_no_process(tmp_path: Path) -> None:
    hub = RealHub(tmp_path)
    require_binaries(hub)
    with hub:
        pids = hub.pids()
        assert len(pids) == 2 and all(process_exists(pid) for pid in pids)
    assert not any(process_exists(pid) for pid in pids)


def test_compacting_makes_older_resource_versions_gone(
    real_hub: RealHub, hub_client: kubernetes.client.ApiClient
) -> None:
    objects = kubernetes.client.CustomObjectsApi(hub_client)
    objects.create_cluster_custom_object(*OCM_CLUSTER, managed_cluster("before-compaction"))
    since = objects.list_cluster_custom_object(*OCM_CLUSTER)["metadata"]["resourceVersion"]
    objects.create_cluster_custom_object(*OCM_CLUSTER, managed_cluster("after-compaction"))

    assert real_hub.compact() > int(since)

    with pytest.raises(kubernetes.client.ApiException) as gone:
        list(
            kubernetes.watch.Watch().stream(
                objects.list_cluster_custom_object, *OCM_CLUSTER, resource_version=since, timeout_seconds=1
            )
        )
    assert gone.value.status == 410
