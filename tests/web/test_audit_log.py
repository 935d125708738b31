"""Chromium: a superuser grants a role on a set's access tab, then finds it in the audit log (filtered
through htmx without a reload), opens its before/after, and follows the set's "Recent changes" back."""

import re

import pytest

from tests.factories import HubFactory, ManagedClusterSetFactory, UserFactory
from tests.web.test_access_tab import add, settled
from tests.web.test_inventory_pages import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_grant_is_found_filtered_and_opened_in_the_audit_log(browser, live_server, password) -> None:
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    ManagedClusterSetFactory(hub=prod.hub, name="dev")
    UserFactory(username="bob")
    page = log_in(browser, live_server, UserFactory(username="root", is_superuser=True), password)

    page.goto(f"{live_server.url}/clustersets/{prod.pk}/")
    add(page, "user", "bob", "view")
    page.wait_for_selector('tr[data-principal="user:bob"][data-role="view"]')
    add(page, "user", "bob", "admin")  # refused (bob has a role already): not a change, nothing logged
    page.wait_for_selector("#name-errors")

    page.click("nav >> text=Audit log")
    page.wait_for_selector("h1#audit-heading")
    page.wait_for_load_state()  # htmx wires the page up once it is parsed
    page.evaluate("window.__noReload = true")
    assert page.inner_text("#result-count") == "1"

    page.fill("#id_since", "yesterday")
    page.press("#id_since", "Enter")
    page.wait_for_selector("text=since: Enter a valid date/time.")
    settled(page, "#audit-list")
    assert page.input_value("#id_since") == "yesterday"  # kept next to its error
    page.fill("#id_since", "")
    page.press("#id_since", "Enter")
    page.wait_for_selector("#audit-entries")  # the swap replaces the form: type into the new one
    settled(page, "#audit-list")
    page.fill("#id_action", "role.revoke")
    page.press("#id_action", "Enter")
    page.wait_for_selector("text=No entries match.")
    settled(page, "#audit-list")
    page.fill("#id_action", "role.grant")
    page.press("#id_action", "Enter")
    page.wait_for_selector("#audit-entries")
    settled(page, "#audit-list")
    assert "action=role.grant" in page.url
    assert page.evaluate("window.__noReload") is True

    row = page.locator("#audit-entries tbody tr").first
    assert row.locator(".actor").inner_text() == "root"
    assert row.locator(".outcome").inner_text() == "ok"
    assert "127.0.0.1" in row.inner_text()
    after = row.locator("pre.after")
    assert not after.is_visible()
    row.locator("summary").click()
    after.wait_for()
    assert '"principal": "user:bob"' in after.inner_text() and '"role": "view"' in after.inner_text()

    row.locator("td.target a").click()
    page.wait_for_selector("h1#clusterset-heading")
    assert "role.grant" in page.inner_text("#recent-changes")
    page.click("#audit-log-link")
    page.wait_for_url(re.compile(rf".*/audit/\?target_type=inventory.managedclusterset&target_id={prod.pk}$"))
    assert page.inner_text("#result-count") == "1"
    assert page.input_value("#id_target_id") == str(prod.pk)
    page.close()
