"""The permission matrix of issue 6 §4: every mutating page and API endpoint, tried by four principals.

- anonymous: pages redirect to the login page, the API answers 401;
- view role on the set the object belongs to: 403 (the object is visible, the change is not allowed);
- admin of a set of another hub: 403 or 404 (the object is not even visible; a request body naming a set
  the user cannot see is refused as if it were absent: 400 "does not exist" / "not found" on that field);
- admin of the set: allowed — past authorisation, whatever the handler then answers (a created object,
  a form or field error, or 502 when the write reaches hub east, which no server answers).

A refused request changes nothing: no audit entry with outcome "ok" appears.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.models import AuditEntry, ClusterSetRole, Hub, ManagedCluster, ManagedClusterSet
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    PlacementFactory,
    StagedUpdateRunFactory,
    StagedUpdateStrategyFactory,
    UserFactory,
)
from tests.placement.runs_support import approval_request, cluster_set

ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
PROD = ["c-1", "c-2"]
API, INV = "placement-api:", "inventory-api:"
OCM_SPEC = {"clusterSets": ["prod"], "numberOfClusters": 1}
CRP_SPEC = {"policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}
TAINT = {"key": "maintenance", "value": "", "effect": "NoSelect"}
CART = b"""apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: cart, namespace: web}
spec: {clusterSets: [prod]}
"""
TOLERATION = {"key": "maintenance", "operator": "Exists"}


@dataclass
class World:
    """Hub east: set prod (c-1, c-2) bound to namespace web, an OCM Placement web/shop, an External CRP
    checkout with a strategy, a running run and a pending approval; hub west: set other (w-1)."""

    east: Hub
    prod: ManagedClusterSet
    cluster: ManagedCluster
    shop: Placement
    checkout: Placement
    run: StagedUpdateRun
    approval: ApprovalRequest
    binding_pk: int
    role_pk: int


@pytest.fixture(name="world")
def world_fixture(db: None, tasks_in_process: None) -> World:
    # port 9 (discard) refuses connections at once: writes to the hub fail fast with 502
    east = HubFactory(name="east", server_url="http://127.0.0.1:9", serves_fleet=True)
    prod = cluster_set(east, "prod", PROD)
    binding = ManagedClusterSetBindingFactory(hub=east, namespace="web", name="prod")
    cluster_set(HubFactory(name="west"), "other", ["w-1"])
    owned = {"hub": east, "owner": Owner.DASHBOARD}
    shop = PlacementFactory(**owned, namespace="web", name="shop", spec=OCM_SPEC)
    checkout = PlacementFactory(
        **owned, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace="", name="checkout", spec=CRP_SPEC
    )
    StagedUpdateStrategyFactory(hub=east, owner=Owner.DASHBOARD, name="strategy")
    run = StagedUpdateRunFactory(placement=checkout, owner=Owner.DASHBOARD, name="checkout-1")
    approval = approval_request(east, "checkout-2-prod", PROD, owner=Owner.DASHBOARD)
    holder = ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=UserFactory(username="bystander"))
    return World(
        east, prod, ManagedCluster.objects.get(hub=east, name="c-1"), shop, checkout, run, approval,
        binding.pk, holder.pk,
    )


def principal(name: str, world: World) -> User | None:
    if name == "anonymous":
        return None
    user = UserFactory(username=name)
    if name == "other-admin":
        ClusterSetRoleFactory(cluster_set=ManagedClusterSet.objects.get(name="other"), role=ADMIN, user=user)
    else:
        ClusterSetRoleFactory(cluster_set=world.prod, role=ADMIN if name == "admin" else VIEW, user=user)
    return user


@dataclass(frozen=True)
class Case:
    """One mutating request: `path` and `body` from the world; `api` requests are JSON."""

    name: str
    method: str
    path: Callable[[World], str]
    body: Callable[[World], dict[str, Any]]
    api: bool = False


def url(name: str, *attributes: str) -> Callable[[World], str]:
    """reverse(name) with the pks of these World attributes (or the literal pk fields ending in _pk)."""
    def path(world: World) -> str:
        args = [getattr(world, a) if a.endswith("_pk") else getattr(world, a).pk for a in attributes]
        return reverse(name, args=args)

    return path


def empty(world: World) -> dict[str, Any]:
    return {}


def tolerations_form(world: World) -> dict[str, Any]:
    rows = {"tolerations-TOTAL_FORMS": "1", "tolerations-INITIAL_FORMS": "0"}
    return {**rows, **{f"tolerations-0-{k}": v for k, v in TOLERATION.items()}, "action": "save"}


def taints_form(world: World) -> dict[str, Any]:
    rows = {"taints-TOTAL_FORMS": "1", "taints-INITIAL_FORMS": "0"}
    return {**rows, **{f"taints-0-{k}": v for k, v in TAINT.items()}, "action": "save"}


CASES = [
    # pages (POST with the session and CSRF)
    Case("page: new placement", "post", url("placement:placement-create"),
         lambda w: {"kind": Placement.Kind.PLACEMENT, "hub": w.east.pk, "namespace": "web", "name": "cart",
                    "spec": "clusterSets: [prod]\n"}),
    Case("page: edit spec", "post", url("placement:placement-edit", "shop"),
         lambda w: {"spec": "clusterSets: [prod]\nnumberOfClusters: 2\n"}),
    Case("page: upload manifests", "post", url("placement:placement-upload"),
         lambda w: {"hub": w.east.pk, "manifests": SimpleUploadedFile("cart.yaml", CART)}),
    Case("page: tolerations", "post", url("placement:placement-tolerations", "shop"), tolerations_form),
    Case("page: roll out a snapshot", "post", url("placement:placement-rollout", "checkout"), empty),
    Case("page: run state", "post", url("placement:run-state", "run"), lambda w: {"state": "Run"}),
    Case("page: new run", "post", url("placement:run-create"),
         lambda w: {"hub": w.east.pk, "name": "checkout-9", "placement_name": "checkout",
                    "strategy_name": "strategy", "state": "Initialize"}),
    Case("page: new strategy", "post", url("placement:strategy-create"),
         lambda w: {"hub": w.east.pk, "name": "s2", "spec": "stages: [{name: all}]\n"}),
    Case("page: approve", "post", url("placement:approval-approve", "approval"), empty),
    Case("page: taints", "post", url("inventory:cluster-taints", "cluster"), taints_form),
    Case("page: bind a set", "post", url("inventory:clusterset-bind", "prod"),
         lambda w: {"namespace": "ops"}),
    Case("page: unbind a set", "post", url("inventory:clusterset-unbind", "prod", "binding_pk"), empty),
    Case("page: grant a role", "post", url("inventory:clusterset-access", "prod"),
         lambda w: {"kind": "user", "name": "bystander2", "role": VIEW}),
    Case("page: change a role", "post", url("inventory:clusterset-access-change", "prod", "role_pk"),
         lambda w: {"role": ADMIN}),
    Case("page: remove a role", "post", url("inventory:clusterset-access-remove", "prod", "role_pk"), empty),
    # the API (JSON; session or token)
    Case("api: create placement", "post", url(API + "placement-list"),
         lambda w: {"kind": Placement.Kind.PLACEMENT, "hub": "east", "namespace": "web", "name": "cart",
                    "spec": OCM_SPEC}, api=True),
    Case("api: patch placement", "patch", url(API + "placement-detail", "shop"),
         lambda w: {"spec": {**OCM_SPEC, "numberOfClusters": 2}}, api=True),
    Case("api: delete placement", "delete", url(API + "placement-detail", "shop"), empty, api=True),
    Case("api: roll out a snapshot", "post", url(API + "placement-rollout", "checkout"), empty, api=True),
    Case("api: create strategy", "post", url(API + "strategy-list"),
         lambda w: {"hub": "east", "name": "s2", "spec": {"stages": [{"name": "all"}]}}, api=True),
    Case("api: create run", "post", url(API + "run-list"),
         lambda w: {"hub": "east", "name": "checkout-9",
                    "spec": {"placementName": "checkout", "stagedRolloutStrategyName": "strategy"}},
         api=True),
    Case("api: run state", "post", url(API + "run-state", "run"), lambda w: {"state": "Run"}, api=True),
    Case("api: approve", "post", url(API + "approval-approve", "approval"), empty, api=True),
    Case("api: taints", "patch", url(INV + "cluster-taints", "cluster"), lambda w: {"taints": [TAINT]},
         api=True),
    Case("api: taints preview", "post", url(INV + "cluster-taints-preview", "cluster"),
         lambda w: {"taints": [TAINT]}, api=True),
    Case("api: bind a set", "post", url(INV + "cluster-set-binding-list"),
         lambda w: {"cluster_set": w.prod.pk, "namespace": "ops"}, api=True),
    Case("api: unbind a set", "delete", url(INV + "cluster-set-binding-detail", "binding_pk"), empty,
         api=True),
    Case("api: grant a role", "post", url(INV + "cluster-set-role-list"),
         lambda w: {"cluster_set": w.prod.pk, "user": "bystander2", "role": VIEW}, api=True),
    Case("api: change a role", "patch", url(INV + "cluster-set-role-detail", "role_pk"),
         lambda w: {"role": ADMIN}, api=True),
    Case("api: remove a role", "delete", url(INV + "cluster-set-role-detail", "role_pk"), empty,
         api=True),
]
PRINCIPALS = ["anonymous", "viewer", "other-admin", "admin"]


def send(case: Case, world: World, user: User | None) -> Any:
    if case.api:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return getattr(client, case.method)(case.path(world), case.body(world), format="json")
    client = Client()
    if user is not None:
        client.force_login(user)
    return getattr(client, case.method)(case.path(world), case.body(world))


def allowed(status: int) -> bool:
    return status not in (401, 403, 404) and (status < 500 or status == 502)


@pytest.mark.parametrize("who", PRINCIPALS)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_mutation_is_allowed_exactly_to_the_admin_of_the_set(world: World, case: Case, who: str) -> None:
    UserFactory(username="bystander2")  # the principal the grant cases name
    user = principal(who, world)
    applied_before = AuditEntry.objects.filter(outcome=AuditEntry.Outcome.OK).count()
    response = send(case, world, user)
    status = response.status_code
    if who == "admin":
        assert allowed(status), (status, getattr(response, "content", b"")[:300])
        return
    if who == "anonymous" and case.api:
        assert status == 401
    elif who == "anonymous":
        assert status == 302 and response["Location"].startswith(reverse("login"))
    elif who == "viewer":
        assert status == 403, (status, getattr(response, "content", b"")[:300])
    elif status == 400:  # the body names an object the user cannot see: reported as absent
        assert b"does not exist" in response.content or b"not found" in response.content
    else:
        assert status in (403, 404), (status, getattr(response, "content", b"")[:300])
    assert AuditEntry.objects.filter(outcome=AuditEntry.Outcome.OK).count() == applied_before
