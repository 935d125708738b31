"""The inventory REST API: list/filter/detail, 400s naming the field, permissions, sync, schema and docs."""

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import ManagedCluster, SyncRun
from tests.factories import (
    AddOnPlacementScoreFactory,
    ClusterSetMembershipFactory,
    DemoHubRowFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    NamespaceRoleFactory,
    PlacementDecisionFactory,
    SyncRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/hubs/",
    "/api/clusters/",
    "/api/cluster-sets/",
    "/api/cluster-set-bindings/",
    "/api/addon-placement-scores/",
    "/api/sync-runs/",
]


@pytest.fixture
def user(db: None) -> User:
    """A superuser reads the API here; what roles hide from others is tested in test_roles_api."""
    return UserFactory(username="alice", is_superuser=True)


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def staff_api() -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory(username="ops", is_staff=True))
    return client


def seed() -> ManagedCluster:
    hub = HubFactory(name="east")
    hub.set_credentials({"token": "s3cr3t-token"})
    hub.save()
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    cluster = ManagedClusterFactory(
        hub=hub, name="a", labels={"cluster.open-cluster-management.io/clusterset": "prod"}
    )
    ManagedClusterFactory(hub=hub, name="b", labels={"region": "eu"})
    ClusterSetMembershipFactory(cluster=cluster, cluster_set=prod)
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-a", name="prod")
    PlacementDecisionFactory(placement__hub=hub, clusters=["a"])
    AddOnPlacementScoreFactory(hub=hub, namespace="a")
    SyncRunFactory(hub=hub)
    return cluster


@pytest.mark.parametrize("url", ENDPOINTS)
def test_anonymous_is_refused(url: str) -> None:
    assert APIClient().get(url).status_code == 401


@pytest.mark.parametrize("url", ENDPOINTS)
def test_every_endpoint_lists_paginated(api, url: str) -> None:
    seed()
    body = api.get(url).json()
    assert body["count"] >= 1 and isinstance(body["results"], list)


def test_hubs_never_return_credentials(api) -> None:
    seed()
    body = api.get("/api/hubs/").content.decode()
    assert "s3cr3t" not in body and "encrypted" not in body and "sync_lock" not in body
    hub = api.get("/api/hubs/").json()["results"][0]
    assert (hub["cluster_count"], hub["set_count"], hub["latest_run"]["state"]) == (2, 1, "succeeded")


def test_clusters_filter_by_selector_and_show_sets_and_placements(api) -> None:
    cluster = seed()
    body = api.get("/api/clusters/", {"q": "cluster.open-cluster-management.io/clusterset=prod"}).json()
    assert [c["name"] for c in body["results"]] == ["a"]
    assert body["results"][0]["cluster_sets"] == [
        {"id": cluster.memberships.get().cluster_set_id, "name": "prod"}
    ]
    assert body["results"][0]["placement_count"] == 1
    detail = api.get(f"/api/clusters/{cluster.pk}/").json()
    assert detail["name"] == "a" and detail["placement_count"] == 1 and detail["hub"] == "east"


@pytest.mark.parametrize(
    ("params", "field", "reason"),
    [
        ({"q": "region in (a"}, "q", "invalid label selector: unable to parse requirement"),
        ({"taint": "Bad Key"}, "taint", "invalid taint key"),
        ({"sort": "labels"}, "sort", "Select a valid choice"),
        ({"availability": "Sleepy"}, "availability", "Select a valid choice"),
        ({"hub": "nowhere"}, "hub", "Select a valid choice"),
    ],
)
def test_bad_filters_answer_400_naming_the_field(api, params: dict, field: str, reason: str) -> None:
    seed()
    response = api.get("/api/clusters/", params)
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert reason in response.json()[field][0]


def test_per_page_and_max(api) -> None:
    hub = HubFactory()
    ManagedClusterFactory.create_batch(3, hub=hub)
    assert len(api.get("/api/clusters/", {"per_page": 2}).json()["results"]) == 2
    assert len(api.get("/api/clusters/", {"per_page": 100000}).json()["results"]) == 3


@pytest.mark.parametrize("count", [1, 200])
def test_cluster_api_query_count_does_not_grow(api, django_assert_max_num_queries, count: int) -> None:
    hub = HubFactory()
    prod = ManagedClusterSetFactory(hub=hub)
    for index in range(count):
        ClusterSetMembershipFactory(cluster_set=prod, cluster__name=f"c-{index:03d}")
    PlacementDecisionFactory(placement__hub=hub, clusters=[f"c-{index:03d}" for index in range(count)])
    with django_assert_max_num_queries(5):
        body = api.get("/api/clusters/", {"per_page": 500}).json()
    assert len(body["results"]) == count and {c["placement_count"] for c in body["results"]} == {1}


def test_cluster_sets_member_counts_and_namespaces(api) -> None:
    seed()
    body = api.get("/api/cluster-sets/", {"hub": "east"}).json()
    row = body["results"][0]
    assert (row["name"], row["member_count"], row["available_count"]) == ("prod", 1, 1)
    assert row["bound_namespaces"] == ["team-a"]
    assert row["selector"] == "cluster.open-cluster-management.io/clusterset=prod"


def test_addon_scores_filter_by_cluster(api) -> None:
    seed()
    body = api.get("/api/addon-placement-scores/", {"cluster": "a", "expired": "false"}).json()
    assert [(s["cluster"], s["expired"]) for s in body["results"]] == [("a", False)]


def test_sync_needs_staff(api) -> None:
    hub = HubFactory()
    assert api.post(f"/api/hubs/{hub.pk}/sync/").status_code == 403
    assert APIClient().post(f"/api/hubs/{hub.pk}/sync/").status_code == 401
    assert not SyncRun.objects.exists()


def test_sync_with_session_needs_csrf() -> None:
    hub = HubFactory()
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="ops", is_staff=True))
    response = client.post(f"/api/hubs/{hub.pk}/sync/")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]


def test_staff_sync_runs_against_the_demo_hub(staff_api, api, demo_hub, tasks_in_process) -> None:
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    assert staff_api.post(f"/api/hubs/{hub.pk}/sync/").status_code == 404  # a hub staff cannot see
    # a role in one of the hub's namespaces shows staff the hub, and they may start its sync
    NamespaceRoleFactory(hub=hub, namespace="ops", user=User.objects.get(username="ops"))
    response = staff_api.post(f"/api/hubs/{hub.pk}/sync/")
    assert response.status_code == 202
    body = response.json()
    # the run itself is operator data, for superusers
    assert body["status"] == "accepted" and body["latest_run"] is None
    assert api_clusters(api, hub.name) >= 24


def api_clusters(client: APIClient, hub: str) -> int:
    return client.get("/api/clusters/", {"hub": hub}).json()["count"]


def test_schema_lists_the_endpoints(api) -> None:
    response = api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = response.json()["paths"]
    for url in ENDPOINTS:
        assert url in paths and f"{url}{{id}}/" in paths
    assert "post" in paths["/api/hubs/{id}/sync/"]
    assert "q" in {p["name"] for p in paths["/api/clusters/"]["get"]["parameters"]}


def test_docs_ui_is_served_from_local_static(client: Client) -> None:
    html = client.get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert 'src="http' not in html and 'href="http' not in html  # no CDN
    assert "<script>" not in html  # the start script is a file of its own: the policy allows no inline script
    names = ("swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "favicon-32x32.png")
    for name in names:
        assert finders.find(f"drf_spectacular_sidecar/swagger-ui-dist/{name}"), name
