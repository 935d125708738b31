"""Chromium on a run's page: before it starts, the stages and their clusters in update order; Run (a
POST with CSRF) starts it, the page then shows the new state, the timeline chart and the first cluster
updating, executed against the demo hub."""

import re

import pytest

from placement.models import StagedUpdateRun
from tests.factories import placement_role
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    checkout_fixture,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    strategy_fixture,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_open_a_run_see_its_preview_click_run_and_see_the_timeline(
    browser, live_server, password, hub_row, checkout, strategy, editor
) -> None:
    run = new_run(hub_row, editor)  # initialised in-process at once, waiting for Run
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    # admin of a populated set of the Fleet hub: sees the run and may start it
    page.fill("#id_username", placement_role(hub_row, username="ops").username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.click("nav >> text=Runs")
    page.click(f"#runs >> text={run.name}")

    assert "Initialised" in page.inner_text("#preview-summary")
    canary = page.locator('[data-stage="canary"] .cluster-name')
    assert canary.all_inner_texts() == CANARY
    assert page.locator('[data-stage="prod"] .cluster-name').all_inner_texts() == PROD
    assert page.locator("#run-timeline").count() == 0
    assert page.inner_text("#run-state") == "Initialize"

    page.click("#run-run")
    page.wait_for_selector("#notices >> text=state set to Run")
    assert page.inner_text("#run-state") == "Run"
    page.wait_for_function("() => document.getElementById('run-timeline').data !== undefined")
    labels = page.evaluate("document.getElementById('run-timeline').data.flatMap(trace => trace.y)")
    assert "stage canary" in labels and f"canary · {CANARY[0]}" in labels
    first = page.locator('[data-stage="canary"] tbody tr').first
    assert "updating" in first.inner_text()
    assert page.locator("#run-stop").is_visible()
    run.refresh_from_db()
    assert run.spec["state"] == "Run" and StagedUpdateRun.objects.get(pk=run.pk).generation == 2
    page.close()
