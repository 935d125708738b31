"""`/api/placements/<id>/rollout/`: a CRP's rollout (GET) and rolling out a new resource snapshot (POST)."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from placement import rolling
from placement.models import Owner, Placement
from tests.factories import PlacementFactory, UserFactory
from tests.placement.rollout_hub import AVAILABLE
from tests.placement.rollout_hub import offline_crp as crp

pytestmark = pytest.mark.django_db


def api_as(username: str, **flags: bool) -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(username=username, **flags))
    return client


def url(placement: Placement) -> str:
    return reverse("placement-api:placement-rollout", args=[placement.pk])


def test_get_answers_the_last_round_and_each_binding(tasks_in_process: None) -> None:
    placement = crp()
    rolling.run_round(placement)
    body = api_as("viewer").get(url(placement)).json()
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
        response = api_as("editor", is_staff=True).post(url(placement))
    assert response.status_code == 200
    body = response.json()
    assert body["resourceSnapshot"]["index"] == 1 and body["resourceSnapshot"]["name"] == "web-1-snapshot"


@pytest.mark.parametrize(
    ("owner", "staff", "status", "reason"),
    [
        (Owner.DASHBOARD, False, 403, "placement.change_placement"),
        (Owner.HUB, True, 403, "roll it out there"),
    ],
)
def test_post_is_refused_to_viewers_and_for_hub_mirrors(
    owner: str, staff: bool, status: int, reason: str
) -> None:
    placement = crp(owner=owner)
    response = api_as("someone", is_staff=staff).post(url(placement))
    assert response.status_code == status and reason in response.json()["detail"]


def test_post_is_a_400_for_ocm_placements() -> None:
    placement = PlacementFactory(owner=Owner.DASHBOARD)
    response = api_as("editor", is_staff=True).post(url(placement))
    assert response.status_code == 400 and "resource snapshots" in str(response.json())
