"""A real Chromium (Debian's, driven by Playwright) logs in and sees the demo fleet its roles show."""

from pathlib import Path

import pytest
from django.core.management import call_command

from inventory.models import ClusterSetRole, Hub
from tests.factories import placement_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_and_see_the_demo_fleet(browser, live_server, password: str, tmp_path: Path) -> None:
    call_command("load_demo")
    # a reader of the sets bound to the demo namespaces web, ml, platform: the OCM clusters, all placements
    hub = Hub.objects.get(name="manifests")
    user = placement_role(hub, ("web", "ml", "platform"), role=ClusterSetRole.Role.VIEW, username="operator")
    page = browser.new_page()
    page.set_default_timeout(15_000)

    page.goto(live_server.url)
    assert "/accounts/login/" in page.url
    page.fill("#id_username", user.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")

    page.wait_for_selector("#hub-syncs")
    assert page.locator(".overview-card").count() == 10
    # a demo cluster is unavailable: its card names it and links the filtered list
    card = page.locator("#card-unavailable-clusters")
    assert card.locator("a.card-link").get_attribute("href") == "/clusters/?availability=Unavailable"
    assert card.locator(".overview-items li").count() >= 1
    assert page.locator(".user-name").inner_text() == "operator"
    # The stylesheet is served locally (no CDN): the top bar is styled.
    assert page.locator(".topbar").evaluate("el => getComputedStyle(el).display") == "flex"

    screenshot = tmp_path / "home.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    page.close()
