"""The chart of the selected count over time: a step line from the decision history, with the requested
count then in force as a second line where the policy has one, on the placement page."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse

from placement import history, tables
from placement.models import Placement
from tests.factories import DecisionChangeFactory, PlacementFactory
from tests.placement_pages.access_support import grant

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
NOW = START + timedelta(days=1)


def names(count: int) -> list[str]:
    return [f"c-{i}" for i in range(count)]


def edited(placement: Placement) -> None:
    """Created asking 2, 2 selected; a label change selects 1; an edit asks 3, 3 selected; then 0."""
    entries = [
        ({"selected": names(2), "spec_before": None, "spec_after": {"numberOfClusters": 2}}),
        ({"selected": names(1)}),
        (
            {
                "selected": names(3),
                "spec_before": {"numberOfClusters": 2},
                "spec_after": {"numberOfClusters": 3},
            }
        ),
        ({"selected": []}),
    ]
    for hour, fields in enumerate(entries):
        DecisionChangeFactory(placement=placement, at=START + timedelta(hours=hour), **fields)


def test_each_entry_gives_the_selected_and_the_requested_count_in_force() -> None:
    placement = PlacementFactory(spec={"numberOfClusters": 3})
    edited(placement)
    points = history.selection_over_time(placement)
    assert [(p.at.hour, p.selected, p.requested) for p in points] == [
        (9, 2, 2),
        (10, 1, 2),
        (11, 3, 3),
        (12, 0, 3),
    ]
    # only the newest entries are read
    assert [p.selected for p in history.selection_over_time(placement, length=2)] == [3, 0]


def test_the_figure_is_a_step_line_held_until_now_with_the_requested_count() -> None:
    placement = PlacementFactory(spec={"numberOfClusters": 3})
    edited(placement)
    figure = tables.history_figure(history.selection_over_time(placement), NOW)
    selected, requested = figure["data"]
    assert selected["line"]["shape"] == requested["line"]["shape"] == "hv"
    assert selected["y"] == [2, 1, 3, 0, 0] and requested["y"] == [2, 2, 3, 3, 3]
    assert selected["x"][-1] == NOW.isoformat()
    assert (
        figure["summary"]
        == "Selected clusters after each of the last 4 changes: now 0 of 3 requested; lowest 0, highest 3."
    )


def test_a_policy_asking_for_every_cluster_draws_no_requested_line() -> None:
    placement = PlacementFactory(spec={})
    DecisionChangeFactory(placement=placement, at=START, selected=names(5))
    figure = tables.history_figure(history.selection_over_time(placement), NOW)
    assert [trace["name"] for trace in figure["data"]] == ["selected"]
    assert figure["data"][0]["y"] == [5, 5]


def test_a_fleet_pick_n_policy_has_its_requested_line() -> None:
    spec = {"policy": {"placementType": "PickN", "numberOfClusters": 4}}
    placement = PlacementFactory(kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace="", spec=spec)
    DecisionChangeFactory(placement=placement, at=START, selected=names(4))
    points = history.selection_over_time(placement)
    assert [(p.selected, p.requested) for p in points] == [(4, 4)]


def test_the_history_tab_shows_the_chart_with_its_text(client: Client, user) -> None:
    placement = PlacementFactory(spec={"numberOfClusters": 3})
    edited(placement)
    client.force_login(grant(user, placement))
    html = client.get(reverse("placement:placement-history", args=[placement.pk])).content.decode()
    section = re.search(r'<section class="card" id="history-chart-section".*?</section>', html, re.S)[0]
    assert '<h2 id="history-chart-heading">Selected clusters over time</h2>' in section
    assert (
        'role="img" aria-label="Step line chart. Selected clusters after each of the last 4 changes'
        in section
    )
    data = re.search(
        r'<script id="history-chart-data" type="application/json">(.*?)</script>', section, re.S
    )[1]
    assert json.loads(data)["data"][0]["y"][:4] == [2, 1, 3, 0]
    assert "js/history-chart.js" in html


def test_a_placement_without_history_says_so_without_a_chart(client: Client, user) -> None:
    placement = PlacementFactory()
    client.force_login(grant(user, placement))
    html = client.get(reverse("placement:placement-history", args=[placement.pk])).content.decode()
    assert 'id="history-chart-note">No decisions recorded yet.' in html
    assert 'id="history-chart"' not in html
