"""A logged-in user without any role reads nothing: every GET endpoint of the OpenAPI schema (each list,
and each detail of a real object) and every page that counts rows, against a world that holds one row of
every model an endpoint serves. Answers are empty lists, 403 or 404; no body names a hub, a cluster, a
set, a namespace or a placement, nor counts them. A user with a role on the hub reads the hub, but not
its sync errors or runs (operator data)."""

import re
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.db import models
from django.test import Client
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    ClusterSetRole,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
    RejectedObject,
    SyncRun,
)
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun, StagedUpdateStrategy
from tests.factories import (
    AddOnPlacementScoreFactory,
    AuditEntryFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    NamespaceRoleFactory,
    PlacementDecisionFactory,
    PlacementFactory,
    StagedUpdateStrategyFactory,
    SyncRunFactory,
    UserFactory,
)
from tests.placement.runs_support import approval_request, cluster_set

pytestmark = pytest.mark.django_db

# Every seeded name carries this mark: a body that contains it reveals a row.
SECRET = "hushed"
HUB = f"{SECRET}-hub"
# The first path segment of each endpoint -> the model whose row its {id} names.
ENDPOINT_MODELS: dict[str, type[models.Model]] = {
    "hubs": Hub,
    "clusters": ManagedCluster,
    "cluster-sets": ManagedClusterSet,
    "cluster-set-bindings": ManagedClusterSetBinding,
    "addon-placement-scores": AddOnPlacementScore,
    "sync-runs": SyncRun,
    "rejected-objects": RejectedObject,
    "cluster-set-roles": ClusterSetRole,
    "namespace-roles": NamespaceRole,
    "audit": AuditEntry,
    "placements": Placement,
    "approvals": ApprovalRequest,
    "runs": StagedUpdateRun,
    "strategies": StagedUpdateStrategy,
}
PAGES_WITH_COUNTS = (
    "home",
    "inventory:hub-list",
    "inventory:cluster-list",
    "inventory:clusterset-list",
    "inventory:audit-list",
    "placement:placement-list",
    "rollouts:run-list",
    "rollouts:strategy-list",
    "rollouts:approval-list",
)
# a count shown next to a heading, as the list pages render it
COUNT = re.compile(r'class="count"[^>]*>\s*([1-9]\d*)')


@dataclass
class World:
    hub: Hub
    owner: User


@pytest.fixture(name="world")
def world_fixture(db: None) -> World:
    """One row of every model an endpoint serves, on a hub whose every name is marked SECRET, and the
    roles of its owner (another user)."""
    hub = HubFactory(
        name=HUB, publish_namespace=f"{SECRET}-argocd", last_sync_error=f"{SECRET}: connection refused"
    )
    prod = cluster_set(hub, f"{SECRET}-set", [f"{SECRET}-c1", f"{SECRET}-c2"])
    namespace = f"{SECRET}-team"
    ManagedClusterSetBindingFactory(hub=hub, namespace=namespace, name=prod.name, cluster_set=prod.name)
    AddOnPlacementScoreFactory(hub=hub, namespace=f"{SECRET}-c1", name=f"{SECRET}-score")
    placement = PlacementFactory(hub=hub, namespace=namespace, name=f"{SECRET}-shop", spec={})
    PlacementDecisionFactory(placement=placement, name=f"{SECRET}-shop-decision-1")
    StagedUpdateStrategyFactory(hub=hub, name=f"{SECRET}-strategy")
    approval_request(hub, f"{SECRET}-rollout", [f"{SECRET}-c1"], owner=Owner.HUB)
    run = SyncRunFactory(hub=hub, error=f"{SECRET}: forbidden")
    RejectedObject.objects.create(
        hub=hub, sync_run=run, kind="ManagedCluster", identity="0" * 64, name=f"{SECRET}-bad", reason="bad"
    )
    owner = UserFactory(username=f"{SECRET}-owner")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=owner)
    NamespaceRoleFactory(hub=hub, namespace=namespace, role=NamespaceRole.Role.ADMIN, user=owner)
    AuditEntryFactory(actor=owner, of=placement, action="placement.spec")
    return World(hub, owner)


def get_endpoints() -> list[str]:
    """The paths of every GET operation of the OpenAPI schema, as the schema view serves it."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(path for path, operations in schema["paths"].items() if "get" in operations)


def concrete(path: str) -> str:
    """The path with its {id} the pk of a real row of the endpoint's model."""
    if "{id}" not in path:
        return path
    model = ENDPOINT_MODELS[path.split("/")[2]]
    row = model._default_manager.order_by("pk").first()
    assert row is not None, f"the world has no {model.__name__} for {path}"
    return path.replace("{id}", str(row.pk))


def assert_reveals_nothing(body: str, where: str) -> None:
    assert SECRET not in body, f"{where} names a hidden row: ...{body[body.find(SECRET) - 200 :][:400]}..."
    assert not COUNT.search(body), f"{where} counts hidden rows: {COUNT.search(body).group(0)}"


@pytest.fixture(name="nobody")
def nobody_fixture(client: Client) -> Client:
    client.force_login(UserFactory(username="nobody"))
    return client


def test_the_schema_lists_the_endpoints_this_test_knows(world: World) -> None:
    endpoints = get_endpoints()
    assert {path.split("/")[2] for path in endpoints} == set(ENDPOINT_MODELS)
    assert any("{id}" in path for path in endpoints) and any("{id}" not in path for path in endpoints)


@pytest.mark.parametrize("path", get_endpoints())
def test_no_role_reads_nothing_through_the_api(world: World, nobody: Client, path: str) -> None:
    response = nobody.get(concrete(path))
    body = response.content.decode()
    if "{id}" in path:
        assert response.status_code in (403, 404), (response.status_code, body[:300])
    else:
        assert response.status_code == 200, (response.status_code, body[:300])
        assert response.json()["count"] == 0 and response.json()["results"] == []
    assert_reveals_nothing(body, path)


@pytest.mark.parametrize("name", PAGES_WITH_COUNTS)
def test_no_role_sees_no_row_and_no_count_on_the_pages(world: World, nobody: Client, name: str) -> None:
    response = nobody.get(reverse(name))
    assert response.status_code == 200
    assert_reveals_nothing(response.content.decode(), name)


def test_no_role_opens_no_hub_page_and_no_namespace(world: World, nobody: Client) -> None:
    for url in (
        reverse("inventory:hub-detail", args=[world.hub.pk]),
        reverse("inventory:hub-row", args=[world.hub.pk]),
        reverse("inventory:namespace-access", args=[world.hub.pk, f"{SECRET}-team"]),
    ):
        response = nobody.get(url)
        assert response.status_code == 404, url
        assert_reveals_nothing(response.content.decode(), url)


def test_a_role_on_the_hub_shows_it_without_its_sync_errors_and_runs(world: World, client: Client) -> None:
    viewer = UserFactory(username="viewer")
    NamespaceRoleFactory(hub=world.hub, namespace=f"{SECRET}-team", role=NamespaceRole.Role.VIEW, user=viewer)
    client.force_login(viewer)
    hubs = client.get(reverse("inventory-api:hub-list")).json()["results"]
    assert [(h["name"], h["last_sync_error"], h["latest_run"]) for h in hubs] == [(HUB, "", None)]
    # a namespace role shows the namespace's placements, not the clusters of the sets bound there
    assert (hubs[0]["cluster_count"], hubs[0]["set_count"]) == (0, 0)
    assert client.get(reverse("inventory-api:sync-run-list")).json()["count"] == 0
    page = client.get(reverse("inventory:hub-list")).content.decode()
    assert HUB in page and "connection refused" not in page and "forbidden" not in page
    detail = client.get(reverse("inventory:hub-detail", args=[world.hub.pk])).content.decode()
    assert f"{SECRET}-team" in detail and "connection refused" not in detail
    argocd = client.get(reverse("placement-api:hub-argocd-configmap", args=[world.hub.pk]))
    assert argocd.status_code == 200
