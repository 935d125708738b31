"""Chromium edits a cluster's taints as an admin of a set holding it: add a row, preview which placements
drop the cluster, see the hub refuse a save, save to the demo hub; htmx swaps only the taints section."""

import re

import pytest

from demohub import DemoHub
from inventory.models import ClusterSetRole, ManagedCluster, ManagedClusterSet
from placement import service
from tests.factories import ClusterSetRoleFactory, synced_demo_hub_row

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CLUSTER = "aks-northeurope-dev-021"  # seeded with dedicated=gpu:NoSelect; in set gpu-clusters


def hub_taints(demo_hub: DemoHub) -> list[dict]:
    return demo_hub.store.get("ManagedCluster", CLUSTER)["spec"]["taints"]


def test_add_preview_and_save_a_taint(
    browser, live_server, password, demo_hub: DemoHub, tasks_in_process: None
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    service.forget_snapshots()
    cluster = ManagedCluster.objects.get(hub=hub, kind="ManagedCluster", name=CLUSTER)
    gpu_clusters = ManagedClusterSet.objects.get(hub=hub, name="gpu-clusters")
    admin = ClusterSetRoleFactory(cluster_set=gpu_clusters, role=ClusterSetRole.Role.ADMIN).user
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", admin.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/")
    page.evaluate("window.__noReload = true")  # survives htmx swaps, not a page load
    assert page.input_value("#id_taints-0-key") == "dedicated"

    page.click("#taint-add")
    page.wait_for_selector("#id_taints-2-key")
    page.fill("#id_taints-1-key", "example.com/drain")
    page.select_option("#id_taints-1-effect", "NoSelect")
    page.fill("#id_taints-2-key", "Not Valid")
    page.click("#taint-preview-button")
    page.wait_for_selector("#id_taints-2-key_error")
    assert 'Invalid value: "Not Valid"' in page.inner_text("#id_taints-2-key_error")

    page.click("#taints-2-remove")
    page.wait_for_selector("#taints-2", state="detached")
    page.click("#taint-preview-button")
    page.wait_for_selector("#taint-impacts")
    assert page.locator("#taint-impacts tr[data-verdict]").count() >= 1

    demo_hub.fail_next(1, 503)
    page.click("#taint-save")
    page.wait_for_selector("#taint-error")  # the 502 answer is swapped in too, with the hub's reason
    assert "nothing was changed" in page.inner_text("#taint-error")
    assert [taint["key"] for taint in hub_taints(demo_hub)] == ["dedicated"]
    assert page.input_value("#id_taints-1-key") == "example.com/drain"  # kept for another try

    page.click("#taint-save")
    page.wait_for_selector("#notices .notice-success")
    assert "saved to hub demo" in page.inner_text("#notices .notice-success")
    assert page.evaluate("window.__noReload") is True
    assert page.input_value("#id_taints-1-key") == "example.com/drain"
    assert [taint["key"] for taint in hub_taints(demo_hub)] == ["dedicated", "example.com/drain"]
    assert "cluster.taints" in page.inner_text("#taint-changes")
    page.close()
