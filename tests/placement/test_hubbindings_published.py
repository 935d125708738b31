"""What the dashboard writes to a hub is labelled managed-by and not mirrored back: counted once."""

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from inventory import queries
from inventory.models import Hub, ManagedCluster
from inventory.sync import sync_hub
from placement import service
from placement.models import PLACEMENT_LABEL, Owner, Placement, PlacementDecision
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.rollout_hub import MANAGED, create_crp, crp_spec

pytestmark = pytest.mark.django_db
OCM_CLUSTER, FLEET_CLUSTER = ManagedCluster.Kind.MANAGED_CLUSTER, ManagedCluster.Kind.MEMBER_CLUSTER


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    hub = synced_demo_hub_row(demo_hub)
    hub.publish_namespace = "argocd"
    hub.save(update_fields=["publish_namespace"])
    return hub


@pytest.fixture
def editor(hub: Hub) -> User:
    """Admin of the set bound to namespace default (OCM) and of a populated set (the hub's CRPs)."""
    return placement_role(hub, user=placement_role(hub, ("default",), username="editor"))


def test_published_decisions_carry_the_label_and_are_counted_once(
    hub: Hub, demo_hub: DemoHub, editor: User
) -> None:
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=hub,
        namespace="default",
        name="shop",
        spec={"clusterSets": ["global"], "numberOfClusters": 3},
        actor=editor,
    )
    [published] = demo_hub.store.list("PlacementDecision", namespace="argocd").items
    assert published["metadata"]["labels"].items() >= {PLACEMENT_LABEL: "shop", **MANAGED}.items()

    chosen = [entry["clusterName"] for entry in placement.decisions.get().decisions]
    clusters = list(ManagedCluster.objects.filter(hub=hub, kind=OCM_CLUSTER, name__in=chosen))
    before = queries.placement_counts(clusters)

    sync_hub(hub, trigger="command")
    assert not PlacementDecision.objects.filter(hub=hub, owner=Owner.HUB, namespace="argocd").exists()
    assert queries.placement_counts(clusters) == before


def test_own_bindings_are_counted_once(hub: Hub, editor: User) -> None:
    crp = create_crp(hub, editor, {**crp_spec(2), "strategy": {"type": "External"}}, name="batch")
    targets = [row.spec["targetCluster"] for row in crp.bindings.all()]
    members = list(ManagedCluster.objects.filter(hub=hub, kind=FLEET_CLUSTER, name__in=targets))
    before = queries.placement_counts(members)

    sync_hub(hub, trigger="command")
    assert queries.placement_counts(members) == before
