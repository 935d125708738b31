"""The permission matrix: every mutating page and API endpoint, tried by each kind of principal.

Who is allowed is the case's `allowed` set, as the hub's RBAC would decide it:
- OCM Placements are namespaced: the edit (or admin) role in their namespace changes them;
- Fleet CRPs, strategies, runs, approvals and taints: the admin role on the set holding the clusters;
- binding a set into a namespace (and unbinding it): admin of the set AND admin in the namespace;
- roles on a set: its admins; roles in a namespace: its admins.
The takeover path is a case like any other: "set-admin" (admin of prod, bound into web, without any
namespace role) may not bind prod into ops, nor add, change or delete web's placements.

Everyone else is refused: anonymous users are sent to the login page (the API answers 401); a logged-in
user gets 403 when the object is visible to them, 404 when it is not, or 400 "does not exist" / "not
found" for a body naming an object they cannot see. The allowed get past authorisation, whatever the
handler then answers (a created object, a form or field error, or 502 when the write reaches hub east,
which no server answers). A refused request changes nothing: no audit entry with outcome "ok" appears.
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

from inventory.models import AuditEntry, ClusterSetRole, Hub, ManagedCluster, ManagedClusterSet, NamespaceRole
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    NamespaceRoleFactory,
    PlacementFactory,
    StagedUpdateRunFactory,
    StagedUpdateStrategyFactory,
    UserFactory,
)
from tests.placement.runs_support import approval_request, cluster_set

ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
EDIT = NamespaceRole.Role.EDIT
PROD = ["c-1", "c-2"]
API, ROLL, INV = "placement-api:", "rollouts-api:", "inventory-api:"
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
    checkout with a strategy, a running run and a pending approval; hub west: set other (w-1). User
    bystander views prod and web."""

    east: Hub
    prod: ManagedClusterSet
    cluster: ManagedCluster
    shop: Placement
    checkout: Placement
    run: StagedUpdateRun
    approval: ApprovalRequest
    binding_pk: int
    role_pk: int
    namespace_role_pk: int


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
    bystander = UserFactory(username="bystander")
    holder = ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=bystander)
    in_web = NamespaceRoleFactory(hub=east, namespace="web", role=VIEW, user=bystander)
    return World(
        east,
        prod,
        ManagedCluster.objects.get(hub=east, name="c-1"),
        shop,
        checkout,
        run,
        approval,
        binding.pk,
        holder.pk,
        in_web.pk,
    )


# principal -> (its role on a set: (set, role) or None, its roles in namespaces of east: {namespace: role})
PRINCIPALS: dict[str, tuple[tuple[str, str] | None, dict[str, str]]] = {
    "viewer": (("prod", VIEW), {}),
    "other-admin": (("other", ADMIN), {}),
    "set-admin": (("prod", ADMIN), {}),
    "ns-view": (None, {"web": VIEW}),
    "ns-edit": (None, {"web": EDIT}),
    "ns-admin": (None, {"web": ADMIN, "ops": ADMIN}),
    "owner": (("prod", ADMIN), {"web": ADMIN, "ops": ADMIN}),
}


def principal(name: str, world: World) -> User | None:
    if name == "anonymous":
        return None
    user = UserFactory(username=name)
    on_set, in_namespaces = PRINCIPALS[name]
    if on_set is not None:
        set_name, role = on_set
        ClusterSetRoleFactory(cluster_set=ManagedClusterSet.objects.get(name=set_name), role=role, user=user)
    for namespace, role in in_namespaces.items():
        NamespaceRoleFactory(hub=world.east, namespace=namespace, role=role, user=user)
    return user


@dataclass(frozen=True)
class Case:
    """One mutating request: `path` and `body` from the world; `api` requests are JSON."""

    name: str
    method: str
    path: Callable[[World], str]
    body: Callable[[World], dict[str, Any]]
    allowed: frozenset[str]
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


# Who may do each kind of change (the principals of PRINCIPALS; anonymous never).
OCM_EDITORS = frozenset({"ns-edit", "ns-admin", "owner"})
SET_ADMINS = frozenset({"set-admin", "owner"})
BINDERS = frozenset({"owner"})
NAMESPACE_ADMINS = frozenset({"ns-admin", "owner"})
NAMESPACE = "inventory:namespace-access"


def in_web(name: str, *attributes: str) -> Callable[[World], str]:
    """reverse(name) for namespace web of hub east, then the pks of these World attributes."""

    def path(world: World) -> str:
        return reverse(name, args=[world.east.pk, "web", *(getattr(world, a) for a in attributes)])

    return path


# fmt: off
CASES = [
    # pages (POST with the session and CSRF)
    Case("page: new placement", "post", url("placement:placement-create"),
         lambda w: {"kind": Placement.Kind.PLACEMENT, "hub": w.east.pk, "namespace": "web", "name": "cart",
                    "spec": "clusterSets: [prod]\n"}, OCM_EDITORS),
    Case("page: edit spec", "post", url("placement:placement-edit", "shop"),
         lambda w: {"spec": "clusterSets: [prod]\nnumberOfClusters: 2\n"}, OCM_EDITORS),
    Case("page: upload manifests", "post", url("placement:placement-upload"),
         lambda w: {"hub": w.east.pk, "manifests": SimpleUploadedFile("cart.yaml", CART)}, OCM_EDITORS),
    Case("page: tolerations", "post", url("placement:placement-tolerations", "shop"), tolerations_form,
         OCM_EDITORS),
    Case("page: roll out a snapshot", "post", url("rollouts:placement-rollout", "checkout"), empty,
         SET_ADMINS),
    Case("page: run state", "post", url("rollouts:run-state", "run"), lambda w: {"state": "Run"},
         SET_ADMINS),
    Case("page: new run", "post", url("rollouts:run-create"),
         lambda w: {"hub": w.east.pk, "name": "checkout-9", "placement_name": "checkout",
                    "strategy_name": "strategy", "state": "Initialize"}, SET_ADMINS),
    Case("page: new strategy", "post", url("rollouts:strategy-create"),
         lambda w: {"hub": w.east.pk, "name": "s2", "spec": "stages: [{name: all}]\n"}, SET_ADMINS),
    Case("page: approve", "post", url("rollouts:approval-approve", "approval"), empty, SET_ADMINS),
    Case("page: taints", "post", url("inventory:cluster-taints", "cluster"), taints_form, SET_ADMINS),
    Case("page: bind a set", "post", url("inventory:clusterset-bind", "prod"),
         lambda w: {"namespace": "ops"}, BINDERS),
    Case("page: unbind a set", "post", url("inventory:clusterset-unbind", "prod", "binding_pk"), empty,
         BINDERS),
    Case("page: grant a role", "post", url("inventory:clusterset-access", "prod"),
         lambda w: {"kind": "user", "name": "bystander2", "role": VIEW}, SET_ADMINS),
    Case("page: change a role", "post", url("inventory:clusterset-access-change", "prod", "role_pk"),
         lambda w: {"role": ADMIN}, SET_ADMINS),
    Case("page: remove a role", "post", url("inventory:clusterset-access-remove", "prod", "role_pk"), empty,
         SET_ADMINS),
    Case("page: grant a namespace role", "post", in_web(NAMESPACE),
         lambda w: {"kind": "user", "name": "bystander2", "role": EDIT}, NAMESPACE_ADMINS),
    Case("page: change a namespace role", "post", in_web(f"{NAMESPACE}-change", "namespace_role_pk"),
         lambda w: {"role": EDIT}, NAMESPACE_ADMINS),
    Case("page: remove a namespace role", "post", in_web(f"{NAMESPACE}-remove", "namespace_role_pk"), empty,
         NAMESPACE_ADMINS),
    # the API (JSON; session or token)
    Case("api: create placement", "post", url(API + "placement-list"),
         lambda w: {"kind": Placement.Kind.PLACEMENT, "hub": "east", "namespace": "web", "name": "cart",
                    "spec": OCM_SPEC}, OCM_EDITORS, api=True),
    Case("api: patch placement", "patch", url(API + "placement-detail", "shop"),
         lambda w: {"spec": {**OCM_SPEC, "numberOfClusters": 2}}, OCM_EDITORS, api=True),
    Case("api: delete placement", "delete", url(API + "placement-detail", "shop"), empty, OCM_EDITORS,
         api=True),
    Case("api: roll out a snapshot", "post", url(ROLL + "placement-rollout", "checkout"), empty, SET_ADMINS,
         api=True),
    Case("api: create strategy", "post", url(ROLL + "strategy-list"),
         lambda w: {"hub": "east", "name": "s2", "spec": {"stages": [{"name": "all"}]}}, SET_ADMINS,
         api=True),
    Case("api: create run", "post", url(ROLL + "run-list"),
         lambda w: {"hub": "east", "name": "checkout-9",
                    "spec": {"placementName": "checkout", "stagedRolloutStrategyName": "strategy"}},
         SET_ADMINS, api=True),
    Case("api: run state", "post", url(ROLL + "run-state", "run"), lambda w: {"state": "Run"}, SET_ADMINS,
         api=True),
    Case("api: approve", "post", url(ROLL + "approval-approve", "approval"), empty, SET_ADMINS, api=True),
    Case("api: taints", "patch", url(INV + "cluster-taints", "cluster"), lambda w: {"taints": [TAINT]},
         SET_ADMINS, api=True),
    Case("api: taints preview", "post", url(INV + "cluster-taints-preview", "cluster"),
         lambda w: {"taints": [TAINT]}, SET_ADMINS, api=True),
    Case("api: bind a set", "post", url(INV + "cluster-set-binding-list"),
         lambda w: {"cluster_set": w.prod.pk, "namespace": "ops"}, BINDERS, api=True),
    Case("api: unbind a set", "delete", url(INV + "cluster-set-binding-detail", "binding_pk"), empty,
         BINDERS, api=True),
    Case("api: grant a role", "post", url(INV + "cluster-set-role-list"),
         lambda w: {"cluster_set": w.prod.pk, "user": "bystander2", "role": VIEW}, SET_ADMINS, api=True),
    Case("api: change a role", "patch", url(INV + "cluster-set-role-detail", "role_pk"),
         lambda w: {"role": ADMIN}, SET_ADMINS, api=True),
    Case("api: remove a role", "delete", url(INV + "cluster-set-role-detail", "role_pk"), empty,
         SET_ADMINS, api=True),
    Case("api: grant a namespace role", "post", url(INV + "namespace-role-list"),
         lambda w: {"hub": "east", "namespace": "web", "user": "bystander2", "role": EDIT},
         NAMESPACE_ADMINS, api=True),
    Case("api: change a namespace role", "patch", url(INV + "namespace-role-detail", "namespace_role_pk"),
         lambda w: {"role": EDIT}, NAMESPACE_ADMINS, api=True),
    Case("api: remove a namespace role", "delete", url(INV + "namespace-role-detail", "namespace_role_pk"),
         empty, NAMESPACE_ADMINS, api=True),
]
# fmt: on


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


@pytest.mark.parametrize("who", ["anonymous", *PRINCIPALS])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_mutation_is_allowed_exactly_to_its_roles(world: World, case: Case, who: str) -> None:
    UserFactory(username="bystander2")  # the principal the grant cases name
    user = principal(who, world)
    applied_before = AuditEntry.objects.filter(outcome=AuditEntry.Outcome.OK).count()
    response = send(case, world, user)
    status = response.status_code
    if who in case.allowed:
        assert allowed(status), (status, getattr(response, "content", b"")[:300])
        return
    if who == "anonymous" and case.api:
        assert status == 401
    elif who == "anonymous":
        assert status == 302 and response["Location"].startswith(reverse("login"))
    elif status == 400:  # the body names an object the user cannot see: reported as absent
        assert b"does not exist" in response.content or b"not found" in response.content
    else:
        assert status in (403, 404), (status, getattr(response, "content", b"")[:300])
    assert AuditEntry.objects.filter(outcome=AuditEntry.Outcome.OK).count() == applied_before


TAKEOVER = [case for case in CASES if case.allowed in (OCM_EDITORS, BINDERS)]


@pytest.mark.parametrize("case", TAKEOVER, ids=[case.name for case in TAKEOVER])
def test_a_set_admin_without_a_namespace_role_is_refused_with_403(world: World, case: Case) -> None:
    """The takeover path: the admin of prod sees web's placement and bindings (prod is bound there), and
    is told no, rather than not finding them."""
    response = send(case, world, principal("set-admin", world))
    assert response.status_code == 403, (response.status_code, getattr(response, "content", b"")[:300])
