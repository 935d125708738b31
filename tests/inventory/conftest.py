"""The demo hub as a real peer (served over HTTP on an ephemeral port, reached with the real client), the
cluster set with its one admin that the roles tests start from, and what the editors' tests start from."""

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from kubernetes.client import ApiClient, Configuration, CustomObjectsApi

from inventory.demohub import DemoHub
from inventory.models import ClusterSetRole, Hub, ManagedClusterSet
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    UserFactory,
    synced_demo_hub_row,
)


@pytest.fixture
def api_client(demo_hub: DemoHub) -> Iterator[ApiClient]:
    configuration = Configuration(host=demo_hub.url)
    configuration.api_key = {"authorization": "any-token-will-do"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    with ApiClient(configuration) as client:
        yield client


@pytest.fixture
def custom_objects(api_client: ApiClient) -> CustomObjectsApi:
    return CustomObjectsApi(api_client)


@pytest.fixture
def prod(db: None) -> ManagedClusterSet:
    """Cluster set prod on hub east."""
    return ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")


@pytest.fixture
def owner_row(prod: ManagedClusterSet) -> ClusterSetRole:
    """User "owner", the only admin of prod."""
    return ClusterSetRoleFactory(
        cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=UserFactory(username="owner")
    )


@pytest.fixture
def synced_hub(demo_hub: DemoHub) -> Hub:
    """Hub "demo": the running demo hub, synced once."""
    return synced_demo_hub_row(demo_hub)


@pytest.fixture
def staging(synced_hub: Hub) -> ManagedClusterSet:
    """The demo hub's set staging (bound to one namespace)."""
    return ManagedClusterSet.objects.get(hub=synced_hub, name="staging")


@pytest.fixture
def root(db: None) -> User:
    """A superuser: sees everything and may edit taints and bindings."""
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def root_client(client: Client, root: User) -> Client:
    client.force_login(root)
    return client
