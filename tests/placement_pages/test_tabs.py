"""The placement page in tabs: each tab has its URL, answers the whole page or (htmx) the part it swaps,
shows its own content and computes only that; a PickFixed placement lists its clusters, not every member."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from placement import explanations, views
from placement.families import fleet, ocm
from placement.models import Placement
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.schedule import NOT_LISTED, schedule_crp
from placement.scheduler.fleet.types import PlacementPolicy
from tests.factories import (
    AuditEntryFactory,
    ClusterResourceBindingFactory,
    DecisionChangeFactory,
    PlacementDecisionFactory,
    PlacementEventFactory,
    PlacementFactory,
)
from tests.placement_pages.access_support import grant
from tests.placement_pages.explanations import OCM_EXPLANATION, ocm_explanation_for
from tests.scheduler.fleet.builders import NOW, member
from tests.scheduler.fleet.builders import placement as crp_input

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
# tab -> (a marker of its content, the template htmx gets)
CONTENT = {
    "detail": ('id="decision-pages"', "placement/tabs/_decisions.html"),
    "scores": ('id="scores"', "placement/_score_table.html"),
    "whatif": ('id="whatif-form"', "placement/_score_table.html"),
    "rollout": ('id="no-rollout"', "placement/tabs/_rollout.html"),
    "tolerations": ('id="tolerations-section"', "placement/_toleration_editor.html"),
    "history": ('id="history"', "placement/tabs/_history.html"),
    "yaml": ('id="placement-yaml"', "placement/tabs/_yaml.html"),
}
SLUGS = {"detail": "decisions"}


def tab_url(placement: Placement, tab: str) -> str:
    return reverse(f"placement:placement-{tab}", args=[placement.pk])


def ocm_placement(user: User, clusters: int = 4) -> Placement:
    placement = PlacementFactory(
        name="shop",
        explanation=ocm_explanation_for(clusters),
        status={key: OCM_EXPLANATION[key] for key in ("conditions", "decisionGroups")},
    )
    grant(user, placement)
    for index in range(3):
        PlacementDecisionFactory(placement=placement, name=f"d-{index}", clusters=["c-0000"])
        DecisionChangeFactory(placement=placement)
        PlacementEventFactory(placement=placement)
        AuditEntryFactory(of=placement)
    return placement


@pytest.mark.parametrize("tab", CONTENT)
def test_each_tab_answers_the_page_with_its_content_and_htmx_the_part_it_swaps(
    logged_in_client: Client, user: User, tab: str
) -> None:
    placement = ocm_placement(user)
    marker, fragment = CONTENT[tab]
    response = logged_in_client.get(tab_url(placement, tab))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and 'id="placement-heading"' in html and marker in html
    slug = SLUGS.get(tab, tab)
    tab_bar = html[html.index('<nav class="tabs"') :]
    tab_bar = tab_bar[: tab_bar.index("</nav>")]
    assert f'id="tab-{slug}" aria-current="page"' in tab_bar and tab_bar.count('aria-current="page"') == 1
    for other in CONTENT:  # the tab bar links every tab
        assert f'href="{tab_url(placement, other)}"' in html
    # the other tabs' content stays out; What-if shows the score table its Apply replaces
    for other, (other_marker, _) in CONTENT.items():
        if other != tab and (tab, other) != ("whatif", "scores"):
            assert other_marker not in html, other
    response = logged_in_client.get(tab_url(placement, tab), **HTMX)
    assert response.status_code == 200
    assert response.templates[0].name == fragment
    assert "<html" not in response.content.decode()
    assert "HX-Request" in response["Vary"]


def spy(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[Any]:
    calls: list[Any] = []
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


@pytest.mark.parametrize("tab", CONTENT)
def test_only_the_score_tabs_read_the_score_table_and_only_what_if_its_controls(
    logged_in_client: Client, user: User, monkeypatch: pytest.MonkeyPatch, tab: str
) -> None:
    placement = ocm_placement(user)
    scored = spy(monkeypatch, ocm.OcmFamily, "score_table")
    controls = spy(monkeypatch, ocm.OcmFamily, "whatif_controls")
    assert logged_in_client.get(tab_url(placement, tab)).status_code == 200
    assert len(scored) == (1 if tab in ("scores", "whatif") else 0)
    assert len(controls) == (1 if tab == "whatif" else 0)


# session, user, placement + hub and whether the user may see it, the approvals badge, whether the user may
# change it (Edit spec), and each tab's own reads
QUERIES = {"detail": 6, "scores": 5, "whatif": 5, "rollout": 6, "tolerations": 6, "history": 9, "yaml": 5}


@pytest.mark.parametrize("tab", CONTENT)
def test_each_tab_reads_a_number_of_queries_that_does_not_grow_with_the_clusters(
    logged_in_client: Client, user: User, tab: str
) -> None:
    counts = []
    for clusters in (1, 200):
        placement = ocm_placement(user, clusters)
        with CaptureQueriesContext(connection) as captured:
            response = logged_in_client.get(tab_url(placement, tab), {"per_page": "500"})
        assert response.status_code == 200
        counts.append(len(captured))
        assert len(captured) <= QUERIES[tab], [q["sql"] for q in captured]
    assert counts[0] == counts[1]


def test_the_yaml_tab_shows_the_kubernetes_object_and_downloads_it(
    logged_in_client: Client, user: User
) -> None:
    placement = ocm_placement(user)
    html = logged_in_client.get(tab_url(placement, "yaml")).content.decode()
    assert "apiVersion: cluster.open-cluster-management.io/v1beta1" in html
    assert 'href="{}"'.format(reverse("placement:placement-yaml-download", args=[placement.pk])) in html
    response = logged_in_client.get(reverse("placement:placement-yaml-download", args=[placement.pk]))
    assert response["Content-Disposition"] == 'attachment; filename="shop.yaml"'
    document = yaml.safe_load(response.content)
    assert document["kind"] == "Placement" and document["metadata"]["name"] == "shop"
    assert document["spec"] == placement.spec and document["status"]["conditions"]


def pick_fixed(user: User) -> Placement:
    """A PickFixed CRP of a 60-member hub listing one member, one that lost its heartbeat and one that
    does not exist, with the explanation its scheduler stores."""
    members = [member(f"m-{index:02d}") for index in range(58)]
    members.append(member("stale", heartbeat=NOW - timedelta(minutes=10)))
    policy = PlacementPolicy("PickFixed", cluster_names=("m-07", "stale", "ghost"))
    result = schedule_crp(crp_input(policy), FleetInventory(members), [], NOW)
    stored = explanations.stored(result)
    spec = {"policy": {"placementType": "PickFixed", "clusterNames": ["m-07", "stale", "ghost"]}}
    placement = PlacementFactory(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        namespace="",
        name="web",
        spec=spec,
        explanation=stored.report,
        cluster_record=stored.packed,
    )
    ClusterResourceBindingFactory(placement=placement, target="m-07")
    grant(user, placement)
    return placement


def test_a_pick_fixed_placement_lists_its_clusters_with_their_status_and_no_filler(
    logged_in_client: Client, user: User
) -> None:
    placement = pick_fixed(user)
    assert fleet.FLEET.fixed_clusters(placement.explanation, explanations.record(placement)) is not None
    for tab in ("scores", "whatif"):
        response = logged_in_client.get(tab_url(placement, tab))
        html = response.content.decode()
        assert response.status_code == 200
        assert NOT_LISTED not in html
        rows = response.context["fixed_table"].page.object_list
        assert [(row.record.name, row.record.status) for row in rows] == [
            ("m-07", "selected"),
            ("stale", "not eligible"),
            ("ghost", "not found"),
        ]
        assert (
            "not connected to the fleet" in html
            and "Specified cluster &quot;ghost&quot; is not found" in html
        )
        assert 'id="scores"' not in html and 'id="chart-data"' not in html
    assert "no weight or count to try" in html  # the What-if tab, last
    assert NOT_LISTED not in logged_in_client.get(tab_url(placement, "detail")).content.decode()


@pytest.mark.parametrize("tab", [tab for tab in views.TABS if tab.anchors and tab.slug != "rollout"])
def test_the_old_anchors_a_tab_claims_are_on_it(logged_in_client: Client, user: User, tab: views.Tab) -> None:
    """static/js/tabs.js sends /placements/<id>/#<anchor> to the tab that claims the anchor: it is there,
    and the tab bar of every tab carries the claims. (The Rollout tab's depend on the placement's family.)"""
    placement = ocm_placement(user)
    html = logged_in_client.get(reverse(tab.url_name, args=[placement.pk])).content.decode()
    for anchor in tab.anchors:
        assert f'id="{anchor}"' in html, anchor
    decisions = logged_in_client.get(tab_url(placement, "detail")).content.decode()
    assert f'id="tab-{tab.slug}" data-anchors="{" ".join(tab.anchors)}"' in decisions


def test_views_know_every_tab_once() -> None:
    assert [tab.slug for tab in views.TABS] == [SLUGS.get(tab, tab) for tab in CONTENT]
