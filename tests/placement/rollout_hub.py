"""The demo hub playing a KubeFleet hub (simulated apply on a frozen clock), for the rolling-update tests."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from demohub import DemoHub
from demohub.fleetsim import APPLY_FAILS_LABEL
from demohub.store import Clock
from inventory.models import Hub
from placement import service
from placement.hubbindings import MANAGED_BY, MANAGED_BY_LABEL
from placement.models import CRP_LABEL, Owner, Placement
from tests.factories import (
    ClusterResourceBindingFactory,
    HubFactory,
    PlacementFactory,
    placement_role,
    synced_demo_hub_row,
)

APPLY_SECONDS, AVAILABLE_SECONDS = 2.0, 3.0
BINDING = "ClusterResourceBinding"


def fleet_demo_hub(**options: Any) -> DemoHub:
    """The demo hub in Fleet mode playing the hub's controllers (simulated apply among them)."""
    defaults: dict[str, Any] = {"clusters": 24, "fleet": True, "seed": 7, "bookmark_seconds": 0.2}
    return DemoHub(**defaults, controllers=True, **options)


@pytest.fixture
def fleet_sim() -> Iterator[DemoHub]:
    """Controllers step only when a test calls reconcile(); the clock moves only with advance()."""
    clock = Clock.frozen(timezone.now().replace(microsecond=0))
    options = {"apply_seconds": APPLY_SECONDS, "available_seconds": AVAILABLE_SECONDS}
    with fleet_demo_hub(controller_seconds=0, clock=clock, **options) as hub:
        yield hub


@pytest.fixture
def live_hub() -> Iterator[DemoHub]:
    """Controllers in the background on the real clock, applying quickly enough to watch."""
    with fleet_demo_hub(controller_seconds=0.1, apply_seconds=0.3, available_seconds=0.3) as hub:
        yield hub


@pytest.fixture
def fleet_hub(fleet_sim: DemoHub) -> Hub:
    return synced_demo_hub_row(fleet_sim)


@pytest.fixture(name="editor")
def fleet_editor(fleet_hub: Hub) -> User:
    """Admin of a populated set of the Fleet hub: may create its CRPs and roll them out."""
    return placement_role(fleet_hub, username="editor")


def crp_spec(count: int = 4, **rolling_update: Any) -> dict[str, Any]:
    return {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
        "policy": {"placementType": "PickN", "numberOfClusters": count},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling_update},
    }


def create_crp(hub: Hub, actor: User, spec: dict[str, Any], name: str = "web") -> Placement:
    """A dashboard-owned CRP; scheduling it runs its first round in-process (the tests' tasks)."""
    return service.create_placement(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        hub=hub,
        namespace="",
        name=name,
        spec=spec,
        actor=actor,
    )


def settle(sim: DemoHub) -> None:
    """Let every bound binding finish applying and become available."""
    sim.reconcile()
    sim.advance(APPLY_SECONDS + AVAILABLE_SECONDS)
    sim.reconcile()


def hub_bindings(sim: DemoHub, crp: Placement) -> dict[str, dict[str, Any]]:
    """The CRP's binding objects in the hub's store, by target cluster."""
    objects = sim.store.list(BINDING).items
    return {
        obj["spec"]["targetCluster"]: obj
        for obj in objects
        if (obj["metadata"].get("labels") or {}).get(CRP_LABEL) == crp.name
    }


def snapshots(sim: DemoHub, crp: Placement) -> dict[str, str]:
    """Each cluster's resource snapshot on the hub."""
    return {
        cluster: obj["spec"].get("resourceSnapshotName", "")
        for cluster, obj in hub_bindings(sim, crp).items()
    }


def own_rows(crp: Placement) -> dict[str, Any]:
    return {row.spec["targetCluster"]: row for row in crp.bindings.filter(owner=Owner.DASHBOARD)}


def make_apply_fail(sim: DemoHub, cluster: str) -> None:
    """The demo hub fails every later apply on this member cluster."""
    sim.store.patch("MemberCluster", cluster, {"metadata": {"labels": {APPLY_FAILS_LABEL: "true"}}})


MANAGED = {MANAGED_BY_LABEL: MANAGED_BY}


# --- without a hub: rows only (pages and API) ---------------------------------------------------------

SPEC = {
    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
    "policy": {"placementType": "PickN", "numberOfClusters": 3},
    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
}
AVAILABLE = {
    "conditions": [
        {"type": "Applied", "status": "True", "reason": "AllWorkHaveBeenApplied"},
        {"type": "Available", "status": "True", "reason": "AllWorkAreAvailable"},
    ]
}


def offline_crp(
    owner: str = Owner.DASHBOARD,
    spec: dict[str, Any] | None = None,
    hub: Hub | None = None,
    name: str = "web",
) -> Placement:
    """A CRP with three bindings; its hub serves no Fleet API, so rounds plan on the rows alone."""
    placement = PlacementFactory(
        hub=hub or HubFactory(name="offline", serves_fleet=False),
        owner=owner,
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        name=name,
        spec=spec or SPEC,
    )
    for target in ("m1", "m2", "m3"):
        ClusterResourceBindingFactory(
            placement=placement, owner=owner, target=target, state="Scheduled", labels={CRP_LABEL: name}
        )
    return placement
