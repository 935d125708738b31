"""Hubs page: state, counts, the latest run polled while running, "Sync now" (staff, CSRF) on a demo hub."""

import pytest
from django.test import Client
from django.urls import reverse

from inventory.models import SyncRun
from tests.factories import (
    DemoHubRowFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    SyncRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def staff_client(client: Client) -> Client:
    """An operator: staff (Sync now) and superuser (every hub, its runs and errors)."""
    client.force_login(UserFactory(username="ops", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def superuser_client(client: Client) -> Client:
    """Sees every hub with its runs and errors, and is not staff: no Sync now."""
    client.force_login(UserFactory(username="root", is_superuser=True))
    return client


def test_hubs_page_requires_login(client) -> None:
    assert client.get(reverse("inventory:hub-list")).status_code == 302


def test_hubs_page_shows_state_counts_and_never_credentials(
    superuser_client, django_assert_max_num_queries
) -> None:
    hubs = [HubFactory(name=f"hub-{index}") for index in range(5)]
    hub = hubs[0]
    hub.set_credentials({"token": "s3cr3t-token"})
    hub.last_sync_error = "401 Unauthorized"
    hub.last_synced_at = hub.created
    hub.save()
    ManagedClusterFactory.create_batch(3, hub=hub)
    ManagedClusterFactory(hub=hub, stale=True)
    ManagedClusterSetFactory(hub=hub)
    SyncRunFactory(hub=hub, state=SyncRun.State.FAILED, error="401 Unauthorized", pages=2, added=4)
    with django_assert_max_num_queries(5):
        response = superuser_client.get(reverse("inventory:hub-list"))
    html = response.content.decode()
    assert "s3cr3t" not in html and hub.encrypted_credentials not in html
    assert "failing" in html and "401 Unauthorized" in html
    assert '?hub=hub-0">4</a>' in html and "1 stale" in html
    assert "2 pages, +4 ~0 −0" in html
    assert "Sync now" not in html  # not staff
    assert 'hx-trigger="every' not in html  # nothing running: no polling


def test_running_sync_row_polls_itself(superuser_client) -> None:
    run = SyncRunFactory(state=SyncRun.State.RUNNING, pages=3)
    html = superuser_client.get(reverse("inventory:hub-row", args=[run.hub.pk]), **HTMX).content.decode()
    assert html.startswith("<tr") or html.lstrip().startswith("<tr")
    assert f'hx-get="/hubs/{run.hub.pk}/row/"' in html and 'hx-trigger="every 1s"' in html
    assert "running" in html and "3 pages" in html


def test_sync_now_needs_staff(logged_in_client) -> None:
    hub = HubFactory()
    response = logged_in_client.post(reverse("inventory:hub-sync", args=[hub.pk]))
    assert response.status_code == 403
    assert not SyncRun.objects.exists()


def test_sync_now_needs_csrf(password) -> None:
    hub = HubFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="ops", is_staff=True))
    assert client.post(reverse("inventory:hub-sync", args=[hub.pk])).status_code == 403
    assert not SyncRun.objects.exists()


def test_sync_now_runs_in_process_against_the_demo_hub(
    staff_client, demo_hub, tasks_in_process, caplog
) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    page = staff_client.get(reverse("inventory:hub-list")).content.decode()
    assert "Sync now" in page and "csrfmiddlewaretoken" in page
    with caplog.at_level("INFO"):
        response = staff_client.post(reverse("inventory:hub-sync", args=[hub.pk]), **HTMX)
    html = response.content.decode()
    run = SyncRun.objects.get(hub=hub)
    assert run.state == SyncRun.State.SUCCEEDED and run.trigger == SyncRun.Trigger.MANUAL
    assert run.added >= 24
    assert "succeeded" in html and f"+{run.added}" in html
    assert "ok" in html
    assert "sync requested by ops" in caplog.text


def test_sync_now_without_htmx_redirects_to_hubs(staff_client, demo_hub, tasks_in_process) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    response = staff_client.post(reverse("inventory:hub-sync", args=[hub.pk]))
    assert response.status_code == 302 and response.url == reverse("inventory:hub-list")
    assert SyncRun.objects.filter(hub=hub, state=SyncRun.State.SUCCEEDED).count() == 1
