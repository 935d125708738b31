"""The home page: login required; on the demo fleet its overview counts what the lists filtered by its links
show, and nothing the user's roles hide (tests/test_home_overview.py covers each card)."""

import pytest
from django.urls import reverse

from inventory.models import ClusterSetRole, Hub
from tests.factories import placement_role
from tests.test_home_overview import listed_count

pytestmark = pytest.mark.django_db

VIEW = ClusterSetRole.Role.VIEW


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


def test_home_overview_of_the_demo_fleet_agrees_with_the_lists(logged_in_client, user, demo_fleet) -> None:
    # reads the sets bound to the demo namespaces: prod-us, prod-eu, staging (web), global (ml, platform)
    placement_role(demo_hub(), ("web", "ml", "platform"), role=VIEW, user=user)
    response = logged_in_client.get(reverse("home"))
    assert response.status_code == 200
    cards = {card.key: card for card in response.context["overview"].cards}
    unavailable = cards["unavailable-clusters"]
    assert unavailable.count and all(item.url.startswith("/clusters/") for item in unavailable.items)
    for card in cards.values():
        assert listed_count(logged_in_client, card.url) == card.count, card.key
    # the Fleet MemberClusters have no OCM namesake in a set: superusers only (inventory.roles)
    assert "aks-eastus-prod-01" not in response.content.decode()


def test_home_shows_nothing_the_roles_do_not_show(logged_in_client, user, demo_fleet) -> None:
    html = logged_in_client.get(reverse("home")).content.decode()
    assert "Your roles show no hub yet" in html
    assert "prod-use1-a" not in html and "web/frontend" not in html


def test_api_schema_is_served(client) -> None:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content
