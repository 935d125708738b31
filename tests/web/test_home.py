"""The home page: login required, lists the clusters and placements the user's roles show, constant query
count."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from inventory.models import ClusterSetRole, Hub, ManagedCluster
from tests.factories import (
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    PlacementFactory,
    UserFactory,
    placement_role,
)

pytestmark = pytest.mark.django_db

VIEW = ClusterSetRole.Role.VIEW


def viewer_of(user: User, hub: Hub, clusters: list[ManagedCluster], namespace: str = "") -> None:
    """`user` views a new set of `hub` holding `clusters`, bound to `namespace` when one is given."""
    team = ManagedClusterSetFactory(hub=hub, name="team")
    for cluster in clusters:
        ClusterSetMembershipFactory(cluster=cluster, cluster_set=team)
    if namespace:
        ManagedClusterSetBindingFactory(hub=hub, namespace=namespace, name="team")
    ClusterSetRoleFactory(cluster_set=team, user=user, role=VIEW)


def demo_hub() -> Hub:
    return Hub.objects.get(name="manifests")


def test_home_requires_login(client) -> None:
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next=/"


def test_login_page_renders(client) -> None:
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'name="username"' in response.content


def test_login_then_home(client, user, password) -> None:
    response = client.post(reverse("login"), {"username": user.username, "password": password}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("home")
    assert b"Log out" in response.content


def test_home_lists_demo_clusters_and_placements(logged_in_client, user, demo_fleet) -> None:
    # reads the sets bound to the demo namespaces: prod-us, prod-eu, staging (web), global (ml, platform)
    placement_role(demo_hub(), ("web", "ml", "platform"), role=VIEW, user=user)
    response = logged_in_client.get(reverse("home"))
    html = response.content.decode()
    assert response.status_code == 200
    for cluster in ("prod-use1-a", "dev-local", "edge-store-042"):
        assert cluster in html
    assert "web/frontend" in html
    assert "numberOfClusters: 3" in html
    assert "PickN (3)" in html
    assert "Unavailable" in html
    # the Fleet MemberClusters have no OCM namesake in a set: superusers only (inventory.roles)
    assert "aks-eastus-prod-01" not in html
    assert "MemberCluster" not in html


def test_home_lists_fleet_member_clusters_to_a_superuser(client, demo_fleet) -> None:
    client.force_login(UserFactory(username="root", is_superuser=True))
    html = client.get(reverse("home")).content.decode()
    for cluster in ("prod-use1-a", "aks-eastus-prod-01", "dev-local"):
        assert cluster in html
    assert "MemberCluster" in html
    assert "aks-northeurope-prod-01" in html
    assert "web/frontend" in html and "PickN (3)" in html


def test_home_lists_only_what_the_roles_show(logged_in_client, user, demo_fleet) -> None:
    html = logged_in_client.get(reverse("home")).content.decode()
    assert "No clusters yet." in html and "No placements yet." in html
    assert "prod-use1-a" not in html and "web/frontend" not in html

    placement_role(demo_hub(), ("web",), role=VIEW, user=user)  # prod-us, prod-eu, staging
    html = logged_in_client.get(reverse("home")).content.decode()
    for cluster in ("prod-use1-a", "prod-euc1-b", "stage-euw1"):
        assert cluster in html
    for cluster in ("dev-local", "edge-store-042", "prod-apse1-a", "aks-eastus-prod-01"):
        assert cluster not in html
    # OCM Placements of namespace web; the hub's CRPs through its populated sets
    assert "web/frontend" in html and "web-app" in html and "cluster-baseline" in html
    assert "ml/gpu-inference" not in html and "platform/monitoring-agents" not in html


def test_home_shows_label_chips_and_availability(logged_in_client, user) -> None:
    cluster = ManagedClusterFactory(name="eu-1", labels={"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
    viewer_of(user, cluster.hub, [cluster])
    html = logged_in_client.get(reverse("home")).content.decode()
    assert '<span class="chip">a=1</span>' in html
    assert '<span class="more">+1</span>' in html
    assert "e=5" not in html


def test_home_pages_clusters_server_side(logged_in_client, user) -> None:
    hub = HubFactory()
    clusters = [ManagedClusterFactory(hub=hub, name=f"page-cluster-{index:02d}") for index in range(30)]
    viewer_of(user, hub, clusters)
    first = logged_in_client.get(reverse("home")).content.decode()
    second = logged_in_client.get(reverse("home"), {"clusters_page": 2}).content.decode()
    assert "page-cluster-00" in first and "page-cluster-29" not in first
    assert "page-cluster-29" in second and "page-cluster-00" not in second
    assert "Page 2 of 2" in second


@pytest.mark.parametrize("rows", [1, 60])
def test_home_query_count_does_not_grow_with_rows(
    logged_in_client, user, django_assert_max_num_queries, rows
) -> None:
    hubs = HubFactory.create_batch(3)
    clusters: dict[Hub, list[ManagedCluster]] = {hub: [] for hub in hubs}
    for index in range(rows):
        clusters[hubs[index % 3]].append(ManagedClusterFactory(hub=hubs[index % 3]))
        PlacementFactory(hub=hubs[index % 3], namespace="default")
    for hub in hubs:  # the user sees every row: the role checks are part of the counted queries
        viewer_of(user, hub, clusters[hub], namespace="default")
    # session + user + (count + page) for clusters and for placements + the approvals badge
    with django_assert_max_num_queries(7):
        response = logged_in_client.get(reverse("home"))
    assert response.status_code == 200
    assert response.context["clusters"].paginator.count == rows
    assert response.context["placements"].paginator.count == rows


def test_api_schema_is_served(client) -> None:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
