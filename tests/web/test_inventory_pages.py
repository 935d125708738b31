"""Chromium drives the inventory pages: htmx filter/sort/page without reloads, details, and "Sync now"."""

import re

import pytest
from django.contrib.auth.models import User

from tests.factories import (
    ClusterSetMembershipFactory,
    DemoHubRowFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seed() -> None:
    hub = HubFactory(name="east")
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    for index in range(120):
        west = index % 2 == 0
        cluster = ManagedClusterFactory(
            hub=hub,
            name=f"c-{index:03d}",
            labels={"region": "us-west-1" if west else "eu-1", "vendor": "OpenShift"},
            cpu_allocatable=float(index),
        )
        if west:
            ClusterSetMembershipFactory(cluster=cluster, cluster_set=prod)


def log_in(browser, live_server, user: User, password: str):
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    return page


def test_filter_sort_page_and_open_details(browser, live_server, password: str) -> None:
    seed()
    # a superuser sees all 120, half of them in no set (roles: tests/inventory/test_roles_pages.py)
    page = log_in(browser, live_server, UserFactory(username="root", is_superuser=True), password)
    page.goto(f"{live_server.url}/clusters/")
    assert page.inner_text("#result-count") == "120"
    # A marker on window survives htmx swaps and dies with a full page load.
    page.evaluate("window.__noReload = true")

    page.fill("#id_q", "region=us-west-1,vendor in (OpenShift,AKS),!spot")
    page.press("#id_q", "Enter")
    page.wait_for_function("() => document.querySelector('#result-count').textContent === '60'")
    assert "q=region" in page.url
    assert page.evaluate("window.__noReload") is True

    page.click("th >> text=CPU")
    page.wait_for_selector('th[aria-sort="ascending"] >> text=CPU')
    page.click("th >> text=CPU")
    page.wait_for_selector('th[aria-sort="descending"] >> text=CPU')
    assert page.locator("#clusters td.name").first.inner_text() == "c-118"

    page.click("text=Next")
    page.wait_for_selector("text=Page 2 of 2")
    assert page.locator("#clusters td.name").first.inner_text() == "c-018"
    assert page.evaluate("window.__noReload") is True
    assert "page=2" in page.url and "sort=-cpu" in page.url

    page.fill("#id_q", "region in (")
    page.press("#id_q", "Enter")
    page.wait_for_selector("text=q: invalid label selector")
    assert page.input_value("#id_q") == "region in ("

    page.goto(f"{live_server.url}/clusters/?q=region%3Deu-1")
    page.click("#clusters a >> text=c-001")
    page.wait_for_selector("h1#cluster-heading")
    assert "c-001" in page.inner_text("h1#cluster-heading")
    assert "region=eu-1" in page.inner_text("#labels")

    page.goto(f"{live_server.url}/clustersets/")
    page.click("#clustersets a >> text=prod")
    page.wait_for_selector("#member-count")
    assert page.inner_text("#member-count") == "60"
    assert page.locator("#clusters td.name").count() == 50
    page.close()


def test_staff_sync_now_records_a_run(browser, live_server, password, demo_hub, tasks_in_process) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    page = log_in(
        browser, live_server, UserFactory(username="ops", is_staff=True, is_superuser=True), password
    )
    page.goto(f"{live_server.url}/hubs/")
    row = page.locator(f"#hub-{hub.pk}")
    assert "never" in row.inner_text()
    row.locator("button >> text=Sync now").click()
    page.wait_for_selector(f"#hub-{hub.pk} .run-state.status-succeeded")
    text = page.locator(f"#hub-{hub.pk}").inner_text()
    assert "\tok\t" in text and "Manual" in text
    clusters = page.locator(f"#hub-{hub.pk} td.number a").first.inner_text()
    assert int(clusters) >= 24
    page.close()
