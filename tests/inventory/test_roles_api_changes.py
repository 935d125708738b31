"""/api/cluster-set-roles/: list what the caller sees, grant (201), change (PATCH), revoke (204);
400 naming the field, 403 for viewers, a hidden set as unknown as a missing one; audited."""

import pytest
from rest_framework.test import APIClient

from inventory import audit
from inventory.models import ClusterSetRole
from tests.factories import (
    ClusterSetRoleFactory,
    GroupFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
URL = "/api/cluster-set-roles/"


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_grant_change_and_revoke(prod, owner_row) -> None:
    owner = client_for(owner_row.user)
    GroupFactory(name="ops")

    created = owner.post(URL, {"cluster_set": prod.pk, "role": "view", "group": "ops"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert (body["principal"], body["role"], body["hub"], body["cluster_set_name"]) == (
        "group:ops",
        "view",
        "east",
        "prod",
    )
    changed = owner.patch(f"{URL}{body['id']}/", {"role": "admin"}, format="json")
    assert changed.status_code == 200 and changed.json()["role"] == "admin"
    assert owner.delete(f"{URL}{body['id']}/").status_code == 204
    listed = owner.get(URL, {"cluster_set": prod.pk}).json()
    assert [row["principal"] for row in listed["results"]] == ["user:owner"]
    assert [e.action for e in audit.entries_for(prod)][::-1] == ["role.grant", "role.change", "role.revoke"]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"role": "view", "user": "ghost"}, "user"),
        ({"role": "view", "group": "ghosts"}, "group"),
        ({"role": "view"}, "user"),
        ({"role": "view", "user": "owner", "group": "ops"}, "user"),
        ({"role": "owner", "user": "owner"}, "role"),
        ({"role": "view", "user": "owner"}, "name"),  # already holds admin
    ],
)
def test_invalid_grants_answer_400_naming_the_field(prod, owner_row, data, field) -> None:
    GroupFactory(name="ops")
    response = client_for(owner_row.user).post(URL, {"cluster_set": prod.pk, **data}, format="json")
    assert response.status_code == 400 and field in response.json()
    assert prod.roles.count() == 1


def test_viewers_get_403_and_strangers_cannot_name_the_set(prod, owner_row) -> None:
    viewer = UserFactory(username="viewer")
    viewer_row = ClusterSetRoleFactory(cluster_set=prod, role=VIEW, user=viewer)
    as_viewer = client_for(viewer)
    assert as_viewer.post(URL, {"cluster_set": prod.pk, "role": "admin", "user": "viewer"}).status_code == 403
    assert as_viewer.patch(f"{URL}{viewer_row.pk}/", {"role": "admin"}).status_code == 403
    assert as_viewer.delete(f"{URL}{owner_row.pk}/").status_code == 403

    stranger = client_for(UserFactory(username="stranger"))
    response = stranger.post(URL, {"cluster_set": prod.pk, "role": "admin", "user": "stranger"})
    assert response.status_code == 400 and "cluster_set" in response.json()
    assert stranger.delete(f"{URL}{owner_row.pk}/").status_code == 404
    assert stranger.get(URL).json()["count"] == 0
    assert sorted(prod.roles.values_list("role", flat=True)) == ["admin", "view"]


def test_the_last_admin_is_kept_for_non_superusers(owner_row) -> None:
    response = client_for(owner_row.user).delete(f"{URL}{owner_row.pk}/")
    assert response.status_code == 400 and "last admin" in response.json()["role"][0]
    root = client_for(UserFactory(username="root", is_superuser=True))
    assert root.delete(f"{URL}{owner_row.pk}/").status_code == 204


def test_put_is_not_offered_and_anonymous_is_401(owner_row) -> None:
    assert client_for(owner_row.user).put(f"{URL}{owner_row.pk}/", {"role": "view"}).status_code == 405
    assert APIClient().get(URL).status_code == 401
