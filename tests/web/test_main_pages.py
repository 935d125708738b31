"""Every main page of the site, on `make run`'s first-look data, in Chromium at 1280x800: nothing scrolls
sideways, and axe-core finds no serious or critical accessibility violation. Placement pages are checked
on each of their tabs. Every problem of every page is reported at once (page, rule, element)."""

from typing import Any

import pytest
from django.urls import reverse

from inventory.models import Hub, ManagedCluster, ManagedClusterSet
from placement.models import Placement, StagedUpdateRun
from tests.factories import UserFactory
from tests.first_look import (  # noqa: F401 - fixtures
    RUN,
    first_look_fixture,
    first_look_hub_fixture,
    rolling_placement,
    short_placement,
)
from tests.security.pages_support import log_in
from tests.web.axe import VIEWPORT, Problem, accessibility_problems, overflow_problems, require_axe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def main_pages(hub: Hub) -> dict[str, str]:
    """Name to path of every main page, the detail pages on first-look objects."""
    cluster_set = ManagedClusterSet.objects.get(hub=hub, name="gpu-clusters")
    cluster = ManagedCluster.objects.filter(hub=hub, memberships__cluster_set=cluster_set).order_by("name")[0]
    batch_jobs = Placement.objects.get(hub=hub, name="batch-jobs")
    run = StagedUpdateRun.objects.get(hub=hub, name=RUN)
    short, rolling = short_placement(hub), rolling_placement(hub)
    return {
        "home": reverse("home"),
        "hubs": reverse("inventory:hub-list"),
        "hub": reverse("inventory:hub-detail", args=[hub.pk]),
        "clusters": reverse("inventory:cluster-list"),
        "cluster": reverse("inventory:cluster-detail", args=[cluster.pk]),
        "sets": reverse("inventory:clusterset-list"),
        "set": reverse("inventory:clusterset-detail", args=[cluster_set.pk]),
        "placements": reverse("placement:placement-list"),
        "placement (OCM, short of clusters)": reverse("placement:placement-detail", args=[short.pk]),
        "placement (rolling update)": reverse("placement:placement-detail", args=[rolling.pk]),
        "placement (hub-owned, PickFixed)": reverse("placement:placement-detail", args=[batch_jobs.pk]),
        "runs": reverse("rollouts:run-list"),
        "run": reverse("rollouts:run-detail", args=[run.pk]),
        "approvals": reverse("rollouts:approval-list"),
        "strategies": reverse("rollouts:strategy-list"),
        "audit log": reverse("inventory:audit-list"),
    }


def tabs(page: Any) -> list[str]:
    """The addresses of the page's tabs (the links of its tab bar), the current one left out."""
    links = page.eval_on_selector_all(
        "nav.tabs a:not([aria-current=page])", "links => links.map(link => link.href)"
    )
    assert all(links), "a tab without an address"
    return list(dict.fromkeys(links))


def check(page: Any, name: str) -> list[Problem]:
    return [*overflow_problems(page, name), *accessibility_problems(page, name)]


def test_no_main_page_overflows_or_has_serious_accessibility_violations(
    browser, live_server, first_look: Hub
) -> None:
    require_axe()
    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    # the site's CSP refuses inline scripts, which is how Playwright injects axe-core
    context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, live_server.url, admin)

    problems: list[Problem] = []
    for name, path in main_pages(first_look).items():
        response = page.goto(f"{live_server.url}{path}")
        status = response.status if response is not None else None
        assert status == 200, f"{name} ({path}) answered {status}"
        page.wait_for_load_state("networkidle")
        problems += check(page, name)
        others = tabs(page)
        # a placement page has seven tabs: the one shown and six more, each checked too
        assert len(others) == (6 if name.startswith("placement (") else 0), (name, others)
        for tab in others:
            page.goto(tab)
            page.wait_for_load_state("networkidle")
            problems += check(page, f"{name}, tab {tab.removeprefix(live_server.url)}")
    context.close()
    assert not problems, "\n".join(map(str, problems))
