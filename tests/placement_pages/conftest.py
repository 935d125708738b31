"""The demo fleet's hub manifests and user ops, who administers the placements the tests make there."""

import pytest
from django.contrib.auth.models import User

from inventory.models import Hub
from tests.factories import placement_role


@pytest.fixture
def manifests(demo_fleet: None) -> Hub:
    """Hub manifests of the demo fleet (`load_demo`): sets bound to namespaces web, ml and platform."""
    return Hub.objects.get(name="manifests")


@pytest.fixture
def ops(manifests: Hub) -> User:
    """User ops, admin of the sets bound to namespaces web and ml of hub manifests (its OCM Placements
    there) and of a populated set of the hub (its Fleet CRPs): may add and change those placements."""
    return placement_role(manifests, user=placement_role(manifests, ("web", "ml"), username="ops"))
