"""The three flows a user comes for, in Chromium on `make run`'s first-look data, as a platform engineer
(a superuser): browse (home, a set, a cluster, a placement, and back with the browser's Back), approve
(the inbox, Approve, the run moves on and the entry leaves the inbox) and what-if (change a weight, see
the diff, Apply: the table follows and the history has one new entry)."""

import re
from typing import Any

import pytest

from inventory.models import Hub
from placement.models import ApprovalRequest, DecisionChange, StagedUpdateRun
from tests.factories import UserFactory
from tests.first_look import (  # noqa: F401 - fixtures
    APPROVAL,
    RUN,
    first_look_background_fixture,
    first_look_fixture,
    first_look_hub_fixture,
    short_placement,
    wait_for,
    weighted_placement,
)
from tests.placement.runs_support import cluster_states
from tests.security.pages_support import log_in
from tests.web.axe import VIEWPORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser, live_server, first_look: Hub) -> Any:
    """Signed in as the platform engineer, on the home page."""
    engineer = UserFactory(username="platform", is_superuser=True, is_staff=True)
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(20_000)
    page = context.new_page()
    log_in(page, live_server.url, engineer)
    yield page
    context.close()


def heading(page: Any) -> str:
    return page.locator("h1").first.inner_text()


def test_browse_from_home_to_a_set_a_cluster_a_placement_and_back(page: Any, first_look: Hub) -> None:
    placement = short_placement(first_look)
    cluster = sorted(d["clusterName"] for row in placement.decisions.all() for d in row.decisions)[0]

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Cluster sets").click()
    page.get_by_role("link", name="gpu-clusters", exact=True).first.click()
    assert heading(page) == "gpu-clusters"
    set_url = page.url
    page.get_by_role("link", name=cluster, exact=True).first.click()
    assert heading(page).startswith(cluster)
    cluster_url = page.url
    page.get_by_role("link", name=str(placement), exact=True).first.click()
    page.wait_for_url(re.compile(rf".*/placements/{placement.pk}/.*"))
    assert "ml-inference" in heading(page)

    page.go_back()
    assert page.url == cluster_url and heading(page).startswith(cluster)
    page.go_back()
    assert page.url == set_url and heading(page) == "gpu-clusters"


def test_approve_in_the_inbox_and_the_run_moves_on(
    page: Any, first_look: Hub, first_look_background: None
) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile("Approvals")).click()
    row = page.locator("#approvals tbody tr", has_text=APPROVAL)
    assert row.locator(".approval-state").inner_text() == "pending"
    row.get_by_role("button", name=f"Approve {APPROVAL}").click()
    page.wait_for_url(re.compile(r".*/approvals/.*"))
    notice = page.locator("#notices [role=status]", has_text=APPROVAL)
    assert notice.inner_text().startswith(f"{APPROVAL}: approved")

    # the hub's run controller accepts the approval and updates the prod stage
    def prod_started() -> bool:
        return any(cluster_states(StagedUpdateRun.objects.get(hub=first_look, name=RUN), "prod").values())

    wait_for(prod_started, "the prod stage starting")
    assert ApprovalRequest.objects.get(hub=first_look, name=APPROVAL).state == ApprovalRequest.State.ACCEPTED
    page.reload()
    assert page.locator("#approvals tbody tr", has_text=APPROVAL).count() == 0

    run = StagedUpdateRun.objects.get(hub=first_look, name=RUN)
    page.goto(page.url.split("/approvals/")[0] + f"/runs/{run.pk}/")
    assert page.locator('[data-stage="staging"] .stage-state').inner_text() != "waiting"
    assert page.locator('[data-stage="prod"] .stage-state').inner_text() in ("updating", "succeeded")


def test_what_if_a_weight_changes_then_apply(page: Any, first_look: Hub) -> None:
    placement = weighted_placement(first_look)
    changes = DecisionChange.objects.filter(placement=placement).count()
    site = page.url.rstrip("/")
    page.goto(f"{site}/placements/{placement.pk}/history/")
    history = page.locator("#history li:not(.empty)")
    shown = history.count()
    page.goto(f"{site}/placements/{placement.pk}/whatif/")

    page.fill("#weight-0-number", "-10")  # the CPU weight: prefer the clusters with the least CPU
    page.wait_for_selector("#whatif-result:not([hidden])")
    page.wait_for_function("() => document.getElementById('whatif-status').textContent.includes('selected')")
    assert page.locator("#diff-added li").count() > 0 and page.locator("#diff-removed li").count() > 0
    added = page.locator("#diff-added li").all_inner_texts()

    page.wait_for_function("() => !document.getElementById('whatif-apply').disabled")
    page.click("#whatif-apply")
    page.wait_for_selector("#notices >> text=the what-if spec is applied")
    table = page.inner_text("#score-table")
    assert all(name.strip() in table for name in added)
    placement.refresh_from_db()
    assert placement.spec["prioritizerPolicy"]["configurations"][0]["weight"] == -10
    assert set(placement.explanation["selected"]) >= {name.strip() for name in added}
    page.click("#tab-history")
    page.wait_for_selector("#history >> text=what-if applied")
    assert history.count() == shown + 1
    assert DecisionChange.objects.filter(placement=placement).count() == changes + 1
