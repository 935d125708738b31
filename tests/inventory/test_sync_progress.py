"""A sync records its progress as it goes (kinds done of kinds total, objects so far), and the hub page
shows it with a progress bar that polls while the sync runs and stops once it is done."""

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import Hub, SyncRun
from inventory.sync import sync_hub
from tests.factories import DemoHubRowFactory, SyncRunFactory, UserFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def hub(demo_hub: DemoHub) -> Hub:
    return DemoHubRowFactory(name="demo", server_url=demo_hub.url)


@pytest.fixture
def staff(client: Client) -> Client:
    client.force_login(UserFactory(username="ops", is_staff=True, is_superuser=True))
    return client


def test_a_sync_records_kinds_done_of_kinds_total_and_objects_so_far_page_by_page(
    hub: Hub, demo_hub: DemoHub
) -> None:
    seen: list[dict[str, Any]] = []

    def heartbeat() -> None:
        # what another connection (the page's poll) reads while the sync runs
        run = SyncRun.objects.get(hub=hub)
        seen.append({"done": run.kinds_done, "total": run.kinds_total, "objects": run.objects_listed})

    run = sync_hub(hub, trigger="command", heartbeat=heartbeat, page_limit=5)

    total = run.kinds_total
    assert total == len(hub.resource_versions) > 1
    assert {entry["total"] for entry in seen} == {total}  # every kind is known from the start
    dones = [entry["done"] for entry in seen]
    objects = [entry["objects"] for entry in seen]
    assert dones == sorted(dones) and dones[0] < total and dones[-1] == total
    assert objects == sorted(objects) and objects[0] < objects[-1]
    assert run.kinds_done == total
    assert run.objects_listed == objects[-1] >= demo_hub.seeded["ManagedCluster"]


def test_the_hub_page_shows_a_running_sync_as_a_progress_bar_and_polls_until_it_is_done(
    staff: Client, db: None
) -> None:
    run = SyncRunFactory(
        state=SyncRun.State.RUNNING,
        kinds={
            "ManagedCluster": {"listed": 12, "done": True},
            "ManagedClusterSet": {"listed": 3, "done": True},
            "Placement": {"listed": 1, "done": False},
            "PlacementDecision": {"listed": 0, "done": False},
        },
    )
    page = staff.get(reverse("inventory:hub-detail", args=[run.hub.pk])).content.decode()

    progress = re.search(r'<section class="card" id="sync-progress"[^>]*>', page)
    assert progress is not None
    poll = reverse("inventory:hub-sync-progress", args=[run.hub.pk])
    assert f'hx-get="{poll}"' in progress[0] and 'hx-trigger="every 1s"' in progress[0]
    bar = re.search(r"<progress [^>]*>", page)
    assert bar is not None and 'max="4"' in bar[0] and 'value="2"' in bar[0]
    assert f'aria-label="Sync of {run.hub.name}"' in bar[0]
    assert "2 of 4 kinds, 16 objects so far" in page

    run.state = SyncRun.State.SUCCEEDED
    run.kinds = {kind: {**counts, "done": True} for kind, counts in run.kinds.items()}
    run.save()
    fragment = staff.get(poll, **HTMX).content.decode()

    assert fragment.lstrip().startswith('<section class="card" id="sync-progress"')
    assert "hx-trigger" not in fragment and "<progress" not in fragment  # done: it stops polling
    assert "<html" not in fragment and "4 kinds, 16 objects" in fragment


def test_sync_now_on_the_hub_page_answers_its_sync_section_with_a_message(
    staff: Client, hub: Hub, tasks_in_process: None
) -> None:
    response = staff.post(
        reverse("inventory:hub-sync", args=[hub.pk]), HTTP_HX_TARGET="sync-progress", **HTMX
    )
    html = response.content.decode()

    assert response.status_code == 200
    assert html.lstrip().startswith("<section") and 'id="sync-progress"' in html
    assert "Sync of demo requested." in html  # swapped into #notices out of band
    run = SyncRun.objects.get(hub=hub)
    assert run.state == SyncRun.State.SUCCEEDED and f"{run.kinds_total} kinds" in html


def test_the_hub_list_row_shows_the_progress_bar_of_a_running_sync(staff: Client, db: None) -> None:
    run = SyncRunFactory(state=SyncRun.State.RUNNING, kinds={"ManagedCluster": {"listed": 7, "done": False}})
    row = staff.get(reverse("inventory:hub-row", args=[run.hub.pk]), **HTMX).content.decode()

    assert re.search(r'<progress [^>]*max="1" value="0"', row)
    assert "0 of 1 kinds, 7 objects so far" in row


def test_a_viewer_sees_the_progress_but_no_sync_button(client: Client, db: None) -> None:
    viewer: User = UserFactory(username="viewer", is_superuser=True)
    client.force_login(viewer)
    run = SyncRunFactory(state=SyncRun.State.RUNNING, kinds={"ManagedCluster": {"listed": 7, "done": False}})
    page = client.get(reverse("inventory:hub-detail", args=[run.hub.pk])).content.decode()

    assert "<progress" in page and "Sync now" not in page
