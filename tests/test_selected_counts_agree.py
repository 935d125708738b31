"""Every page counts a placement's selected clusters alike: the cluster page lists each placement that
selects the cluster, with the same "selected / requested" as the placement list, the placement page and
the API, for hub-owned and dashboard-owned placements, PickAll and numberOfClusters, OCM and Fleet.

A hub-owned placement's selection is what its hub decided (its PlacementDecisions or bindings), not the
dashboard's own evaluation of it, which its explanation holds."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import Hub, ManagedCluster
from placement import service
from placement.models import CRP_LABEL, Owner, Placement
from tests.factories import ClusterResourceBindingFactory, PlacementDecisionFactory
from tests.pages import read_html

pytestmark = pytest.mark.django_db

# the demo MemberClusters' heartbeats are fresh at this moment
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
CRP = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
CRP_SPEC = {
    "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
    "policy": {"placementType": "PickN", "numberOfClusters": 2},
}


@pytest.fixture
def placements(demo_fleet: None) -> dict[str, Placement]:
    """Hub manifests' placements, evaluated: two hub-owned PickAll ones whose hub decided fewer clusters
    than the dashboard's evaluation selects (the OCM one's status not updated yet), and two
    dashboard-owned ones asking for two clusters."""
    hub = Hub.objects.get(name="manifests")
    agents = Placement.objects.get(hub=hub, name="monitoring-agents")
    PlacementDecisionFactory(placement=agents, owner=Owner.HUB, clusters=["prod-use1-a", "stage-use1"])
    baseline = Placement.objects.get(hub=hub, name="cluster-baseline")
    labels = {CRP_LABEL: baseline.name}
    for target, state in (("aks-eastus-prod-01", "Bound"), ("aks-westus-prod-01", "Scheduled")):
        ClusterResourceBindingFactory(
            placement=baseline, owner=Owner.HUB, labels=labels, target=target, state=state
        )
    shop = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=hub,
        namespace="web",
        name="shop",
        spec={"numberOfClusters": 2},
        actor="test",
    )
    store = service.create_placement(
        kind=CRP, hub=hub, namespace="", name="store", spec=CRP_SPEC, actor="test"
    )
    for placement in Placement.objects.filter(hub=hub):
        service.reschedule(placement, trigger="test", now=NOW)
    return {p.name: p for p in (agents, baseline, shop, store)}


def selected_cell(cells: list, placement: Placement) -> str:
    """The "selected / requested" text of the row naming the placement."""
    detail = reverse("placement:placement-detail", args=[placement.pk])
    [row] = [row for row in cells if any(href == detail for cell in row for href, _ in cell.links)]
    [cell] = [cell for cell in row if "/" in cell.text and cell.css == "number"]
    return cell.text


def test_every_page_counts_what_the_placement_owns(
    admin_client: Client, admin_user: User, placements: dict[str, Placement]
) -> None:
    expected = {
        "monitoring-agents": "2 / all",
        "cluster-baseline": "2 / all",
        "shop": "2 / 2",
        "store": "2 / 2",
    }
    # the hub-owned ones' evaluations select more than their hubs did: that is not their selection
    assert len(Placement.objects.get(name="monitoring-agents").explanation["selected"]) > 2
    assert len(Placement.objects.get(name="cluster-baseline").explanation["selected"]) > 2

    listed = read_html(admin_client.get(reverse("placement:placement-list"), {"per_page": 100})).tables[
        "placements"
    ]
    api = {
        row["name"]: row for row in admin_client.get("/api/placements/", {"page_size": 100}).json()["results"]
    }
    for name, placement in placements.items():
        assert selected_cell(listed, placement) == expected[name], name
        page = admin_client.get(reverse("placement:placement-detail", args=[placement.pk])).content.decode()
        assert f'<dd id="selected-count">{expected[name]}' in page, name
        assert f"{api[name]['selected_count']} / {api[name]['requested']}" == expected[name], name
        one = admin_client.get(f"/api/placements/{placement.pk}/").json()
        assert one["selected_count"] == api[name]["selected_count"], name

    # each cluster page lists exactly the placements whose selection holds the cluster, with those counts
    selecting: dict[str, set[str]] = {}
    for placement in placements.values():
        for cluster in placement.family.current_selection(placement):
            selecting.setdefault(cluster, set()).add(placement.name)
    for cluster in ManagedCluster.objects.filter(hub__name="manifests"):
        page = read_html(admin_client.get(reverse("inventory:cluster-detail", args=[cluster.pk])))
        rows = page.tables.get("placements", [])
        shown = {
            placement.name
            for placement in placements.values()
            if any(
                href == reverse("placement:placement-detail", args=[placement.pk])
                for row in rows
                for cell in row
                for href, _ in cell.links
            )
        }
        assert shown == selecting.get(cluster.name, set()), cluster.name
        for name in shown:
            assert selected_cell(rows, placements[name]) == expected[name], (cluster.name, name)
    assert selecting["prod-use1-a"] >= {"monitoring-agents"}
