"""Object names are links: on every list page of a seeded fleet, each row's name cell and hub cell is a link
to that object's page (and a cluster's sets, a set's bound namespaces, a run's placement), and the detail
pages link their hub and the placements selecting a cluster."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import Hub, ManagedCluster, ManagedClusterSet
from placement.models import Placement, StagedUpdateRun
from tests.factories import AuditEntryFactory, StagedUpdateRunFactory, StagedUpdateStrategyFactory
from tests.pages import Cell, read_html

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(demo_fleet: None, admin_client: Client, admin_user: User) -> Hub:
    hub = Hub.objects.get(name="manifests")
    crp = Placement.objects.filter(hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT).first()
    StagedUpdateStrategyFactory(hub=hub, name="strategy")
    StagedUpdateRunFactory(placement=crp)
    AuditEntryFactory(of=ManagedCluster.objects.filter(hub=hub).first())
    return hub


def rows(client: Client, view: str, table: str) -> list[list[Cell]]:
    shown = read_html(client.get(reverse(view), {"per_page": 100})).tables[table]
    assert shown, view
    return shown


def only_link(cell: Cell) -> str:
    [(href, text)] = cell.links
    assert text == cell.text.split(" ")[0] or cell.text.startswith(text), (href, text, cell.text)
    return href


def test_every_name_and_hub_cell_of_the_lists_links_to_its_page(admin_client: Client, fleet: Hub) -> None:
    hub_page = reverse("inventory:hub-detail", args=[fleet.pk])
    pages = {
        ("inventory:cluster-list", "clusters"): (ManagedCluster, "inventory:cluster-detail"),
        ("inventory:clusterset-list", "clustersets"): (ManagedClusterSet, "inventory:clusterset-detail"),
        ("placement:placement-list", "placements"): (Placement, "placement:placement-detail"),
        ("rollouts:run-list", "runs"): (StagedUpdateRun, "rollouts:run-detail"),
    }
    for (view, table), (model, detail) in pages.items():
        urls = {reverse(detail, args=[pk]) for pk in model.objects.values_list("pk", flat=True)}
        for row in rows(admin_client, view, table):
            [name] = [cell for cell in row if cell.css == "name"]
            assert only_link(name) in urls, (view, name)
            [hub] = [cell for cell in row if cell.css == "hub"]
            assert only_link(hub) == hub_page, (view, hub)
    for view, table in (("rollouts:strategy-list", "strategies"), ("inventory:audit-list", "audit-entries")):
        for row in rows(admin_client, view, table):
            [hub] = [cell for cell in row if cell.css == "hub"]
            assert only_link(hub) == hub_page, (view, hub)


def test_related_objects_in_lists_link_to_their_pages(admin_client: Client, fleet: Hub) -> None:
    set_pages = {
        reverse("inventory:clusterset-detail", args=[pk])
        for pk in ManagedClusterSet.objects.values_list("pk", flat=True)
    }
    chips = [
        href
        for row in rows(admin_client, "inventory:cluster-list", "clusters")
        for cell in row
        for href, _ in cell.links
        if "clustersets" in href
    ]
    assert chips and set(chips) <= set_pages
    namespaces = [
        link
        for row in rows(admin_client, "inventory:clusterset-list", "clustersets")
        for cell in row
        if cell.css == ""
        for link in cell.links
    ]
    assert (reverse("inventory:namespace-access", args=[fleet.pk, "web"]), "web") in namespaces
    run = StagedUpdateRun.objects.get()
    [row] = rows(admin_client, "rollouts:run-list", "runs")
    assert (reverse("placement:placement-detail", args=[run.placement_id]), run.placement_name) in [
        link for cell in row for link in cell.links
    ]


def test_detail_pages_link_their_hub_and_related_objects(admin_client: Client, fleet: Hub) -> None:
    hub_page = reverse("inventory:hub-detail", args=[fleet.pk])
    cluster = ManagedCluster.objects.get(hub=fleet, name="prod-use1-a")
    cluster_set = ManagedClusterSet.objects.filter(hub=fleet).first()
    run = StagedUpdateRun.objects.get()
    for url in (
        reverse("inventory:cluster-detail", args=[cluster.pk]),
        reverse("inventory:clusterset-detail", args=[cluster_set.pk]),
        reverse("rollouts:run-detail", args=[run.pk]),
    ):
        links = read_html(admin_client.get(url)).links
        assert (hub_page, fleet.name) in links, url
    hub_links = read_html(admin_client.get(hub_page)).links
    assert (reverse("inventory:namespace-access", args=[fleet.pk, "web"]), "web") in hub_links
