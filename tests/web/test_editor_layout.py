"""Chromium at 1280 × 800 on the taint editor (cluster page) and the toleration editor (placement page):
each row's inputs side by side on one line and no table wider than its card; rows added and removed with
the keyboard alone, the focus on the new row or the row after the removed one; Tab follows the row; the
value is disabled while the operator is Exists; Enter in an input previews instead of removing a row."""

from typing import Any

import pytest

from inventory.models import ManagedCluster, Owner
from placement.models import Placement
from tests.factories import ManagedClusterFactory, PlacementFactory, UserFactory
from tests.security.pages_support import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TAINTS = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSelect"},
    {"key": "example.com/maintenance-window", "value": "saturday-night", "effect": "PreferNoSelect"},
]
TOLERATIONS = [
    {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists", "tolerationSeconds": 600},
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSelect"},
]
# the row's controls, in the order Tab visits them
TAINT_ROW = ("key", "value", "effect", "remove")
TOLERATION_ROW = ("key", "operator", "value", "effect", "tolerationSeconds", "remove")


def signed_in(browser: Any, live_server: Any) -> Any:
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(15_000)
    log_in(page, live_server.url, root)
    return page


@pytest.fixture
def cluster(db: None) -> ManagedCluster:
    return ManagedClusterFactory(kind=ManagedCluster.Kind.MANAGED_CLUSTER, taints=TAINTS)


@pytest.fixture
def placement(db: None) -> Placement:
    spec = {"numberOfClusters": 2, "tolerations": TOLERATIONS}
    return PlacementFactory(owner=Owner.DASHBOARD, namespace="ml", spec=spec)


def control(prefix: str, index: int, name: str) -> str:
    return f"#{prefix}-{index}-remove" if name == "remove" else f"#id_{prefix}-{index}-{name}"


def assert_rows_on_one_line(page: Any, prefix: str, names: tuple[str, ...]) -> None:
    """Every control of a row (`names` of them) has the same top; no table is wider than its card."""
    rows = page.locator(f"#{prefix} tbody tr[id]")
    assert rows.count() >= 3
    for row in range(rows.count()):
        controls = rows.nth(row).locator("input:not([type=hidden]), select, button")
        tops = {round(controls.nth(at).bounding_box()["y"]) for at in range(controls.count())}
        assert len(tops) == 1, f"row {row} of {prefix} spans several lines: {tops}"
        assert controls.count() == len(names)
    overflow = page.evaluate(
        "() => [document.documentElement.scrollWidth > document.documentElement.clientWidth,"
        f" document.querySelector('#{prefix}').parentElement.scrollWidth"
        f" > document.querySelector('#{prefix}').parentElement.clientWidth]"
    )
    assert overflow == [False, False]


def focused_id(page: Any) -> str:
    return str(page.evaluate("document.activeElement.id"))


def tab_through_row(page: Any, prefix: str, index: int, names: tuple[str, ...]) -> None:
    """Tab visits the row's enabled controls in order, from its key to its Remove button."""
    enabled = [control(prefix, index, name) for name in names]
    enabled = [selector for selector in enabled if page.is_enabled(selector)]
    page.focus(enabled[0])
    for selector in enabled[1:]:
        page.keyboard.press("Tab")
        assert f"#{focused_id(page)}" == selector


def add_and_remove_by_keyboard(page: Any, prefix: str, add: str, names: tuple[str, ...]) -> None:
    """Rows 0 and 1 are stored, row 2 the blank one."""
    tab_through_row(page, prefix, 2, names)
    page.keyboard.press("Tab")  # from the last row's Remove to Add
    assert focused_id(page) == add
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#id_{prefix}-3-key")
    page.wait_for_selector(f"#id_{prefix}-3-key:focus")
    page.keyboard.type("example.com/new")

    tab_through_row(page, prefix, 0, names)  # ends on row 0's Remove
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#{prefix}-0", state="detached")
    page.wait_for_selector(f"#id_{prefix}-1-key:focus")
    assert page.input_value(f"#id_{prefix}-3-key") == "example.com/new"  # typed rows survive

    page.focus(control(prefix, 3, "remove"))  # the last row: the focus goes back to the one before
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#{prefix}-3", state="detached")
    page.wait_for_selector(f"#id_{prefix}-2-key:focus")
    assert page.locator(f"#{prefix} tbody tr[id]").count() == 2


def test_the_taint_editor(browser, live_server, cluster: ManagedCluster) -> None:
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/")
    page.evaluate("window.__noReload = true")
    assert_rows_on_one_line(page, "taints", TAINT_ROW)
    add_and_remove_by_keyboard(page, "taints", "taint-add", TAINT_ROW)
    assert page.evaluate("window.__noReload") is True  # htmx swapped the section, no page load

    page.fill("#id_taints-1-key", "example.com/drain")
    page.press("#id_taints-1-key", "Enter")  # previews: no row goes
    page.wait_for_selector("#taint-preview")
    assert page.input_value("#id_taints-1-key") == "example.com/drain"
    assert page.locator("#taints tbody tr[id]").count() == 2
    cluster.refresh_from_db()
    assert cluster.taints == TAINTS
    page.close()


def test_the_toleration_editor(browser, live_server, placement: Placement) -> None:
    page = signed_in(browser, live_server)
    page.goto(f"{live_server.url}/placements/{placement.pk}/tolerations/")
    page.wait_for_selector("#toleration-editor")
    page.evaluate("window.__noReload = true")
    assert_rows_on_one_line(page, "tolerations", TOLERATION_ROW)

    # Exists matches any value: the value is disabled, and Tab skips it
    assert page.is_disabled("#id_tolerations-0-value") and page.is_enabled("#id_tolerations-1-value")
    page.focus("#id_tolerations-0-operator")
    page.keyboard.press("Tab")
    assert focused_id(page) == "id_tolerations-0-effect"
    page.select_option("#id_tolerations-0-operator", "Equal")
    assert page.is_enabled("#id_tolerations-0-value")
    page.select_option("#id_tolerations-0-operator", "Exists")
    assert page.is_disabled("#id_tolerations-0-value")

    add_and_remove_by_keyboard(page, "tolerations", "toleration-add", TOLERATION_ROW)
    assert page.evaluate("window.__noReload") is True
    placement.refresh_from_db()
    assert placement.spec["tolerations"] == TOLERATIONS
    page.close()
