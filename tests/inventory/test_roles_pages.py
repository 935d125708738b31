"""What the inventory pages show a user with roles: only their sets, the clusters of those sets, and the
placements those sets serve; anything else is a 404, exactly like an object that does not exist."""

import pytest
from django.test import Client
from django.urls import reverse

from inventory.models import ClusterSetRole, ManagedCluster
from tests.factories import (
    ClusterResourceBindingFactory,
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    GroupFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    PlacementDecisionFactory,
    UserFactory,
)
from tests.pages import shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet() -> dict[str, object]:
    """prod = {shared, p1} bound to team-a, dev = {shared, d1} bound to team-b; member "p1" is Fleet's."""
    hub = HubFactory(name="east", serves_fleet=True)
    prod, dev = ManagedClusterSetFactory(hub=hub, name="prod"), ManagedClusterSetFactory(hub=hub, name="dev")
    clusters = {name: ManagedClusterFactory(hub=hub, name=name) for name in ("shared", "p1", "d1")}
    for cluster_set, names in ((prod, ("shared", "p1")), (dev, ("shared", "d1"))):
        for name in names:
            ClusterSetMembershipFactory(cluster_set=cluster_set, cluster=clusters[name])
    member = ManagedClusterFactory(hub=hub, name="p1", kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-a", name="prod")
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-b", name="dev")
    PlacementDecisionFactory(
        placement__hub=hub, placement__namespace="team-a", placement__name="web", clusters=["shared"]
    )
    PlacementDecisionFactory(
        placement__hub=hub, placement__namespace="team-b", placement__name="etl", clusters=["shared"]
    )
    ClusterResourceBindingFactory(placement__hub=hub, placement__name="crp", target="p1")
    return {"hub": hub, "prod": prod, "dev": dev, "member": member, **clusters}


@pytest.fixture
def viewer(fleet) -> Client:
    """A member of group "team-a", which may view prod."""
    user = UserFactory(username="viewer")
    group = GroupFactory(name="team-a")
    user.groups.add(group)
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=ClusterSetRole.Role.VIEW, user=None, group=group)
    client = Client()
    client.force_login(user)
    return client


def listed(client: Client, url: str) -> set[str]:
    return {row.name for row in shown(client.get(url, {"per_page": 500}))}


def test_lists_show_only_what_the_roles_cover(fleet, viewer) -> None:
    assert listed(viewer, reverse("inventory:cluster-list")) == {"shared", "p1"}  # p1 twice: OCM and Fleet
    clusters = shown(viewer.get(reverse("inventory:cluster-list"), {"per_page": 500}))
    assert sorted(c.kind for c in clusters if c.name == "p1") == ["ManagedCluster", "MemberCluster"]
    assert listed(viewer, reverse("inventory:clusterset-list")) == {"prod"}


def test_a_stranger_sees_empty_lists(fleet) -> None:
    client = Client()
    client.force_login(UserFactory(username="stranger"))
    assert listed(client, reverse("inventory:cluster-list")) == set()
    assert listed(client, reverse("inventory:clusterset-list")) == set()


def test_hidden_sets_and_clusters_are_404(fleet, viewer) -> None:
    assert viewer.get(reverse("inventory:clusterset-detail", args=[fleet["dev"].pk])).status_code == 404
    assert viewer.get(reverse("inventory:cluster-detail", args=[fleet["d1"].pk])).status_code == 404
    assert viewer.get(reverse("inventory:clusterset-detail", args=[fleet["prod"].pk])).status_code == 200
    assert viewer.get(reverse("inventory:cluster-detail", args=[fleet["member"].pk])).status_code == 200


def test_a_cluster_page_names_only_visible_sets_and_placements(fleet, viewer) -> None:
    response = viewer.get(reverse("inventory:cluster-detail", args=[fleet["shared"].pk]))
    html = response.content.decode()
    assert [m.cluster_set.name for m in response.context["cluster"].memberships.all()] == ["prod"]
    assert [str(p) for p in response.context["placements"]] == ["team-a/web"]
    assert "team-b/etl" not in html and ">dev</a>" not in html
    # the table's set chips too
    table = viewer.get(reverse("inventory:cluster-list"), {"name": "shared"})
    assert [m.cluster_set.name for m in shown(table)[0].memberships.all()] == ["prod"]


def test_a_fleet_member_page_shows_the_crp_of_its_hub(fleet, viewer) -> None:
    response = viewer.get(reverse("inventory:cluster-detail", args=[fleet["member"].pk]))
    assert [str(p) for p in response.context["placements"]] == ["crp"]
