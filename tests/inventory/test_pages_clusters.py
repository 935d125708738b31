"""Clusters pages: login, filters, sort, paging, htmx fragments, the detail page, query-count baselines."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from inventory.models import ManagedCluster
from tests.factories import (
    AddOnPlacementScoreFactory,
    AuditEntryFactory,
    ClusterResourceBindingFactory,
    ClusterSetMembershipFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    PlacementDecisionFactory,
    PlacementFactory,
    UserFactory,
)
from tests.pages import shown

pytestmark = pytest.mark.django_db

UNREACHABLE = "cluster.open-cluster-management.io/unreachable"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def user(db: None) -> User:
    """A superuser reads these pages; what roles hide from others is tested in test_roles_pages."""
    return UserFactory(username="alice", is_superuser=True)


def seed_fleet(count: int) -> list[ManagedCluster]:
    """`count` OCM clusters in two sets, half tainted, all selected by two placements; one Fleet member."""
    hub = HubFactory(name="east", serves_fleet=True)
    prod, dev = ManagedClusterSetFactory(hub=hub, name="prod"), ManagedClusterSetFactory(hub=hub, name="dev")
    clusters = []
    for index in range(count):
        tainted = index % 2 == 0
        cluster = ManagedClusterFactory(
            hub=hub,
            name=f"c-{index:04d}",
            labels={"region": "us-west-1" if tainted else "eu-1", "vendor": "OpenShift"},
            taints=[{"key": UNREACHABLE, "effect": "NoSelect"}] if tainted else [],
            taint_keys=f",{UNREACHABLE}," if tainted else "",
            cpu_allocatable=float(index + 1),
            memory_allocatable=float((index + 1) * 2**30),
        )
        ClusterSetMembershipFactory(cluster=cluster, cluster_set=prod if tainted else dev)
        clusters.append(cluster)
    names = [c.name for c in clusters]
    for placement_name in ("web", "db"):
        PlacementDecisionFactory(placement=PlacementFactory(hub=hub, name=placement_name), clusters=names)
    member = ManagedClusterFactory(hub=hub, name="member-1", kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    ClusterResourceBindingFactory(placement__hub=hub, target=member.name)
    return clusters


def test_clusters_page_requires_login(client) -> None:
    response = client.get(reverse("inventory:cluster-list"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_clusters_page_lists_columns(logged_in_client) -> None:
    seed_fleet(3)
    html = logged_in_client.get(reverse("inventory:cluster-list")).content.decode()
    assert "c-0000" in html and "member-1" in html
    assert ">prod</a>" in html and ">dev</a>" in html
    assert '<span class="chip">region=us-west-1</span>' in html
    assert f'<span class="chip taint" title="NoSelect">{UNREACHABLE}</span>' in html
    assert '<td class="number">3</td>' in html  # cpu of c-0002
    assert '<td class="number">3Gi</td>' in html
    assert html.count('<td class="number placements">2</td>') == 3
    assert html.count('<td class="number placements">1</td>') == 1  # the Fleet member, by its binding
    assert 'src="/static/vendor/htmx/htmx.min.js"' in html


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "region=us-west-1"}, {"c-0000", "c-0002"}),
        ({"q": "region notin (us-west-1),vendor"}, {"c-0001", "c-0003", "member-1"}),
        ({"cluster_set": "dev"}, {"c-0001", "c-0003"}),
        ({"taint": UNREACHABLE}, {"c-0000", "c-0002"}),
        ({"kind": "MemberCluster"}, {"member-1"}),
        ({"hub": "east", "availability": "Available", "q": "region=us-east-1"}, {"member-1"}),
    ],
)
def test_filters_select_clusters(logged_in_client, params: dict, expected: set[str]) -> None:
    seed_fleet(4)
    response = logged_in_client.get(reverse("inventory:cluster-list"), params, **HTMX)
    names = {c.name for c in shown(response)}
    assert names == expected


def test_htmx_request_gets_only_the_fragment(logged_in_client) -> None:
    seed_fleet(2)
    full = logged_in_client.get(reverse("inventory:cluster-list")).content.decode()
    fragment = logged_in_client.get(reverse("inventory:cluster-list"), **HTMX).content.decode()
    assert "<html" in full and "<html" not in fragment
    assert 'id="clusters"' in fragment and 'class="filters"' in fragment


def test_bad_selector_is_a_form_error_with_400(logged_in_client) -> None:
    seed_fleet(2)
    response = logged_in_client.get(reverse("inventory:cluster-list"), {"q": "region in (a"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 400
    assert "q: invalid label selector: unable to parse requirement" in html
    assert 'value="region in (a"' in html  # what the user typed is kept
    assert 'id="clusters"' not in html


def test_sort_by_cpu_descending_and_page(logged_in_client) -> None:
    seed_fleet(7)
    url = reverse("inventory:cluster-list")
    first = logged_in_client.get(url, {"sort": "-cpu", "per_page": 3, "kind": "ManagedCluster"})
    assert [c.name for c in shown(first)] == ["c-0006", "c-0005", "c-0004"]
    html = first.content.decode()
    assert 'aria-sort="descending"' in html
    assert "Page 1 of 3" in html
    assert "sort=-cpu&amp;per_page=3&amp;kind=ManagedCluster&amp;page=2" in html
    third = logged_in_client.get(url, {"sort": "-cpu", "per_page": 3, "kind": "ManagedCluster", "page": 3})
    assert [c.name for c in shown(third)] == ["c-0000"]


def test_per_page_is_capped(logged_in_client) -> None:
    seed_fleet(1)
    response = logged_in_client.get(reverse("inventory:cluster-list"), {"per_page": 100000})
    assert response.context["table"].paginator.per_page == 500


def test_unknown_sort_is_a_form_error(logged_in_client) -> None:
    response = logged_in_client.get(reverse("inventory:cluster-list"), {"sort": "labels"})
    assert response.status_code == 400
    assert "sort: Select a valid choice" in response.content.decode()


@pytest.mark.parametrize("count", [1, 200])
def test_cluster_list_query_count_does_not_grow(
    logged_in_client, django_assert_max_num_queries, count
) -> None:
    seed_fleet(count)
    # session, user, count, page, memberships, decisions, bindings, hub choices of the form, the
    # approvals badge of the nav bar
    with django_assert_max_num_queries(9):
        response = logged_in_client.get(reverse("inventory:cluster-list"), {"per_page": 500, "q": "vendor"})
    assert len(shown(response)) == count + 1


def test_cluster_detail_shows_everything(logged_in_client) -> None:
    clusters = seed_fleet(2)
    cluster = clusters[0]
    cluster.claims = [{"name": "platform.open-cluster-management.io", "value": "AWS"}]
    cluster.taints = [{"key": UNREACHABLE, "effect": "NoSelect", "timeAdded": "2026-11-20T11:00:00Z"}]
    cluster.conditions = [{"type": "ManagedClusterConditionAvailable", "status": "True", "reason": "Ok"}]
    cluster.save()
    now = timezone.now()
    AddOnPlacementScoreFactory(
        hub=cluster.hub, namespace=cluster.name, name="fresh", valid_until=now + timedelta(hours=1)
    )
    AddOnPlacementScoreFactory(
        hub=cluster.hub, namespace=cluster.name, name="old", valid_until=now - timedelta(hours=1)
    )
    response = logged_in_client.get(reverse("inventory:cluster-detail", args=[cluster.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "platform.open-cluster-management.io" in html and "AWS" in html
    assert "2026-11-20T11:00:00Z" in html
    assert "ManagedClusterConditionAvailable" in html
    assert '<tr class="expired"><td><code>old</code>' in html
    assert "<tr><td><code>fresh</code>" in html
    assert ">prod</a>" in html
    assert {p.name for p in response.context["placements"]} == {"web", "db"}
    assert "<td>cpu</td><td>8</td><td>10</td>" in html


def test_member_cluster_detail_shows_fleet_properties_and_binding(logged_in_client) -> None:
    seed_fleet(1)
    member = ManagedCluster.objects.get(name="member-1")
    member.properties = {
        "kubernetes-fleet.io/node-count": {"value": "5", "observationTime": "2026-11-20T11:59:30Z"}
    }
    member.resource_usage = {"allocatable": {"cpu": "7", "memory": "28Gi"}}
    member.save()
    html = logged_in_client.get(reverse("inventory:cluster-detail", args=[member.pk])).content.decode()
    assert "kubernetes-fleet.io/node-count" in html and "<td>5</td>" in html
    assert '<span class="chip">cpu=7</span>' in html
    assert "Fleet ClusterResourcePlacement" in html


def test_cluster_detail_query_count_is_constant(logged_in_client, django_assert_max_num_queries) -> None:
    cluster = seed_fleet(3)[0]
    AuditEntryFactory.create_batch(12, of=cluster)
    with CaptureQueriesContext(connection) as queries:
        response = logged_in_client.get(reverse("inventory:cluster-detail", args=[cluster.pk]))
    assert len(response.context["recent_changes"]) == 10
    # one of them the approvals badge of the nav bar; +0 for "Recent changes": it takes the place of the
    # taint section's own list of the cluster's latest entries, the one audit query the page had
    assert len(queries) <= 9
