"""OCM rollout previews per decision group: which clusters each strategy reaches in which step."""

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from placement.models import Placement
from placement.rollouts.preview import STRATEGY_ANNOTATION
from placement.scheduler.ocm.decisions import DECISION_GROUP_INDEX_LABEL, DECISION_GROUP_NAME_LABEL
from tests.factories import PlacementDecisionFactory, PlacementFactory
from tests.placement_pages.access_support import grant

pytestmark = pytest.mark.django_db

GROUPS = {"canary": ["c1", "c2"], "prod": ["p1", "p2", "p3"]}


def grouped(viewer: User, annotations: dict[str, str] | None = None) -> Placement:
    """A hub placement with two decision groups, as its PlacementDecisions label them; `viewer` sees it."""
    placement = PlacementFactory(
        name="shop",
        annotations=annotations or {},
        spec={
            "decisionStrategy": {
                "groupStrategy": {"decisionGroups": [{"groupName": name} for name in GROUPS]},
            }
        },
    )
    for index, (name, clusters) in enumerate(GROUPS.items()):
        PlacementDecisionFactory(
            placement=placement,
            name=f"shop-decision-{index + 1}",
            labels={DECISION_GROUP_NAME_LABEL: name, DECISION_GROUP_INDEX_LABEL: str(index)},
            clusters=clusters,
        )
    grant(viewer, placement)
    return placement


def preview(client: Client, placement: Placement) -> dict:
    response = client.get(reverse("rollouts-api:placement-rollout", args=[placement.pk]))
    assert response.status_code == 200
    return response.json()["preview"]


def steps(answer: dict) -> dict[str, list[tuple[int, list[str]]]]:
    return {g["groupName"]: [(s["step"], s["clusters"]) for s in g["steps"]] for g in answer["groups"]}


def test_without_a_declared_strategy_groups_roll_out_one_after_the_other(
    logged_in_client: Client, user: User
) -> None:
    answer = preview(logged_in_client, grouped(user))
    assert (answer["strategy"], answer["declared"], answer["steps"]) == ("ProgressivePerGroup", False, 2)
    assert steps(answer) == {"canary": [(1, ["c1", "c2"])], "prod": [(2, ["p1", "p2", "p3"])]}


def test_progressive_with_max_concurrency_and_a_mandatory_group(logged_in_client: Client, user: User) -> None:
    strategy = {
        "type": "Progressive",
        "progressive": {"maxConcurrency": 2, "mandatoryDecisionGroups": [{"groupName": "prod"}]},
    }
    answer = preview(logged_in_client, grouped(user, {STRATEGY_ANNOTATION: json.dumps(strategy)}))
    # the mandatory group goes first and whole; the rest two at a time
    assert steps(answer) == {"canary": [(2, ["c1", "c2"])], "prod": [(1, ["p1", "p2", "p3"])]}


def test_all_rolls_out_everywhere_at_once(logged_in_client: Client, user: User) -> None:
    answer = preview(logged_in_client, grouped(user, {STRATEGY_ANNOTATION: "type: All"}))
    assert answer["steps"] == 1 and steps(answer)["prod"] == [(1, ["p1", "p2", "p3"])]


def test_the_page_shows_the_steps_and_upstreams_errors(logged_in_client: Client, user: User) -> None:
    placement = grouped(user)
    html = logged_in_client.get(reverse("placement:placement-rollout", args=[placement.pk])).content.decode()
    assert "Rollout preview" in html and "<strong>Step 2</strong>: p1, p2, p3" in html

    bad = grouped(user, {STRATEGY_ANNOTATION: "type: Progressive\nprogressive:\n  maxConcurrency: 2x"})
    answer = preview(logged_in_client, bad)
    assert "maxConcurrency" in answer["error"] and answer["groups"] == []


def test_placements_without_groups_or_strategy_have_no_preview(logged_in_client: Client, user: User) -> None:
    placement = PlacementFactory()
    grant(user, placement)
    html = logged_in_client.get(reverse("placement:placement-rollout", args=[placement.pk])).content.decode()
    assert "Rollout preview" not in html and preview(logged_in_client, placement) is None
