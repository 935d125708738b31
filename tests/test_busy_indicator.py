"""While an htmx request a user started runs, the page says so: base.html's global indicator shows,
the element being replaced is aria-busy and the button that sent it is disabled; once the answer is in,
all of that is undone and the action's message is in #notices, dismissable."""

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from inventory import roles
from inventory.models import ClusterSetRole
from tests.factories import ClusterSetRoleFactory, HubFactory, ManagedClusterSetFactory, UserFactory
from tests.security.pages_support import log_in
from tests.web import conftest as web

# Chromium, the fixture of the browser tests
browser = web.browser

BUSY = "document.documentElement.classList.contains('htmx-busy')"


@pytest.mark.django_db
def test_every_page_has_the_indicator_and_loads_its_script(client: Client) -> None:
    client.force_login(UserFactory(username="ops"))
    html = client.get("/").content.decode()

    indicator = re.search(r'<div id="busy"[^>]*>', html)
    assert indicator is not None
    assert 'role="progressbar"' in indicator[0] and 'aria-label="Loading"' in indicator[0]
    assert 'src="/static/js/feedback.js"' in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_htmx_action_shows_busy_until_its_answer_then_its_message(
    browser: Any, live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    owner = UserFactory(username="owner")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=owner)
    UserFactory(username="bob")
    grant: Callable[..., Any] = roles.grant

    def slow_grant(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.5)  # long enough to look at the page while the request runs
        return grant(*args, **kwargs)

    monkeypatch.setattr(roles, "grant", slow_grant)
    page = browser.new_page()
    page.set_default_timeout(15_000)
    log_in(page, live_server.url, owner)
    page.goto(f"{live_server.url}/clustersets/{prod.pk}/")
    page.wait_for_selector("#access:not(.htmx-settling)")
    assert not page.evaluate(BUSY)

    form = page.locator("#access-add")
    form.locator("input[name=name]").fill("bob")
    form.locator("button[type=submit]").click()

    page.wait_for_selector("html.htmx-busy", state="attached")
    page.wait_for_selector("#busy", state="visible")  # after a short delay, so quick swaps do not flicker
    assert page.get_attribute("#busy", "aria-hidden") == "false"
    assert page.get_attribute("#access", "aria-busy") == "true"
    assert form.locator("button[type=submit]").is_disabled()

    page.wait_for_selector('tr[data-principal="user:bob"]')
    page.wait_for_selector("html:not(.htmx-busy)", state="attached")
    assert page.get_attribute("#access", "aria-busy") is None
    page.wait_for_selector("#busy", state="hidden")
    notice = page.locator("#notices .notice[role=status]")
    assert notice.inner_text().startswith("user:bob now holds the view role on cluster set prod.")

    notice.locator("button.notice-dismiss").click()
    assert page.locator("#notices .notice").count() == 0
    page.reload()
    assert page.locator("#notices .notice").count() == 0  # shown once: the swap consumed it
    page.close()
