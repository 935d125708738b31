"""Namespace roles: what they show and allow (inventory.roles), how they are granted, changed and revoked
(by the namespace's admins, audited, keeping an admin), and where: the hub page's namespaces, each with
its access page, and `/api/namespace-roles/`."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory import roles
from inventory.models import AuditEntry, ClusterSetRole, Hub, NamespaceRole
from placement import access
from placement.models import Placement
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    NamespaceRoleFactory,
    PlacementFactory,
    UserFactory,
)
from tests.placement.runs_support import cluster_set

pytestmark = pytest.mark.django_db
ADMIN, EDIT, VIEW = NamespaceRole.Role.ADMIN, NamespaceRole.Role.EDIT, NamespaceRole.Role.VIEW


@pytest.fixture(name="east")
def east_fixture() -> Hub:
    """Hub east: set prod bound to namespace web, where placement shop is; namespace ops is empty."""
    hub = HubFactory(name="east")
    cluster_set(hub, "prod", ["c-1"])
    ManagedClusterSetBindingFactory(hub=hub, namespace="web", name="prod", cluster_set="prod")
    PlacementFactory(hub=hub, namespace="web", name="shop")
    return hub


def holder(hub: Hub, namespace: str, role: str, username: str) -> User:
    user = UserFactory(username=username)
    NamespaceRoleFactory(hub=hub, namespace=namespace, role=role, user=user)
    return user


@pytest.mark.parametrize(
    ("role", "sees", "changes"), [(VIEW, True, False), (EDIT, True, True), (ADMIN, True, True)]
)
def test_a_namespace_role_shows_and_changes_its_placements_only(east: Hub, role, sees, changes) -> None:
    user = holder(east, "web", role, "member")
    PlacementFactory(hub=east, namespace="ops", name="elsewhere")
    visible = roles.restrict(Placement.objects.all(), user)
    assert list(visible.values_list("name", flat=True)) == ["shop"]
    assert roles.restrict(Placement.objects.all(), user, roles.ADMIN).exists() is changes
    # a namespace role shows the namespace's bindings, not the clusters of the sets bound there
    assert roles.restrict(east.managedclustersetbindings.all(), user).count() == 1
    assert not roles.restrict(east.managedclusters.all(), user).exists()
    assert access.can_place(user, east, Placement.Kind.PLACEMENT, "web", roles.ADMIN) is changes
    assert not access.can_place(user, east, Placement.Kind.PLACEMENT, "ops", roles.ADMIN)


def test_binding_needs_the_set_admin_and_the_namespace_admin(east: Hub) -> None:
    prod = east.managedclustersets.get(name="prod")
    both = holder(east, "ops", ADMIN, "both")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=both)
    set_only = UserFactory(username="set-only")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=set_only)
    namespace_only = holder(east, "ops", ADMIN, "namespace-only")
    editor = holder(east, "ops", EDIT, "editor")
    ClusterSetRoleFactory(cluster_set=prod, role=ClusterSetRole.Role.ADMIN, user=editor)
    assert roles.can_bind(both, prod, "ops") and not roles.can_bind(both, prod, "web")
    assert not any(roles.can_bind(user, prod, "ops") for user in (set_only, namespace_only, editor))


def test_grant_change_revoke_are_for_the_namespace_admins_and_audited(east: Hub) -> None:
    web = roles.Namespace(east, "web")
    owner = holder(east, "web", ADMIN, "owner")
    outsider = holder(east, "ops", ADMIN, "outsider")
    bob = UserFactory(username="bob")
    with pytest.raises(PermissionDenied, match="Only admins of namespace web of hub east"):
        roles.grant(outsider, web, VIEW, bob)
    row = roles.grant(owner, web, VIEW, bob)
    roles.change(owner, row, EDIT)
    roles.revoke(owner, row)
    entries = AuditEntry.objects.filter(action__startswith="namespace-role.").order_by("pk")
    bob_as = {role: {"namespace": "web", "principal": "user:bob", "role": role} for role in (VIEW, EDIT)}
    assert list(entries.values_list("action", "outcome", "actor_name", "target", "before", "after")) == [
        ("namespace-role.grant", "denied", "outsider", "east", None, {"namespace": "web"}),
        ("namespace-role.grant", "ok", "owner", "east", None, bob_as[VIEW]),
        ("namespace-role.change", "ok", "owner", "east", bob_as[VIEW], bob_as[EDIT]),
        ("namespace-role.revoke", "ok", "owner", "east", bob_as[EDIT], None),
    ]


def test_a_namespace_keeps_an_admin_unless_a_superuser_removes_it(east: Hub) -> None:
    owner = holder(east, "web", ADMIN, "owner")
    row = NamespaceRole.objects.get(user=owner)
    with pytest.raises(
        ValidationError, match="user:owner is the last admin of web; only a superuser may leave"
    ):
        roles.revoke(owner, row)
    with pytest.raises(ValidationError, match="role must be one of admin, edit, view"):
        roles.change(owner, row, "owner")
    roles.revoke(UserFactory(username="root", is_superuser=True), row)
    assert not NamespaceRole.objects.exists()


def test_the_hub_page_lists_its_namespaces_each_with_its_access_page(east: Hub, client: Client) -> None:
    owner = holder(east, "web", ADMIN, "owner")
    holder(east, "ops", VIEW, "elsewhere")
    client.force_login(owner)
    page = client.get(reverse("inventory:hub-detail", args=[east.pk]))
    assert [(n["name"], n["placements"], n["bindings"], n["roles"]) for n in page.context["namespaces"]] == [
        ("web", 1, 1, 1)
    ]
    access = reverse("inventory:namespace-access", args=[east.pk, "web"])
    assert access in page.content.decode()
    added = client.post(access, {"kind": "user", "name": "elsewhere", "role": EDIT})
    assert added.status_code == 302 and added["Location"] == access + "#access"
    tab = client.get(access).content.decode()
    assert "Namespace edit" in tab and "elsewhere" in tab
    assert client.get(reverse("inventory:namespace-access", args=[east.pk, "ops"])).status_code == 404


def test_the_api_lists_the_roles_of_the_callers_namespaces_and_grants_as_the_page(east: Hub) -> None:
    owner = holder(east, "web", ADMIN, "owner")
    holder(east, "ops", VIEW, "elsewhere")
    client = APIClient()
    client.force_authenticate(owner)
    url = reverse("inventory-api:namespace-role-list")
    assert [(r["namespace"], r["principal"]) for r in client.get(url).json()["results"]] == [
        ("web", "user:owner")
    ]
    created = client.post(
        url, {"hub": "east", "namespace": "web", "user": "elsewhere", "role": "edit"}, format="json"
    )
    assert created.status_code == 201 and created.json()["principal"] == "user:elsewhere"
    refused = client.post(
        url, {"hub": "east", "namespace": "ops", "user": "owner", "role": "admin"}, format="json"
    )
    assert refused.status_code == 403
    invalid = client.post(
        url, {"hub": "east", "namespace": "Web_1", "user": "owner", "role": "admin"}, format="json"
    )
    assert invalid.status_code == 400 and "namespace" in invalid.json()


@pytest.mark.parametrize("field", ["hub", "user", "group"])
def test_a_name_with_a_nul_character_is_a_field_error_not_a_database_failure(east: Hub, field: str) -> None:
    """PostgreSQL cannot compare text holding NUL: looking the name up would fail in the database (500)."""
    owner = holder(east, "web", ADMIN, "owner")
    client = APIClient()
    client.force_authenticate(owner)
    body = {"hub": "east", "namespace": "web", "role": "view", field: "x\x00"}
    if field != "user":
        body.setdefault("user", None)
    response = client.post(reverse("inventory-api:namespace-role-list"), body, format="json")
    assert response.status_code == 400
    assert response.json()[field] == ["NUL characters (\\u0000) are not allowed."]
    assert NamespaceRole.objects.count() == 1
