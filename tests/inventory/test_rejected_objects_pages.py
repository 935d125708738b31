"""The rejected hub objects page: superusers read each object with its reason (hostile text shown as
text), filtered by hub; others see none; the hub list links a run's rejected count to it."""

import pytest
from django.test import Client

from inventory import rejections
from inventory.models import SyncRun
from tests.factories import HubFactory, SyncRunFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/rejected/"


@pytest.fixture
def run() -> SyncRun:
    east, west = HubFactory(name="east"), HubFactory(name="west")
    run = SyncRunFactory(hub=east, state=SyncRun.State.SUCCEEDED, rejected=1)
    hostile = rejections.Rejection(
        "ManagedCluster", "", "<b>bold</b>", 'metadata.name: invalid value "<b>bold</b>"'
    )
    rejections.record(east, "ManagedCluster", [hostile], run)
    rejections.record(west, "ManagedClusterSet", [rejections.Rejection("ManagedClusterSet", "", "x", "why")])
    return run


def logged_in(client: Client, **fields: object) -> Client:
    client.force_login(UserFactory(**fields))
    return client


def test_superusers_read_them_by_hub(client: Client, run: SyncRun) -> None:
    page = logged_in(client, username="root", is_superuser=True).get(URL, {"hub": "east"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="result-count">1<' in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert "metadata.name: invalid value" in html


def test_others_see_none(client: Client, run: SyncRun) -> None:
    page = logged_in(client, username="ops", is_staff=True).get(URL)
    assert page.status_code == 200
    assert "No rejected objects." in page.content.decode()


def test_the_hub_list_links_the_count(client: Client, run: SyncRun) -> None:
    html = logged_in(client, username="root", is_superuser=True).get("/hubs/").content.decode()
    assert f'href="{URL}?hub=east">1 rejected</a>' in html
