"""Chromium creates a placement through the "New placement" form and lands on its page."""

import re

import pytest
from django.core.management import call_command

from inventory.models import Hub
from placement import service
from placement.models import Owner, Placement
from tests.factories import placement_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SPEC = """\
clusterSets: [prod-us, prod-eu]
numberOfClusters: 2
"""


def test_create_a_placement_in_the_browser(browser, live_server, password, tasks_in_process: None) -> None:
    call_command("load_demo")
    service.forget_snapshots()
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    # admin of the sets bound to namespace web on the demo hub: may add placements there
    ops = placement_role(Hub.objects.get(name="manifests"), ("web",), username="ops")
    page.fill("#id_username", ops.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live_server.url}/placements/")
    page.click("text=New placement")
    assert "prioritizerPolicy" in page.input_value("#id_spec")  # the OCM example
    page.select_option("#id_hub", label="manifests")
    page.fill("#id_namespace", "web")
    page.fill("#id_name", "shop")
    page.fill("#id_spec", SPEC)
    page.click("text=Create placement")
    placement_url = re.compile(r".*/placements/\d+/$")
    page.wait_for_url(placement_url)
    assert page.inner_text("#placement-heading").startswith("web/shop")
    assert page.inner_text("#selected-count") == "2 / 2"
    assert Placement.objects.get(name="shop").owner == Owner.DASHBOARD
    page.close()
