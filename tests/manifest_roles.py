"""Fixtures of the form and message tests: the shipped demo manifests in hub "manifests", and "ops", a
signed-in user holding the placement roles of its namespaces web and ml."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inventory.models import Hub
from placement import service
from tests.factories import placement_role


@pytest.fixture(name="manifests")
def manifests_fixture(demo_fleet: None, tasks_in_process: None) -> Hub:
    service.forget_snapshots()
    return Hub.objects.get(name="manifests")


@pytest.fixture(name="ops")
def ops_fixture(client: Client, manifests: Hub) -> User:
    user = placement_role(manifests, user=placement_role(manifests, ("web", "ml"), username="ops"))
    client.force_login(user)
    return user
