"""Chromium draws the placement page's charts: the score chart's legend never covers the cut cluster names
of its axis, and the chart of the selected count over time is drawn from the history."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from placement.models import Placement
from tests.factories import DecisionChangeFactory, PlacementFactory, UserFactory
from tests.security.pages_support import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRIORITIZERS = {"Balance": 1, "Steady": 1, "AddOn/resource-usage-score/cpu-available-ratio": 2}
WIDTHS = (1280, 900)


def long_named_placement() -> Placement:
    """An OCM placement over 60 clusters whose names are far longer than a tick label."""
    clusters = [
        {
            "name": f"production-europe-west4-datacenter-rack-{i:03d}-cluster",
            "selected": i % 3 == 0,
            "filteredBy": None,
            "rank": i + 1,
            "total": 600 - i,
            "scores": {name: 100 - i for name in PRIORITIZERS},
        }
        for i in range(60)
    ]
    explanation = {
        "kind": "Placement",
        "selected": [c["name"] for c in clusters if c["selected"]],
        "weights": PRIORITIZERS,
        "clusters": clusters,
        "conditions": [],
    }
    placement = PlacementFactory(name="wide", spec={"numberOfClusters": 20}, explanation=explanation)
    for hours, count in ((3, 12), (2, 20), (1, 18)):
        selected = [f"c-{i}" for i in range(count)]
        DecisionChangeFactory(
            placement=placement, at=timezone.now() - timedelta(hours=hours), selected=selected
        )
    return placement


def boxes(page, selector: str) -> list[dict]:
    return page.evaluate(
        """selector => Array.from(document.querySelectorAll(selector)).map(node => {
            const box = node.getBoundingClientRect();
            return {left: box.left, right: box.right, top: box.top, bottom: box.bottom};
        })""",
        selector,
    )


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_legend_never_covers_the_axis_labels(browser, live_server, width: int) -> None:
    placement = long_named_placement()
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    log_in(page, live_server.url, UserFactory(username="root", is_superuser=True))
    page.goto(live_server.url + reverse("placement:placement-scores", args=[placement.pk]))
    page.wait_for_selector("#score-chart .legend .traces")

    legend = boxes(page, "#score-chart .legend")
    ticks = boxes(page, "#score-chart .xaxislayer-above .xtick text")
    titles = boxes(page, "#score-chart .g-xtitle, #score-chart .g-ytitle")
    # 20 selected and the best 10 others
    assert len(legend) == 1 and len(ticks) == 30
    assert not any(overlaps(legend[0], box) for box in ticks + titles)
    # the labels are cut; the whole name is in the data the hover shows
    texts = page.locator("#score-chart .xtick text").all_text_contents()
    assert all(len(text) <= 24 for text in texts) and texts[0] == "production-…-000-cluster"
    note = page.inner_text("#score-chart-note")
    assert "20 selected clusters and the best 10 not selected; 30 more not shown" in note
    # the chart stays inside its card
    chart, card = boxes(page, "#score-chart .main-svg")[0], boxes(page, "#score-chart")[0]
    assert chart["right"] <= card["right"] + 1

    page.goto(live_server.url + reverse("placement:placement-history", args=[placement.pk]))
    page.wait_for_selector("#history-chart .scatterlayer .trace")
    assert page.evaluate("document.getElementById('history-chart').data.map(t => t.name)") == [
        "selected",
        "requested",
    ]
    history_legend = boxes(page, "#history-chart .legend")[0]
    axis_labels = boxes(page, "#history-chart .xtick text, #history-chart .ytick text")
    assert not any(overlaps(history_legend, box) for box in axis_labels)
    page.close()
