"""Cluster sets pages: selector, member roll-up, bound namespaces, members paged, constant queries."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from inventory.models import ManagedCluster, ManagedClusterSet
from tests.factories import (
    AuditEntryFactory,
    ClusterSetMembershipFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    UserFactory,
)
from tests.pages import shown

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def user(db: None) -> User:
    """A superuser reads these pages; what roles hide from others is tested in test_roles_pages."""
    return UserFactory(username="alice", is_superuser=True)


def seed_sets(members: int) -> ManagedClusterSet:
    hub = HubFactory(name="ocm")
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    ManagedClusterSetFactory(
        hub=hub,
        name="gpu",
        selector_type=ManagedClusterSet.SelectorType.LABEL_SELECTOR,
        label_selector={"matchLabels": {"gpu": "true"}},
    )
    for index in range(members):
        availability = (
            ManagedCluster.Availability.UNAVAILABLE if index == 0 else ManagedCluster.Availability.AVAILABLE
        )
        cluster = ManagedClusterFactory(
            hub=hub, name=f"m-{index:03d}", availability=availability, stale=index == 1
        )
        ClusterSetMembershipFactory(cluster=cluster, cluster_set=prod)
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-a", name="prod")
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-b", name="prod")
    return prod


def test_clustersets_page_requires_login(client) -> None:
    assert client.get(reverse("inventory:clusterset-list")).status_code == 302


def test_clustersets_list_rollup_selectors_and_bindings(logged_in_client) -> None:
    seed_sets(3)
    response = logged_in_client.get(reverse("inventory:clusterset-list"))
    html = response.content.decode()
    rows = {s.name: s for s in shown(response)}
    assert rows["prod"].member_count == 3
    assert (rows["prod"].available_count, rows["prod"].unavailable_count, rows["prod"].stale_count) == (
        2,
        1,
        1,
    )
    assert rows["prod"].namespaces == ["team-a", "team-b"]
    assert rows["gpu"].member_count == 0 and rows["gpu"].namespaces == []
    assert "<code>cluster.open-cluster-management.io/clusterset=prod</code>" in html
    assert "<code>gpu in (true)</code>" in html or "<code>gpu=true</code>" in html
    assert "2 available" in html and "1 unavailable" in html and "1 stale" in html


def test_clustersets_sort_by_members_and_fragment(logged_in_client) -> None:
    seed_sets(2)
    response = logged_in_client.get(reverse("inventory:clusterset-list"), {"sort": "-members"}, **HTMX)
    assert [s.name for s in shown(response)] == ["prod", "gpu"]
    assert "<html" not in response.content.decode()


@pytest.mark.parametrize("count", [1, 200])
def test_clusterset_detail_query_count_does_not_grow(
    logged_in_client, django_assert_max_num_queries, count
) -> None:
    prod = seed_sets(count)
    AuditEntryFactory.create_batch(count, of=prod)
    # session, user, set + roll-up, member count, member page, memberships, decisions, bindings, hub choices,
    # and +1: the latest audit entries ("Recent changes")
    with django_assert_max_num_queries(11):
        response = logged_in_client.get(
            reverse("inventory:clusterset-detail", args=[prod.pk]), {"per_page": 500}
        )
    assert len(shown(response)) == count
    html = response.content.decode()
    assert "team-a" in html and "team-b" in html
    assert 'id="member-count">' + str(count) in html


def test_clusterset_detail_pages_and_filters_members(logged_in_client) -> None:
    prod = seed_sets(5)
    url = reverse("inventory:clusterset-detail", args=[prod.pk])
    second = logged_in_client.get(url, {"per_page": 2, "page": 2}, **HTMX)
    assert [c.name for c in shown(second)] == ["m-002", "m-003"]
    unavailable = logged_in_client.get(url, {"availability": "Unavailable"}, **HTMX)
    assert [c.name for c in shown(unavailable)] == ["m-000"]
    # the set is fixed on this page: no hub or set filter in its form
    assert 'name="cluster_set"' not in unavailable.content.decode()


def test_clustersets_query_count_does_not_grow(logged_in_client, django_assert_max_num_queries) -> None:
    hub = HubFactory(name="many")
    for index in range(60):
        ManagedClusterSetFactory(hub=hub, name=f"set-{index:02d}")
        ManagedClusterSetBindingFactory(hub=hub, namespace="ns", name=f"set-{index:02d}")
    with django_assert_max_num_queries(7):
        response = logged_in_client.get(reverse("inventory:clusterset-list"), {"per_page": 100})
    assert len(shown(response)) == 60
