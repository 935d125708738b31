"""What `hub_changed` announced, the demo hub synced into a hub row, the cluster set with its one admin
that the roles tests start from, and what the editors' tests start from: the admins who may edit, and
the users who see what they would edit but may not."""

from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from demohub import DemoHub
from inventory import changes
from inventory.models import ClusterSetRole, Hub, ManagedClusterSet, NamespaceRole
from inventory.signals import hub_changed
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    NamespaceRoleFactory,
    UserFactory,
    synced_demo_hub_row,
)


@pytest.fixture
def prod(db: None) -> ManagedClusterSet:
    """Cluster set prod on hub east."""
    return ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")


@pytest.fixture
def owner_row(prod: ManagedClusterSet) -> ClusterSetRole:
    """User "owner", the only admin of prod."""
    return ClusterSetRoleFactory(
        cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=UserFactory(username="owner")
    )


@pytest.fixture
def synced_hub(demo_hub: DemoHub) -> Hub:
    """Hub "demo": the running demo hub, synced once."""
    return synced_demo_hub_row(demo_hub)


@pytest.fixture
def staging(synced_hub: Hub) -> ManagedClusterSet:
    """The demo hub's set staging (bound to one namespace)."""
    return ManagedClusterSet.objects.get(hub=synced_hub, name="staging")


@pytest.fixture
def root(db: None) -> User:
    """A superuser: sees everything and may edit taints and bindings."""
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def root_client(client: Client, root: User) -> Client:
    client.force_login(root)
    return client


# --- the editors' users, on the demo hub: cluster-set admin roles allow the edits (inventory.editing)

# Users who may not edit: each sees the target, so the refusal is the admin check's, not a 404.
REFUSED = ("viewer", "staff with the model permissions", "admin of another set")
# Binding needs both admin roles: either alone is refused (the set's admin alone is the takeover path).
BIND_REFUSED = (*REFUSED, "admin of the namespace only", "admin of the set only")
OLD_PERMISSIONS = ("change_managedcluster", "change_managedclustersetbinding")

DemoRole = Callable[[str, str, str], User]


@pytest.fixture
def demo_role(synced_hub: Hub) -> DemoRole:
    """`demo_role("staging", "admin", "ops")`: user ops (created if new) with that role on the demo hub's
    set staging."""

    def grant(set_name: str, role: str, username: str) -> User:
        user = UserFactory(username=username)
        cluster_set = ManagedClusterSet.objects.get(hub=synced_hub, name=set_name)
        ClusterSetRoleFactory(cluster_set=cluster_set, role=role, user=user)
        return user

    return grant


# The namespaces staging_admin administers: where the tests bind the set, and where the demo hub binds it.
BINDER_NAMESPACES = ("team-a", "apps-dev")


@pytest.fixture
def staging_admin(demo_role: DemoRole, synced_hub: Hub) -> User:
    """User ops, admin of the demo hub's set staging and admin in BINDER_NAMESPACES: may bind the set
    into them and unbind it from them."""
    return _namespace_admin(synced_hub, demo_role("staging", ClusterSetRole.Role.ADMIN, "ops"))


def _namespace_admin(hub: Hub, user: User) -> User:
    for namespace in BINDER_NAMESPACES:
        NamespaceRoleFactory(hub=hub, namespace=namespace, role=NamespaceRole.Role.ADMIN, user=user)
    return user


@pytest.fixture
def gpu_admin(demo_role: DemoRole) -> User:
    """User gpu-admin, admin of the demo hub's set gpu-clusters: may edit the taints of
    aks-northeurope-dev-021 (the ManagedCluster, and the Fleet MemberCluster of that name through it)."""
    return demo_role("gpu-clusters", ClusterSetRole.Role.ADMIN, "gpu-admin")


def _refused(demo_role: DemoRole, kind: str, viewed_set: str) -> User:
    """User refused: a viewer of `viewed_set`, and the REFUSED `kind` of user besides."""
    if kind == "staff with the model permissions":
        staff = UserFactory(username="refused", is_staff=True)
        staff.user_permissions.add(*Permission.objects.filter(codename__in=OLD_PERMISSIONS))
    elif kind == "admin of another set":
        demo_role("production", ClusterSetRole.Role.ADMIN, "refused")
    return demo_role(viewed_set, ClusterSetRole.Role.VIEW, "refused")


@pytest.fixture(params=BIND_REFUSED)
def refused_binder(request: pytest.FixtureRequest, demo_role: DemoRole, synced_hub: Hub) -> User:
    """Sees the demo hub's set staging but may not bind it into team-a nor unbind it from apps-dev."""
    if request.param == "admin of the set only":
        return demo_role("staging", ClusterSetRole.Role.ADMIN, "refused")
    if request.param == "admin of the namespace only":
        return _namespace_admin(synced_hub, _refused(demo_role, "viewer", "staging"))
    return _refused(demo_role, request.param, "staging")


@pytest.fixture(params=REFUSED)
def refused_taint_editor(request: pytest.FixtureRequest, demo_role: DemoRole) -> User:
    """Sees aks-northeurope-dev-021 (a view role on the demo hub's set global, which holds it; set
    production does not) but may not edit its taints."""
    return _refused(demo_role, request.param, "global")


@pytest.fixture
def heard() -> Iterator[list[changes.HubChanges]]:
    """What `hub_changed` announced while the test ran."""
    announced: list[changes.HubChanges] = []

    def listener(hub_changes: changes.HubChanges, **_: object) -> None:
        announced.append(hub_changes)

    hub_changed.connect(listener)
    yield announced
    hub_changed.disconnect(listener)
