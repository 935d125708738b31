"""Chromium on a placement page: a rolling update's waves move as the demo hub applies, and the button
rolls out a new resource snapshot."""

import re
import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from demohub import DemoHub
from fleetui import periodic
from fleetui.celery import app
from placement.models import Placement
from placement.rollouts import rolling, views
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.rollout_hub import create_crp, crp_spec, live_hub

__all__ = ["live_hub"]  # a fixture, used by name
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def runner(tasks_in_process: None) -> Iterator[None]:
    """The in-process periodic runner of `make run`, for the rolling updates' entry: it runs due rounds."""
    stop = threading.Event()
    rounds = [entry for entry in periodic.entries(app) if entry.name == "rolling-update-due-rounds"]
    threads = periodic.serve(app, stop, rounds)
    yield
    stop.set()
    for thread in threads:
        thread.join(30)


@pytest.fixture
def web(live_hub: DemoHub, runner: None, monkeypatch: pytest.MonkeyPatch) -> Placement:
    """In-process, the periodic runner runs due rounds (the page only shows them); rounds and the page
    poll every second here."""
    monkeypatch.setattr(rolling, "MIN_REQUEUE", timedelta(seconds=1))
    monkeypatch.setattr(views, "ROLLOUT_POLL_SECONDS", 1)
    hub = synced_demo_hub_row(live_hub)
    # ops administers a populated set of the hub: may add its CRPs and roll out their snapshots
    ops = placement_role(hub, username="ops")
    return create_crp(hub, ops, crp_spec(4, maxUnavailable="50%", maxSurge=0, unavailablePeriodSeconds=1))


def test_the_page_follows_the_waves_of_a_new_snapshot(browser, live_server, password, web) -> None:
    page = browser.new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ops")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live_server.url}/placements/{web.pk}/rollout/")
    # the first wave bound all four clusters; the section polls until they are available
    page.wait_for_selector("#rollout-next >> text=every binding is on the latest snapshot")
    assert page.locator("#rollout-clusters tbody tr").count() == 4

    with page.expect_navigation(url=re.compile(rf".*/placements/{web.pk}/rollout/$")):  # the Rollout tab
        page.click("#rollout-button")
    assert "Wave 1 of web-1-snapshot" in page.inner_text("#rollout-wave")
    assert page.locator("#rollout-clusters tr.in-wave").count() == 2
    assert "maxUnavailable 2" in page.inner_text("#rollout-budgets")

    page.wait_for_selector("#rollout-wave >> text=Wave 2 of web-1-snapshot")
    page.wait_for_selector("#rollout-next >> text=every binding is on the latest snapshot")
    snapshots = page.locator("#rollout-clusters tbody td:nth-child(3)").all_inner_texts()
    assert snapshots == ["web-1-snapshot"] * 4
