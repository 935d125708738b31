"""A hub-owned run in the states KubeFleet v0.1.2 names (Execute, Pause, Abandon) reads like its Run and
Stop counterparts: its page keeps refreshing while it may move, and the list filters by those states."""

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from placement.models import Owner
from tests.factories import HubFactory, StagedUpdateRunFactory, placement_role
from tests.placement_pages.access_support import VIEW, signed_in

pytestmark = pytest.mark.django_db


def refreshes(page: str) -> bool:
    body = re.search(r'<div id="run-body"[^>]*>', page)
    assert body is not None
    return "hx-trigger" in body.group()


@pytest.mark.parametrize(("state", "moving"), [("Execute", True), ("Pause", True), ("Abandon", False)])
def test_a_hub_owned_run_in_a_v0_1_2_state(client: Client, state: str, moving: bool) -> None:
    hub = HubFactory(name="west")
    run = StagedUpdateRunFactory(placement__hub=hub, name="legacy", owner=Owner.HUB)
    run.spec = {**run.spec, "state": state}
    run.save(update_fields=["spec"])
    signed_in(client, placement_role(hub, role=VIEW, username="ops"))

    page = html.unescape(client.get(reverse("rollouts:run-detail", args=[run.pk])).content.decode())
    listed = client.get(reverse("rollouts:run-list"), {"state": state})

    assert refreshes(page) is moving
    assert listed.status_code == 200
    assert '<span id="result-count">1</span>' in listed.content.decode()
