"""Fixtures of the placement service tests: the demo fleet and a dashboard-owned placement on it."""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.models import Hub
from placement import service
from placement.models import Placement
from tests.factories import placement_role

# The demo MemberClusters' heartbeats are from just before this moment (README).
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

WEB_SPEC: dict[str, Any] = {
    "clusterSets": ["prod-us", "prod-eu"],
    "numberOfClusters": 2,
    "prioritizerPolicy": {
        "mode": "Additive",
        "configurations": [
            {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "ResourceAllocatableMemory"}, "weight": 2}
        ],
    },
}


@pytest.fixture(autouse=True)
def in_process_tasks(tasks_in_process: None) -> None:
    """Tasks run in the test, as without a broker (the worker tests switch this off)."""


@pytest.fixture(autouse=True)
def fresh_snapshots() -> Iterator[None]:
    """Snapshots are cached per process; each test builds its own rows."""
    service.forget_snapshots()
    yield
    service.forget_snapshots()


@pytest.fixture
def manifests_hub(demo_fleet: None) -> Hub:
    return Hub.objects.get(name="manifests")


@pytest.fixture
def editor(manifests_hub: Hub) -> User:
    """Admin of the sets bound to namespace web (OCM) and of a populated set (the hub's Fleet CRPs)."""
    return placement_role(manifests_hub, user=placement_role(manifests_hub, ("web",), username="editor"))


@pytest.fixture
def web_placement(manifests_hub: Hub, editor: User) -> Placement:
    return service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=manifests_hub,
        namespace="web",
        name="shop",
        spec=WEB_SPEC,
        actor=editor,
    )
