"""/healthz: the liveness probe docker compose and `make up` wait on; no login, no data."""

import pytest
from django.test import Client


@pytest.mark.django_db
def test_healthz_answers_without_login(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_healthz_changes_nothing_and_refuses_post(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
