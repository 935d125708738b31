"""Chromium drives the placement page: what-if by mouse and by keyboard only, the chart, Apply, history; every
tab fits a 1280 px window and the tab bar works by keyboard."""

import copy
import re

import pytest
from django.core.management import call_command

from placement import service
from placement.models import Placement
from tests.factories import placement_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def shop(tasks_in_process: None) -> Placement:
    """A dashboard-owned copy of the demo `frontend` placement, created and scheduled by the service."""
    call_command("load_demo")
    frontend = Placement.objects.get(name="frontend")
    service.forget_snapshots()
    return service.create_placement(
        kind="Placement",
        hub=frontend.hub,
        namespace="web",
        name="shop",
        spec=copy.deepcopy(frontend.spec),
        actor="test",
    )


def open_placement(browser, live_server, placement: Placement, password: str, tab: str = "whatif/"):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/accounts/login/")
    # admin of the sets bound to the placement's namespace: may see it and apply a what-if
    ops = placement_role(placement.hub, (placement.namespace,), username="ops")
    page.fill("#id_username", ops.username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(f"{live_server.url}/placements/{placement.pk}/{tab}")
    if tab in ("scores/", "whatif/"):
        page.wait_for_function("() => document.getElementById('score-chart').data !== undefined")
    # a marker on window dies with a full page load
    page.evaluate("window.__noReload = true")
    return page


def chart_values(page) -> list:
    return page.evaluate("document.getElementById('score-chart').data.map(trace => trace.y)")


def assert_applied(page, placement: Placement) -> None:
    page.wait_for_function("() => document.getElementById('whatif-status').textContent.includes('Applied')")
    assert page.evaluate("window.__noReload") is True
    placement.refresh_from_db()
    assert placement.spec["prioritizerPolicy"]["configurations"][0]["weight"] == -10
    # the score table and the chart now show the applied decision
    selected = placement.explanation["selected"]
    assert page.inner_text("#selected-count").startswith(f"{len(selected)} /")
    table = page.inner_text("#score-table")
    assert all(name in table for name in selected)
    assert page.is_hidden("#whatif-result")
    # recorded once in the History tab
    page.click("#tab-history")
    page.wait_for_url(re.compile(rf".*/placements/{placement.pk}/history/$"))
    entries = page.locator("#history li", has_text="what-if applied")
    assert entries.count() == 1 and "by ops" in entries.inner_text()


def test_move_a_weight_see_diff_and_chart_then_apply(browser, live_server, password, shop) -> None:
    page = open_placement(browser, live_server, shop, password)
    before = chart_values(page)
    page.fill("#weight-0-number", "-10")
    page.wait_for_selector("#whatif-result:not([hidden])")
    page.wait_for_function("() => document.getElementById('whatif-status').textContent.includes('selected')")
    assert page.input_value("#weight-0") == "-10"  # the slider follows the number
    assert page.locator("#diff-kept li, #diff-added li, #diff-removed li").count() >= 3
    assert chart_values(page) != before
    assert page.locator("#whatif-ranking tbody tr").count() > 0
    assert page.evaluate("window.__noReload") is True

    page.fill("#weight-0-number", "11")
    page.wait_for_selector("#whatif-errors >> text=less than or equal to 10")
    assert page.is_disabled("#whatif-apply")
    page.fill("#weight-0-number", "-10")
    page.wait_for_function("() => !document.getElementById('whatif-apply').disabled")
    page.click("#whatif-apply")
    assert_applied(page, shop)
    page.close()


def test_the_same_with_the_keyboard_only(browser, live_server, password, shop) -> None:
    page = open_placement(browser, live_server, shop, password)
    before = chart_values(page)
    for _ in range(200):
        if page.evaluate("document.activeElement.id") == "weight-0":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "weight-0"
    # the focused control is visibly outlined
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Home")  # the slider's minimum, -10
    page.wait_for_function("() => document.getElementById('whatif-status').textContent.includes('selected')")
    assert page.input_value("#weight-0-number") == "-10"
    assert chart_values(page) != before
    page.wait_for_function("() => !document.getElementById('whatif-apply').disabled")
    for _ in range(50):
        if page.evaluate("document.activeElement.id") == "whatif-apply":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert_applied(page, shop)
    page.close()


TABS = ("", "scores/", "whatif/", "rollout/", "tolerations/", "history/", "yaml/")


def test_every_tab_fits_the_window_and_the_tab_bar_works_by_keyboard(browser, live_server, password, shop):
    page = open_placement(browser, live_server, shop, password, tab="")
    for tab in TABS:
        page.goto(f"{live_server.url}/placements/{shop.pk}/{tab}")
        assert page.locator('.tabs a[aria-current="page"]').count() == 1
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"{tab or 'decisions'}: the page is {width[0]} px wide"
    # from the Decisions tab, Tab reaches the Scores link and Enter opens it
    page.goto(f"{live_server.url}/placements/{shop.pk}/")
    for _ in range(100):
        if page.evaluate("document.activeElement.id") == "tab-scores":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf".*/placements/{shop.pk}/scores/$"))
    assert page.get_attribute("#tab-scores", "aria-current") == "page"
    page.wait_for_selector("#score-table #scores")
    # an anchor of the page from before it had tabs opens the tab that holds it
    page.goto(f"{live_server.url}/placements/{shop.pk}/#tolerations-section")
    page.wait_for_url(re.compile(rf".*/placements/{shop.pk}/tolerations/#tolerations-section$"))
    page.close()
