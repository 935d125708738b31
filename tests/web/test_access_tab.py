"""Chromium on a cluster set's access management tab: add, change and remove roles through htmx, with no
page reload, and an unknown user answered in the form."""

import re

import pytest

from inventory import audit
from inventory.models import ClusterSetRole
from tests.factories import (
    ClusterSetRoleFactory,
    GroupFactory,
    HubFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def settled(page, selector: str) -> None:
    """htmx has processed what it swapped into `selector`: it wires the new content up only once the swap
    settles (20 ms later), and a form sent before that is sent natively, reloading the page."""
    page.wait_for_selector(f"{selector}:not(.htmx-settling)")


def add(page, kind: str, name: str, role: str) -> None:
    """Fill and send the "Add a user or group" form (htmx swaps the section, form included)."""
    settled(page, "#access")
    form = page.locator("#access-add")
    form.locator("select[name=kind]").select_option(kind)
    form.locator("input[name=name]").fill(name)
    form.locator("select[name=role]").select_option(role)
    form.locator("button[type=submit]").click()


def test_an_admin_manages_access_without_reloading(browser, live_server, password) -> None:
    prod = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    owner = UserFactory(username="owner")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=owner)
    UserFactory(username="bob")
    GroupFactory(name="sre")
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "owner")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))

    page.goto(f"{live_server.url}/clustersets/{prod.pk}/")
    page.evaluate("window.__noReload = true")
    add(page, "user", "ghost", "view")
    page.wait_for_selector("#name-errors >> text=No user named 'ghost'.")
    add(page, "user", "bob", "view")
    page.wait_for_selector('tr[data-principal="user:bob"][data-role="view"]')
    add(page, "group", "sre", "admin")
    page.wait_for_selector('tr[data-principal="group:sre"][data-role="admin"]')

    settled(page, "#access")
    bob = page.locator('tr[data-principal="user:bob"]')
    bob.locator("select[name=role]").select_option("admin")
    bob.locator("button >> text=Change role").click()
    page.wait_for_selector('tr[data-principal="user:bob"][data-role="admin"]')
    settled(page, "#access")

    page.locator('tr[data-principal="group:sre"] button >> text=Remove').click()
    page.wait_for_selector('tr[data-principal="group:sre"]', state="detached")
    assert page.evaluate("window.__noReload") is True
    page.close()

    assert sorted(r.principal for r in ClusterSetRole.objects.filter(cluster_set=prod)) == [
        "user:bob",
        "user:owner",
    ]
    actions = [entry.action for entry in audit.entries_for(prod)][::-1]
    assert actions == ["role.grant", "role.grant", "role.change", "role.revoke"]
