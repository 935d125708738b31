"""grant / change / revoke: only admins of the set or superusers, one role per principal, the last admin
kept unless a superuser removes it, and an audit entry for every attempt (denied ones too)."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.test import RequestFactory

from inventory import audit, roles
from inventory.models import AuditEntry, ClusterSetRole
from tests.factories import (
    ClusterSetRoleFactory,
    GroupFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW


@pytest.fixture
def owner(owner_row):
    return owner_row.user


def entries(prod) -> list[tuple]:
    return [(e.actor_name, e.action, e.outcome, e.before, e.after) for e in audit.entries_for(prod)][::-1]


def test_an_admin_grants_changes_and_revokes_with_an_audit_entry_each(prod, owner) -> None:
    bob, ops = UserFactory(username="bob"), GroupFactory(name="ops")
    request = RequestFactory().post("/", REMOTE_ADDR="10.0.0.9")
    request.request_id = "req-7"

    row = roles.grant(owner, prod, VIEW, bob, request=request)
    group_row = roles.grant(owner, prod, ADMIN, ops)
    roles.change(owner, row, ADMIN)
    roles.revoke(owner, group_row)

    assert [(r.principal, r.role) for r in roles.holders(prod)] == [
        ("user:bob", ADMIN),
        ("user:owner", ADMIN),
    ]
    assert entries(prod) == [
        ("owner", "role.grant", "ok", None, {"principal": "user:bob", "role": "view"}),
        ("owner", "role.grant", "ok", None, {"principal": "group:ops", "role": "admin"}),
        (
            "owner",
            "role.change",
            "ok",
            {"principal": "user:bob", "role": "view"},
            {"principal": "user:bob", "role": "admin"},
        ),
        ("owner", "role.revoke", "ok", {"principal": "group:ops", "role": "admin"}, None),
    ]
    first = AuditEntry.objects.filter(action="role.grant").order_by("pk").first()
    assert (first.hub.name, first.request_id, first.source_address) == ("east", "req-7", "10.0.0.9")
    assert (first.target_type, first.target_id) == ("inventory.managedclusterset", str(prod.pk))


@pytest.mark.parametrize("role", [None, VIEW])
def test_viewers_and_strangers_are_refused_and_the_refusal_is_audited(prod, owner, role) -> None:
    mallory, bob = UserFactory(username="mallory"), UserFactory(username="bob")
    if role:
        ClusterSetRoleFactory(cluster_set=prod, role=role, user=mallory)
    owner_row = ClusterSetRole.objects.get(user=owner)

    with pytest.raises(PermissionDenied, match="Only admins of cluster set prod"):
        roles.grant(mallory, prod, ADMIN, mallory)
    with pytest.raises(PermissionDenied):
        roles.grant(mallory, prod, VIEW, bob)
    with pytest.raises(PermissionDenied):
        roles.change(mallory, owner_row, VIEW)
    with pytest.raises(PermissionDenied):
        roles.revoke(mallory, owner_row)

    assert [(r.principal, r.role) for r in roles.holders(prod)] == [("user:owner", ADMIN)] + (
        [("user:mallory", role)] if role else []
    )
    denied = [(a, action, outcome) for a, action, outcome, *_ in entries(prod)]
    assert denied == [
        ("mallory", "role.grant", "denied"),
        ("mallory", "role.grant", "denied"),
        ("mallory", "role.change", "denied"),
        ("mallory", "role.revoke", "denied"),
    ]


def test_an_admin_of_another_set_cannot_grant_here(prod) -> None:
    other = ManagedClusterSetFactory(hub=prod.hub, name="dev")
    admin = UserFactory(username="dev-admin")
    ClusterSetRoleFactory(cluster_set=other, role=ADMIN, user=admin)
    with pytest.raises(PermissionDenied):
        roles.grant(admin, prod, VIEW, admin)


def test_a_group_admin_may_grant(prod) -> None:
    lead = UserFactory(username="lead")
    sre = GroupFactory(name="sre")
    lead.groups.add(sre)
    ClusterSetRoleFactory(cluster_set=prod, role=ADMIN, user=None, group=sre)
    row = roles.grant(lead, prod, VIEW, UserFactory(username="new"))
    assert row.principal == "user:new"


def test_one_role_per_principal_and_set(prod, owner) -> None:
    bob = UserFactory(username="bob")
    roles.grant(owner, prod, VIEW, bob)
    with pytest.raises(ValidationError) as error:
        roles.grant(owner, prod, ADMIN, bob)
    assert error.value.message_dict == {"name": ["user:bob already has the view role on prod; change it."]}
    # the same name as a group is another principal
    roles.grant(owner, prod, VIEW, GroupFactory(name="bob"))
    assert prod.roles.count() == 3


def test_an_unknown_role_is_a_validation_error(prod, owner) -> None:
    with pytest.raises(ValidationError) as error:
        roles.grant(owner, prod, "owner", UserFactory(username="bob"))
    assert "role must be one of admin, view" in error.value.message_dict["role"][0]
    with pytest.raises(ValidationError):
        roles.change(owner, ClusterSetRole.objects.get(user=owner), "root")


def test_changing_to_the_same_role_changes_and_records_nothing(prod, owner) -> None:
    row = ClusterSetRole.objects.get(user=owner)
    assert roles.change(owner, row, ADMIN).role == ADMIN
    assert entries(prod) == []


def test_the_last_admin_stays_unless_a_superuser_removes_it(prod, owner) -> None:
    row = ClusterSetRole.objects.get(user=owner)
    for attempt in (lambda: roles.change(owner, row, VIEW), lambda: roles.revoke(owner, row)):
        with pytest.raises(ValidationError) as error:
            attempt()
        assert error.value.message_dict["role"] == [
            "user:owner is the last admin of prod; only a superuser may leave the set without one."
        ]
    assert ClusterSetRole.objects.get(pk=row.pk).role == ADMIN

    # with a second admin, the first may step down
    co_owner = roles.grant(owner, prod, ADMIN, UserFactory(username="co-owner"))
    roles.revoke(owner, row)
    root = UserFactory(username="root", is_superuser=True)
    roles.revoke(root, co_owner)
    assert not prod.roles.exists()
    assert [(a, action) for a, action, *_ in entries(prod)][-2:] == [
        ("owner", "role.revoke"),
        ("root", "role.revoke"),
    ]


@pytest.mark.parametrize("principals", [{}, {"both": True}])
def test_the_database_refuses_a_role_for_both_or_neither(prod, principals) -> None:
    if principals:
        principals = {"user": UserFactory(), "group": GroupFactory()}
    with pytest.raises(IntegrityError), transaction.atomic():
        ClusterSetRole.objects.create(cluster_set=prod, role=VIEW, **principals)


def test_roles_go_with_their_set_user_and_group(prod, owner) -> None:
    ops = GroupFactory(name="ops")
    roles.grant(owner, prod, VIEW, ops)
    ops.delete()
    assert [r.principal for r in roles.holders(prod)] == ["user:owner"]
    prod.delete()
    assert not ClusterSetRole.objects.exists()
