"""The dashboard registered on a real hub as the README tells operators to: least privilege, by token."""

from __future__ import annotations

import kubernetes
import pytest

from inventory.hubclient import KINDS, HubClient
from inventory.models import Hub
from tests.realhub.conftest import HUB_RBAC, managed_cluster

pytestmark = pytest.mark.realhub


@pytest.mark.usefixtures("empty_hub")
def test_hubs_add_stores_the_token_and_ca_and_every_kind_can_be_listed(registered_hub: Hub) -> None:
    assert (
        registered_hub.credentials["token"] and "BEGIN CERTIFICATE" in registered_hub.credentials["ca_data"]
    )
    with HubClient(registered_hub) as client:
        for kind in KINDS:
            assert client.list_page(kind).items == [], kind.name


@pytest.mark.usefixtures("empty_hub")
def test_the_token_cannot_do_what_the_role_does_not_grant(
    registered_hub: Hub, hub_client: kubernetes.client.ApiClient
) -> None:
    kubernetes.client.CustomObjectsApi(hub_client).create_cluster_custom_object(
        "cluster.open-cluster-management.io", "v1", "managedclusters", managed_cluster("granted")
    )
    with HubClient(registered_hub) as client:
        assert client.get_cluster("ManagedCluster", "granted")["metadata"]["name"] == "granted"
        # the taint editor may patch a cluster, but nothing in the role lets the dashboard delete one
        with pytest.raises(kubernetes.client.ApiException) as refused:
            client.api.delete_cluster_custom_object(
                "cluster.open-cluster-management.io", "v1", "managedclusters", "granted"
            )
    assert refused.value.status == 403


def test_the_role_file_is_the_one_the_readme_shows() -> None:
    readme = (HUB_RBAC.parents[1] / "README.md").read_text()
    assert HUB_RBAC.read_text() in readme
