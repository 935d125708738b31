"""Fixtures of the hostile-input tests: the live site under a memory limit (tests.security.bounded)."""

from collections.abc import Iterator

import pytest

from tests.security.bounded import LiveSite


@pytest.fixture(scope="module")
def live_site(django_db_setup: None, django_db_blocker: object) -> Iterator[LiveSite]:
    """One gunicorn for the module's tests, on the test database; its tests write with transactional_db."""
    site = LiveSite()
    try:
        yield site
    finally:
        site.stop()
