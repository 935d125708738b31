"""Names from hub objects that look like markup (an add-on prioritizer named in a placement's spec, a
stage and a cluster named in a run's status) are shown literally by the score chart and the run
timeline: the page carries them escaped, and Chromium's plotly makes no link and no bold of them."""

import json
import re

import pytest
from django.urls import reverse

from placement import tables
from placement.models import Placement
from tests.factories import PlacementFactory, UserFactory
from tests.security.pages_support import log_in, started_run, watched_page
from tests.web.conftest import browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True)

PRIORITIZER = 'AddOn/<a href="https://evil.example/">claim</a>/score'
STAGE = '<b>canary</b><br><a href="javascript:alert(1)">x</a>'
CLUSTER = '<a href="https://evil.example/">edge</a>'


def hostile_placement() -> Placement:
    """An OCM placement whose stored explanation ranks two clusters by the hostile prioritizer."""
    clusters = [
        {
            "name": name,
            "selected": True,
            "filteredBy": None,
            "total": total,
            "rank": rank,
            "scores": {"Balance": total, PRIORITIZER: 1},
        }
        for rank, (name, total) in enumerate((("b", 20), ("c", 10)), start=1)
    ]
    explanation = {
        "kind": "Placement",
        "selected": ["b", "c"],
        "weights": {"Balance": 1, PRIORITIZER: 1},
        "clusters": clusters,
        "conditions": [],
    }
    return PlacementFactory(name="p", explanation=explanation)


def figure_on(html: str, element_id: str) -> dict:
    return json.loads(
        re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)[1]
    )


def test_the_pages_carry_the_names_escaped(client) -> None:
    client.force_login(UserFactory(username="root", is_superuser=True))
    placement, run = hostile_placement(), started_run(STAGE, CLUSTER)

    score = figure_on(
        client.get(reverse("placement:placement-scores", args=[placement.pk])).text, "chart-data"
    )
    timeline = figure_on(client.get(reverse("rollouts:run-detail", args=[run.pk])).text, "timeline-data")

    # the legend shows the name cut short, the hover (`meta`) the whole name
    assert 'AddOn/&lt;a href="https://evil.example/"&gt;claim&lt;/a&gt;/score' in [
        t["meta"] for t in score["data"]
    ]
    labels = [label for trace in timeline["data"] for label in trace["y"]]
    assert (
        'stage &lt;b&gt;canary&lt;/b&gt;&lt;br&gt;&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;' in labels
    )


@pytest.mark.browser
def test_chromium_shows_the_names_literally(browser, live_server) -> None:  # noqa: F811
    root = UserFactory(username="root", is_superuser=True)
    placement, run = hostile_placement(), started_run(STAGE, CLUSTER)
    violations: list[str] = []
    page = watched_page(browser, violations)
    log_in(page, live_server.url, root)

    page.goto(live_server.url + reverse("placement:placement-scores", args=[placement.pk]))
    page.wait_for_selector("#score-chart .legendtext")
    legend = tables.short_label(PRIORITIZER, tables.CHART_LEGEND)
    assert legend in page.locator("#score-chart .legendtext").all_text_contents()
    assert page.locator("#score-chart a").count() == 0

    page.goto(live_server.url + reverse("rollouts:run-detail", args=[run.pk]))
    page.wait_for_selector("#run-timeline .ytick")
    ticks = page.locator("#run-timeline .ytick text").all_text_contents()
    assert f"stage {STAGE}" in ticks and f"{STAGE} · {CLUSTER}" in ticks
    assert page.locator("#run-timeline a").count() == 0
    assert page.locator("#run-timeline [style*=bold]").count() == 0
    assert violations == []
    page.context.close()
