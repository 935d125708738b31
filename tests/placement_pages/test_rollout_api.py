"""`/api/placements/<id>/rollout/`: a CRP's rollout (GET) and rolling out a new resource snapshot (POST)."""

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.models import AuditEntry
from placement import access
from placement.models import Owner, Placement
from placement.rollouts import rolling
from tests.factories import PlacementFactory, UserFactory
from tests.placement.rollout_hub import AVAILABLE
from tests.placement.rollout_hub import offline_crp as crp
from tests.placement_pages.access_support import ADMIN, VIEW, api_for, elsewhere_admin, grant

pytestmark = pytest.mark.django_db


def api_as(username: str, placement: Placement, role: str) -> APIClient:
    """As a user holding `role` on a set through which `placement` is visible."""
    return api_for(grant(UserFactory(username=username), placement, role=role))


def url(placement: Placement) -> str:
    return reverse("rollouts-api:placement-rollout", args=[placement.pk])


def test_get_answers_the_last_round_and_each_binding(tasks_in_process: None) -> None:
    placement = crp()
    rolling.run_round(placement)
    body = api_as("viewer", placement, VIEW).get(url(placement)).json()
    assert body["rolling"] and body["resourceSnapshot"]["name"] == "web-0-snapshot"
    assert body["rollout"]["wave"]["updated"] == ["m1", "m2", "m3"] and body["rollout"]["targetNumber"] == 3
    assert [(c["cluster"], c["state"], c["inWave"]) for c in body["clusters"]] == [
        ("m1", "Bound", True),
        ("m2", "Bound", True),
        ("m3", "Bound", True),
    ]
    assert body["clusters"][0]["conditions"]["RolloutStarted"]["reason"] == "RolloutStarted"


def test_post_rolls_out_and_answers_the_first_wave(
    tasks_in_process: None, django_capture_on_commit_callbacks: Any
) -> None:
    placement = crp()
    rolling.run_round(placement)
    placement.bindings.update(status=AVAILABLE)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as("editor", placement, ADMIN).post(url(placement))
    assert response.status_code == 200
    body = response.json()
    assert body["resourceSnapshot"]["index"] == 1 and body["resourceSnapshot"]["name"] == "web-1-snapshot"


@pytest.mark.parametrize(
    ("owner", "role", "reason"),
    [
        (Owner.DASHBOARD, VIEW, access.CHANGE_DENIED),
        (Owner.HUB, ADMIN, "roll it out there"),
    ],
)
def test_post_is_refused_to_viewers_and_for_hub_mirrors(owner: str, role: str, reason: str) -> None:
    placement = crp(owner=owner)
    response = api_as("someone", placement, role).post(url(placement))
    assert response.status_code == 403 and reason in response.json()["detail"]
    assert AuditEntry.objects.get(action="placement.rollout").outcome == AuditEntry.Outcome.DENIED
    placement.refresh_from_db()
    assert "resourceSnapshot" not in placement.status


def test_users_without_a_role_on_the_hub_get_404() -> None:
    """Staff with the model permission, or an admin of another hub's set: the CRP is not even visible."""
    placement = crp()
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_placement"))
    for outsider in (staff, elsewhere_admin(username="elsewhere")):
        client = api_for(outsider)
        assert client.get(url(placement)).status_code == 404
        assert client.post(url(placement)).status_code == 404
    placement.refresh_from_db()
    assert "resourceSnapshot" not in placement.status


def test_post_is_a_400_for_ocm_placements() -> None:
    placement = PlacementFactory(owner=Owner.DASHBOARD)
    response = api_as("editor", placement, ADMIN).post(url(placement))
    assert response.status_code == 400 and "resource snapshots" in str(response.json())
