"""The access management tab of a cluster set: list, add, change, remove (POST + CSRF), form errors,
403 for viewers, 404 for those who cannot see the set, an audit entry for every change."""

import pytest
from django.test import Client
from django.urls import reverse

from inventory import audit
from inventory.models import ClusterSetRole
from tests.factories import (
    ClusterSetRoleFactory,
    GroupFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
HTMX = {"HTTP_HX_REQUEST": "true"}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner(owner_row) -> Client:
    return client_for(owner_row.user)


def add_url(cluster_set) -> str:
    return reverse("inventory:clusterset-access", args=[cluster_set.pk])


def change_url(row: ClusterSetRole) -> str:
    return reverse("inventory:clusterset-access-change", args=[row.cluster_set_id, row.pk])


def remove_url(row: ClusterSetRole) -> str:
    return reverse("inventory:clusterset-access-remove", args=[row.cluster_set_id, row.pk])


def holders(cluster_set) -> list[tuple[str, str]]:
    return [(row.principal, row.role) for row in ClusterSetRole.objects.filter(cluster_set=cluster_set)]


def actions(cluster_set) -> list[tuple[str, str]]:
    return [(entry.action, entry.outcome) for entry in audit.entries_for(cluster_set)][::-1]


def test_the_set_page_lists_who_has_access_and_offers_the_forms_to_admins(prod, owner_row, owner) -> None:
    ops = GroupFactory(name="ops")
    ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=None, group=ops)
    viewer = UserFactory(username="viewer")
    ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=viewer)
    detail = reverse("inventory:clusterset-detail", args=[prod.pk])

    html = owner.get(detail).content.decode()
    assert 'id="access"' in html and "Access management" in html
    assert 'data-principal="user:owner" data-role="admin"' in html
    assert 'data-principal="group:ops" data-role="view"' in html
    assert 'id="access-add"' in html and "csrfmiddlewaretoken" in html

    as_viewer = client_for(viewer).get(detail).content.decode()
    assert 'data-principal="group:ops"' in as_viewer
    assert 'id="access-add"' not in as_viewer and "Remove" not in as_viewer


def test_add_a_user_without_javascript_redirects_to_the_tab(prod, owner) -> None:
    UserFactory(username="bob")
    response = owner.post(add_url(prod), {"kind": "user", "name": "bob", "role": "view"})

    assert response.status_code == 302
    assert response["Location"] == reverse("inventory:clusterset-detail", args=[prod.pk]) + "#access"
    assert ("user:bob", VIEW) in holders(prod)
    assert actions(prod) == [("role.grant", "ok")]


def test_add_a_group_with_htmx_answers_the_section(prod, owner) -> None:
    GroupFactory(name="sre")
    response = owner.post(add_url(prod), {"kind": "group", "name": "sre", "role": "admin"}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'data-principal="group:sre" data-role="admin"' in html
    assert ("group:sre", ADMIN) in holders(prod)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"kind": "user", "name": "ghost", "role": "view"}, "name", "No user named &#x27;ghost&#x27;."),
        ({"kind": "group", "name": "ghosts", "role": "view"}, "name", "No group named &#x27;ghosts&#x27;."),
        ({"kind": "user", "name": "", "role": "view"}, "name", "This field is required."),
        ({"kind": "robot", "name": "bob", "role": "view"}, "kind", "Select a valid choice."),
        ({"kind": "user", "name": "bob", "role": "owner"}, "role", "Select a valid choice."),
        ({"kind": "user", "name": "owner", "role": "view"}, "name", "user:owner already has the admin role"),
    ],
)
def test_invalid_additions_are_form_errors_and_change_nothing(prod, owner, data, field, message) -> None:
    UserFactory(username="bob")
    for headers in ({}, HTMX):
        response = owner.post(add_url(prod), data, **headers)
        html = response.content.decode()
        assert response.status_code == 400
        assert f'id="{field}-errors"' in html and message in html
    assert holders(prod) == [("user:owner", ADMIN)]
    assert actions(prod) == []


def test_change_and_remove_a_role(prod, owner) -> None:
    bob = ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=UserFactory(username="bob"))

    assert owner.post(change_url(bob), {"role": "admin"}).status_code == 302
    assert ("user:bob", ADMIN) in holders(prod)
    response = owner.post(remove_url(bob), **HTMX)
    assert response.status_code == 200 and 'data-principal="user:bob"' not in response.content.decode()
    assert holders(prod) == [("user:owner", ADMIN)]
    assert actions(prod) == [("role.change", "ok"), ("role.revoke", "ok")]
    entry = audit.entries_for(prod)[0]
    assert (entry.actor_name, entry.before, entry.after) == (
        "owner",
        {"principal": "user:bob", "role": "admin"},
        None,
    )


def test_an_invalid_role_or_the_last_admin_is_an_error_on_its_row(prod, owner_row, owner) -> None:
    response = owner.post(change_url(owner_row), {"role": "root"}, **HTMX)
    assert response.status_code == 400
    assert f'id="role-{owner_row.pk}-errors"' in response.content.decode()

    for url, data in ((change_url(owner_row), {"role": "view"}), (remove_url(owner_row), {})):
        response = owner.post(url, data)
        assert response.status_code == 400
        assert "user:owner is the last admin of prod" in response.content.decode()
    assert holders(prod) == [("user:owner", ADMIN)]
    assert actions(prod) == []


def test_a_superuser_may_remove_the_last_admin(prod, owner_row) -> None:
    root = client_for(UserFactory(username="root", is_superuser=True))
    assert root.post(remove_url(owner_row)).status_code == 302
    assert holders(prod) == []


def test_viewers_get_403_and_nothing_changes_but_the_audit_log(prod, owner_row) -> None:
    viewer_row = ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=UserFactory(username="viewer"))
    viewer = client_for(viewer_row.user)

    assert viewer.post(add_url(prod), {"kind": "user", "name": "viewer", "role": "admin"}).status_code == 403
    assert viewer.post(change_url(viewer_row), {"role": "admin"}).status_code == 403
    assert viewer.post(remove_url(owner_row)).status_code == 403
    assert sorted(holders(prod)) == [("user:owner", ADMIN), ("user:viewer", VIEW)]
    assert actions(prod) == [("role.grant", "denied"), ("role.change", "denied"), ("role.revoke", "denied")]


def test_users_who_cannot_see_the_set_get_404(prod, owner_row) -> None:
    dev = ManagedClusterSetFactory(hub=prod.hub, name="dev")
    dev_admin = UserFactory(username="dev-admin")
    ClusterSetRoleFactory(cluster_set=dev, role=ADMIN, user=dev_admin)
    for user in (dev_admin, UserFactory(username="stranger")):
        client = client_for(user)
        assert client.get(add_url(prod)).status_code == 404
        assert (
            client.post(add_url(prod), {"kind": "user", "name": "owner", "role": "view"}).status_code == 404
        )
        assert client.post(remove_url(owner_row)).status_code == 404
    # a role row of another set is not reachable through this set's URL
    dev_row = ClusterSetRole.objects.get(cluster_set=dev)
    other = reverse("inventory:clusterset-access-remove", args=[prod.pk, dev_row.pk])
    assert client_for(owner_row.user).post(other).status_code == 404
    assert actions(prod) == []


def test_anonymous_users_are_sent_to_login_and_get_changes_nothing(prod, owner_row, owner) -> None:
    response = Client().post(remove_url(owner_row))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert owner.get(remove_url(owner_row)).status_code == 405
    assert owner.get(change_url(owner_row)).status_code == 405
    assert holders(prod) == [("user:owner", ADMIN)]


def test_posts_without_a_csrf_token_are_refused(prod, owner_row) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner_row.user)
    UserFactory(username="bob")
    assert client.post(add_url(prod), {"kind": "user", "name": "bob", "role": "view"}).status_code == 403
    assert holders(prod) == [("user:owner", ADMIN)]


def test_the_tab_has_a_page_of_its_own(prod, owner) -> None:
    response = owner.get(add_url(prod))
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html
    assert 'id="access-add"' in html and reverse("inventory:clusterset-detail", args=[prod.pk]) in html
