"""The API root lists the endpoints of every app."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_api_root_links_inventory_and_placement_endpoints() -> None:
    client = APIClient()
    assert client.get("/api/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=UserFactory()).key}")
    links = client.get("/api/").json()
    assert links["clusters"].endswith("/api/clusters/")
    assert links["placements"].endswith("/api/placements/")
    assert client.get(links["placements"]).status_code == 200
