"""A broker that is down is an answer, not a crash: "Sync now" on the page (plain form and htmx) and in
the API answers 503 with "task queue unavailable, try again", and works again once the broker is back.

The broker is a redis-server of this test alone, killed and started again on the same port; the shared
Redis of the test run is never touched. The site's Celery app is pointed at it for the test.
"""

from collections.abc import Iterator

import pytest
from celery import Celery
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from fleetui.celery import app as site_app
from inventory.models import Hub, SyncRun
from tests.factories import HubFactory, UserFactory
from tests.servers import RedisServer

pytestmark = pytest.mark.django_db

PAGE_MESSAGE = "Task queue unavailable, try again."


@pytest.fixture
def broker(own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[RedisServer]:
    """This test's redis-server, and the site's tasks queued on it (not run in-process)."""
    server = own_redis
    server.start()
    # Celery reads CELERY_BROKER_URL from the environment before its configuration
    monkeypatch.setenv("CELERY_BROKER_URL", server.url)
    app = Celery("fleetui", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(task_always_eager=False, task_eager_propagates=False)
    # shared tasks resolve to the current app: every .delay() of the site now publishes to this broker
    app.set_current()
    try:
        yield server
    finally:
        site_app.set_current()
        app.close()


@pytest.fixture
def hub() -> Hub:
    return HubFactory(name="east")


@pytest.fixture
def staff(client: Client) -> Client:
    client.force_login(UserFactory(username="operator", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def staff_api() -> APIClient:
    api = APIClient()
    api.force_authenticate(UserFactory(username="operator-api", is_staff=True, is_superuser=True))
    return api


def test_sync_now_on_the_page_answers_503_with_a_message_while_the_broker_is_down(
    broker: RedisServer, hub: Hub, staff: Client
) -> None:
    hubs = reverse("inventory:hub-list")
    url = reverse("inventory:hub-sync", args=[hub.pk])
    broker.stop()

    page = staff.post(url, HTTP_REFERER=f"http://testserver{hubs}")

    assert page.status_code == 503
    assert PAGE_MESSAGE in page.content.decode()
    assert f'href="http://testserver{hubs}"' in page.content.decode()  # back to where the action was

    fragment = staff.post(url, headers={"HX-Request": "true"})

    assert fragment.status_code == 503
    # htmx swaps it into the page's notices, leaving the hub's row as it was
    assert fragment["HX-Retarget"] == "#notices" and fragment["HX-Reswap"] == "innerHTML"
    assert PAGE_MESSAGE in fragment.content.decode()
    assert 'id="notices"' in staff.get(hubs).content.decode()

    broker.start()

    assert staff.post(url).status_code == 302
    assert staff.post(url, headers={"HX-Request": "true"}).status_code == 200
    assert broker.queued() == 2
    assert not SyncRun.objects.exists()  # queued for a worker, not run here


def test_sync_now_in_the_api_answers_503_while_the_broker_is_down(
    broker: RedisServer, hub: Hub, staff_api: APIClient
) -> None:
    url = f"/api/hubs/{hub.pk}/sync/"
    broker.stop()

    response = staff_api.post(url)

    assert response.status_code == 503
    assert response.json() == {"detail": "task queue unavailable, try again"}

    broker.start()

    response = staff_api.post(url)
    assert response.status_code == 202 and response.json()["status"] == "accepted"
    assert broker.queued() == 1
