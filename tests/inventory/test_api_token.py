"""Scripts reach the API with a DRF token instead of a session."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_token_authenticates_api_requests() -> None:
    token = Token.objects.create(user=UserFactory())
    client = APIClient()
    assert client.get("/api/clusters/").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/clusters/").status_code == 200


def test_a_wrong_token_is_refused() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    assert client.get("/api/clusters/").status_code == 401
