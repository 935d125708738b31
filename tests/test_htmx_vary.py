"""A page that answers htmx with a fragment and a plain request with the whole page says so in `Vary`, so a
cache never serves one for the other; an htmx history restore gets the whole page."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.factories import ManagedClusterFactory, PlacementFactory, UserFactory
from tests.placement_pages.access_support import grant
from tests.placement_pages.explanations import ocm_explanation_for

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
HISTORY_RESTORE = {**HTMX, "HX-History-Restore-Request": "true"}


@pytest.fixture
def superuser_client(client: Client) -> Client:
    client.force_login(UserFactory(username="root", is_superuser=True))
    return client


def vary(response) -> set[str]:
    return {header.strip() for header in response.get("Vary", "").split(",")}


def template(response) -> str:
    return response.templates[0].name


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "inventory/cluster_list.html"),
        (HTMX, "inventory/_cluster_table.html"),
        (HISTORY_RESTORE, "inventory/cluster_list.html"),
    ],
)
def test_a_list_page_varies_on_htmx(superuser_client: Client, headers: dict, expected: str) -> None:
    ManagedClusterFactory(name="c-1")
    response = superuser_client.get(reverse("inventory:cluster-list"), headers=headers)
    assert response.status_code == 200
    assert template(response) == expected
    assert {"HX-Request", "HX-History-Restore-Request"} <= vary(response)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "placement/placement_detail.html"),
        (HTMX, "placement/_score_table.html"),
        (HISTORY_RESTORE, "placement/placement_detail.html"),
    ],
)
def test_a_detail_page_that_swaps_a_fragment_varies_on_htmx(
    logged_in_client: Client, user: User, headers: dict, expected: str
) -> None:
    placement = PlacementFactory(explanation=ocm_explanation_for(4))
    grant(user, placement)
    url = reverse("placement:placement-scores", args=[placement.pk])
    response = logged_in_client.get(url, headers=headers)
    assert response.status_code == 200
    assert template(response) == expected
    assert {"HX-Request", "HX-History-Restore-Request"} <= vary(response)
