"""Chromium approves the demo hub's pending request in the inbox and sees the hub accept it."""

import re
from collections.abc import Iterator

import pytest

from demohub import DemoHub
from tests.factories import synced_demo_hub_row
from tests.placement.runs_support import STAGING, role_holder

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REQUEST = "batch-jobs-rollout-1-after-staging"  # its stage updates the demo hub's staging clusters


@pytest.fixture
def fleet_hub() -> Iterator[DemoHub]:
    """The demo hub with its controllers ticking in the background, as `make run` has it."""
    with DemoHub(clusters=24, fleet=True, seed=7, controllers=True) as hub:
        yield hub


def test_approve_in_the_browser_then_accepted_and_the_badge_drops(
    browser, live_server, password, fleet_hub: DemoHub, tasks_in_process: None
) -> None:
    releaser = role_holder(synced_demo_hub_row(fleet_hub), STAGING, username="releaser")
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", releaser.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    assert page.inner_text("#approvals-badge") == "1"

    page.click("nav >> text=Approvals")
    row = page.locator("#approvals tbody tr", has_text=REQUEST)
    assert row.locator(".approval-state").inner_text() == "pending"
    assert "staging" in row.inner_text() and "after stage" in row.inner_text()

    row.get_by_role("button", name=f"Approve {REQUEST}").click()
    page.wait_for_url(re.compile(r".*/approvals/$"))
    assert page.inner_text("#notices .notice-success").startswith(f"{REQUEST}: ")
    # the row re-reads the hub every second until the hub's run controller accepted the approval
    page.locator("#approvals tbody tr[data-state='accepted']", has_text=REQUEST).wait_for()
    assert row.locator(".approval-state").inner_text() == "accepted"
    assert page.inner_text("#approvals-badge") == ""
    page.close()
