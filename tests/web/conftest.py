"""Browser fixtures: Debian's Chromium driven by Playwright (never a downloaded browser)."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import unavailable

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        unavailable(
            f"Chromium not found at {CHROMIUM}; install Debian's package: apt-get install -y chromium"
        )
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        # Playwright's sync API runs an event loop in this thread; the ORM calls made here stay synchronous.
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
