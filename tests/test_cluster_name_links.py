"""Clusters named by other objects are links too: a score table row, an OCM decision and a Fleet binding
link to the cluster's page through `cluster-by-name` (hub, kind, name), which finds the row for the user's
roles; a name the hub left empty stays text instead of failing the page."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import ManagedCluster
from inventory.tables import cluster_link
from placement.models import Placement
from tests.factories import (
    ClusterResourceBindingFactory,
    HubFactory,
    ManagedClusterFactory,
    PlacementDecisionFactory,
    PlacementFactory,
)
from tests.placement_pages.explanations import ocm_explanation_for

pytestmark = pytest.mark.django_db


def by_name(cluster: ManagedCluster) -> str:
    return reverse("inventory:cluster-by-name", args=[cluster.hub_id, cluster.kind, cluster.name])


def test_a_named_cluster_leads_to_its_page(admin_client: Client) -> None:
    cluster = ManagedClusterFactory(name="east-1")
    response = admin_client.get(by_name(cluster))
    assert response.status_code == 302
    assert response["Location"] == reverse("inventory:cluster-detail", args=[cluster.pk])


def test_an_unknown_or_hidden_cluster_is_not_found(client: Client, admin_client: Client) -> None:
    cluster = ManagedClusterFactory(name="east-1")
    wrong_kind = reverse("inventory:cluster-by-name", args=[cluster.hub_id, "MemberCluster", "east-1"])
    assert admin_client.get(wrong_kind).status_code == 404
    assert (
        admin_client.get(by_name(ManagedClusterFactory.build(hub=cluster.hub, name="gone"))).status_code
        == 404
    )
    client.force_login(User.objects.create_user("nobody"))  # no role: the cluster is not theirs to see
    assert client.get(by_name(cluster)).status_code == 404


def test_an_empty_name_or_one_with_a_slash_renders_without_failing() -> None:
    hub = HubFactory()
    assert cluster_link(hub.pk, "ManagedCluster", "") == ""
    assert 'href="/clusters/named/' in cluster_link(hub.pk, "ManagedCluster", "a/b<i>")
    assert "&lt;i&gt;" in cluster_link(hub.pk, "ManagedCluster", "a/b<i>")


def test_the_score_table_links_every_cluster(admin_client: Client) -> None:
    placement = PlacementFactory(explanation=ocm_explanation_for(4))
    scored = ManagedClusterFactory(hub=placement.hub, name="c-0001")
    html = admin_client.get(reverse("placement:placement-scores", args=[placement.pk])).content.decode()
    for index in range(4):
        url = reverse(
            "inventory:cluster-by-name", args=[placement.hub_id, "ManagedCluster", f"c-{index:04d}"]
        )
        assert f'<a href="{url}">c-{index:04d}</a>' in html
    assert admin_client.get(by_name(scored))["Location"] == scored.get_absolute_url()


def test_decisions_and_bindings_link_their_clusters(admin_client: Client) -> None:
    ocm = PlacementFactory()
    ManagedClusterFactory(hub=ocm.hub, name="east-1")
    PlacementDecisionFactory(placement=ocm, name="d-0", clusters=["east-1", ""])
    html = admin_client.get(reverse("placement:placement-detail", args=[ocm.pk])).content.decode()
    east = ManagedCluster.objects.get(hub=ocm.hub, name="east-1")
    assert f'<a href="{by_name(east)}">east-1</a>' in html

    crp = PlacementFactory(hub=ocm.hub, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace="")
    member = ManagedClusterFactory(hub=ocm.hub, name="member-1", kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    ClusterResourceBindingFactory(placement=crp, target="member-1")
    html = admin_client.get(reverse("placement:placement-detail", args=[crp.pk])).content.decode()
    assert f'<a href="{by_name(member)}">member-1</a>' in html
