"""The demo hub as a real peer: served over HTTP on an ephemeral port, reached with the real client."""

from collections.abc import Iterator

import pytest
from kubernetes.client import ApiClient, Configuration, CustomObjectsApi

from inventory.demohub import DemoHub


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
