"""Every page below the top level shows one breadcrumb trail: a `nav` named "Breadcrumb" holding an ordered
list from the list page down to the page shown, each step but the last a link, the last marked as the
current page; the hub in a trail links to the hub's page."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import Hub, ManagedCluster, ManagedClusterSet
from placement.models import Placement
from tests.editors import dashboard_copy, rows_data
from tests.factories import StagedUpdateRunFactory

pytestmark = pytest.mark.django_db

TRAIL = re.compile(r'<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>(.*?)</ol></nav>', re.S)
STEP = re.compile(r'<li>(?:<a href="([^"]*)"( aria-current="page")?>|<span( aria-current="page")>)?([^<]*)')


def trail(client: Client, url: str, posted: dict[str, str] | None) -> list[tuple[str, str, bool]]:
    """(label, href or "", current) of each step of the one trail of the page `url` answers (to a post
    of `posted` where given: an editor's page is where its buttons land without JavaScript)."""
    response = client.get(url) if posted is None else client.post(url, posted)
    assert response.status_code in (200, 400), url
    page = response.content.decode()
    assert 'class="crumbs"' not in page, url
    [steps] = TRAIL.findall(page)
    found = STEP.findall(steps)
    assert found and steps.count("<li>") == len(found), steps
    return [
        (label, href, bool(link_current or text_current)) for href, link_current, text_current, label in found
    ]


@pytest.fixture
def fleet(demo_fleet: None, admin_client: Client) -> Client:
    return admin_client


def test_every_page_below_the_top_level_has_one_trail_ending_at_the_page(
    fleet: Client, admin_user: User
) -> None:
    hub = Hub.objects.get(name="manifests")
    hub_step = (hub.name, reverse("inventory:hub-detail", args=[hub.pk]), False)
    cluster = ManagedCluster.objects.filter(hub=hub, kind=ManagedCluster.Kind.MANAGED_CLUSTER).first()
    cluster_set = ManagedClusterSet.objects.filter(hub=hub).first()
    placement = dashboard_copy("frontend", "shop", admin_user)
    crp = Placement.objects.filter(hub=hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT).first()
    run = StagedUpdateRunFactory(placement=crp)
    cluster_url = reverse("inventory:cluster-detail", args=[cluster.pk])
    set_url = reverse("inventory:clusterset-detail", args=[cluster_set.pk])
    placement_url = reverse("placement:placement-detail", args=[placement.pk])
    clusters = ("Clusters", reverse("inventory:cluster-list"), False)
    sets = ("Cluster sets", reverse("inventory:clusterset-list"), False)
    placements = ("Placements", reverse("placement:placement-list"), False)
    hubs = ("Hubs", reverse("inventory:hub-list"), False)
    runs = ("Staged update runs", reverse("rollouts:run-list"), False)
    expected = {
        reverse("inventory:hub-detail", args=[hub.pk]): [
            hubs,
            (hub.name, reverse("inventory:hub-detail", args=[hub.pk]), True),
        ],
        cluster_url: [clusters, hub_step, (cluster.name, cluster_url, True)],
        reverse("inventory:cluster-taints", args=[cluster.pk]): [
            clusters,
            hub_step,
            (cluster.name, cluster_url, False),
            ("Taints", "", True),
        ],
        set_url: [sets, hub_step, (cluster_set.name, set_url, True)],
        reverse("inventory:clusterset-bind", args=[cluster_set.pk]): [
            sets,
            hub_step,
            (cluster_set.name, set_url, False),
            ("Bindings", "", True),
        ],
        reverse("inventory:clusterset-access", args=[cluster_set.pk]): [
            sets,
            hub_step,
            (cluster_set.name, set_url, False),
            ("Access", "", True),
        ],
        reverse("inventory:namespace-access", args=[hub.pk, "web"]): [
            hubs,
            hub_step,
            ("web", reverse("inventory:namespace-access", args=[hub.pk, "web"]), False),
            ("Access", "", True),
        ],
        reverse("inventory:rejected-list"): [hubs, ("Rejected hub objects", "", True)],
        placement_url: [placements, hub_step, (str(placement), placement_url, True)],
        reverse("placement:placement-edit", args=[placement.pk]): [
            placements,
            hub_step,
            (str(placement), placement_url, False),
            ("Edit spec", "", True),
        ],
        reverse("placement:placement-scores", args=[placement.pk]): [
            placements,
            hub_step,
            (str(placement), placement_url, False),
            ("Scores", "", True),
        ],
        reverse("placement:placement-tolerations", args=[placement.pk]): [
            placements,
            hub_step,
            (str(placement), placement_url, False),
            ("Tolerations", "", True),
        ],
        reverse("placement:placement-create"): [placements, ("New placement", "", True)],
        reverse("placement:placement-upload"): [placements, ("Upload manifests", "", True)],
        reverse("rollouts:run-detail", args=[run.pk]): [
            runs,
            hub_step,
            (run.name, reverse("rollouts:run-detail", args=[run.pk]), True),
        ],
        reverse("rollouts:run-create"): [runs, ("New run", "", True)],
        reverse("rollouts:strategy-list"): [runs, ("Strategies", "", True)],
        reverse("rollouts:strategy-create"): [
            runs,
            ("Strategies", reverse("rollouts:strategy-list"), False),
            ("New strategy", "", True),
        ],
    }
    posted = {
        reverse("inventory:cluster-taints", args=[cluster.pk]): rows_data(
            "taints", [], initial=0, action="add"
        ),
        reverse("inventory:clusterset-bind", args=[cluster_set.pk]): {"namespace": ""},
    }
    for url, steps in expected.items():
        assert trail(fleet, url, posted.get(url)) == steps, url


def test_top_level_pages_have_no_trail(fleet: Client) -> None:
    for name in (
        "home",
        "inventory:hub-list",
        "inventory:cluster-list",
        "placement:placement-list",
        "rollouts:run-list",
    ):
        assert 'aria-label="Breadcrumb"' not in fleet.get(reverse(name)).content.decode(), name
