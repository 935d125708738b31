"""A real Chromium (Debian's, driven by Playwright) logs in and sees the demo fleet."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.conftest import IN_CI
from tests.factories import UserFactory

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        message = f"Chromium not found at {CHROMIUM}; install Debian's package: apt-get install -y chromium"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        # Playwright's sync API runs an event loop in this thread; the ORM calls made here stay synchronous.
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_login_and_see_the_demo_fleet(browser, live_server, password: str, tmp_path: Path) -> None:
    call_command("load_demo")
    user = UserFactory(username="operator")
    page = browser.new_page()
    page.set_default_timeout(15_000)

    page.goto(live_server.url)
    assert "/accounts/login/" in page.url
    page.fill("#id_username", user.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")

    page.wait_for_selector("#clusters")
    cluster_names = page.locator("#clusters td.name").all_inner_texts()
    assert {"prod-use1-a", "aks-eastus-prod-01", "dev-local"} <= set(cluster_names)
    assert page.locator("#placements").inner_text().count("Placement") >= 5
    assert page.locator(".user-name").inner_text() == "operator"
    # The stylesheet is served locally (no CDN): the top bar is styled.
    assert page.locator(".topbar").evaluate("el => getComputedStyle(el).display") == "flex"

    screenshot = tmp_path / "home.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    page.close()
