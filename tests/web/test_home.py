"""The home page: login required, lists clusters and placements, constant query count."""

import pytest
from django.urls import reverse

from tests.factories import HubFactory, ManagedClusterFactory, PlacementFactory

pytestmark = pytest.mark.django_db


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


def test_home_lists_demo_clusters_and_placements(logged_in_client, demo_fleet) -> None:
    response = logged_in_client.get(reverse("home"))
    html = response.content.decode()
    assert response.status_code == 200
    for cluster in ("prod-use1-a", "aks-eastus-prod-01", "dev-local"):
        assert cluster in html
    assert "web/frontend" in html
    assert "numberOfClusters: 3" in html
    assert "PickN (3)" in html
    assert "MemberCluster" in html
    assert "Unavailable" in html


def test_home_shows_label_chips_and_availability(logged_in_client) -> None:
    ManagedClusterFactory(name="eu-1", labels={"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
    html = logged_in_client.get(reverse("home")).content.decode()
    assert '<span class="chip">a=1</span>' in html
    assert '<span class="more">+1</span>' in html
    assert "e=5" not in html


def test_home_pages_clusters_server_side(logged_in_client) -> None:
    hub = HubFactory()
    for index in range(30):
        ManagedClusterFactory(hub=hub, name=f"page-cluster-{index:02d}")
    first = logged_in_client.get(reverse("home")).content.decode()
    second = logged_in_client.get(reverse("home"), {"clusters_page": 2}).content.decode()
    assert "page-cluster-00" in first and "page-cluster-29" not in first
    assert "page-cluster-29" in second and "page-cluster-00" not in second
    assert "Page 2 of 2" in second


@pytest.mark.parametrize("rows", [1, 60])
def test_home_query_count_does_not_grow_with_rows(
    logged_in_client, django_assert_max_num_queries, rows
) -> None:
    hubs = HubFactory.create_batch(3)
    for index in range(rows):
        ManagedClusterFactory(hub=hubs[index % 3])
        PlacementFactory(hub=hubs[index % 3])
    # session + user + (count + page) for clusters and for placements + the approvals badge
    with django_assert_max_num_queries(7):
        response = logged_in_client.get(reverse("home"))
    assert response.status_code == 200


def test_api_schema_is_served(client) -> None:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
