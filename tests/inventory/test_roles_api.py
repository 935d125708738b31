"""The inventory API answers with what the caller's roles cover: lists narrowed, hidden ids 404."""

import pytest
from rest_framework.test import APIClient

from inventory.models import ClusterSetRole
from tests.factories import (
    AddOnPlacementScoreFactory,
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet() -> dict[str, object]:
    """prod = {p1, shared} bound to team-a, dev = {d1, shared} bound to team-b, scores for p1 and d1."""
    hub = HubFactory(name="east")
    rows: dict[str, object] = {}
    for set_name, namespace, own in (("prod", "team-a", "p1"), ("dev", "team-b", "d1")):
        rows[set_name] = ManagedClusterSetFactory(hub=hub, name=set_name)
        rows[own] = ManagedClusterFactory(hub=hub, name=own)
        ClusterSetMembershipFactory(cluster_set=rows[set_name], cluster=rows[own])
        rows[f"{namespace}-binding"] = ManagedClusterSetBindingFactory(
            hub=hub, namespace=namespace, name=set_name
        )
        rows[f"{own}-score"] = AddOnPlacementScoreFactory(hub=hub, namespace=own)
    rows["shared"] = ManagedClusterFactory(hub=hub, name="shared")
    for set_name in ("prod", "dev"):
        ClusterSetMembershipFactory(cluster_set=rows[set_name], cluster=rows["shared"])
    return rows


@pytest.fixture
def api(fleet) -> APIClient:
    """Token-style access of a user who may view prod."""
    user = UserFactory(username="viewer")
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=ClusterSetRole.Role.VIEW, user=user)
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize(
    ("url", "field", "visible"),
    [
        ("/api/clusters/", "name", {"p1", "shared"}),
        ("/api/cluster-sets/", "name", {"prod"}),
        ("/api/cluster-set-bindings/", "namespace", {"team-a"}),
        ("/api/addon-placement-scores/", "cluster", {"p1"}),
    ],
)
def test_lists_are_narrowed(api, url, field, visible) -> None:
    body = api.get(url).json()
    assert body["count"] == len(visible)
    assert {row[field] for row in body["results"]} == visible


@pytest.mark.parametrize(
    ("url", "shown", "hidden"),
    [
        ("/api/clusters/{}/", "p1", "d1"),
        ("/api/cluster-sets/{}/", "prod", "dev"),
        ("/api/cluster-set-bindings/{}/", "team-a-binding", "team-b-binding"),
        ("/api/addon-placement-scores/{}/", "p1-score", "d1-score"),
    ],
)
def test_hidden_details_are_404(api, fleet, url, shown, hidden) -> None:
    assert api.get(url.format(fleet[shown].pk)).status_code == 200
    response = api.get(url.format(fleet[hidden].pk))
    assert response.status_code == 404
    assert fleet[hidden].name not in response.content.decode()


def test_a_cluster_names_only_the_sets_the_caller_sees(api, fleet) -> None:
    body = api.get(f"/api/clusters/{fleet['shared'].pk}/").json()
    assert "dev" not in str(body) and "prod" in str(body)


def test_a_user_without_roles_gets_empty_lists(fleet) -> None:
    client = APIClient()
    client.force_authenticate(UserFactory(username="stranger"))
    assert client.get("/api/clusters/").json()["count"] == 0
    assert client.get(f"/api/cluster-sets/{fleet['prod'].pk}/").status_code == 404
    # a hub is shown to who holds a role on one of its sets or namespaces
    assert client.get("/api/hubs/").json()["count"] == 0
