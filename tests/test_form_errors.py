"""Every form shows a bad value's error next to its field: the input is aria-invalid and names the error
(and its help text) in aria-describedby, the error follows the input inside the same field; errors of no
one field are at the top of the form."""

import re

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from inventory.models import ClusterSetRole, Hub, ManagedClusterSet
from placement import service
from placement.models import Placement
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    UserFactory,
)
from tests.manifest_roles import manifests_fixture, ops_fixture  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def assert_error_next_to(response: HttpResponse, name: str, message: str) -> None:
    """The field `name` is invalid, described by its error, and the error follows it in its field."""
    html = response.content.decode()
    field = re.search(
        rf'<div class="form-field has-error">\s*<label for="(?P<id>[^"]+)">.*?</label>\s*'
        rf'(?P<input><(?:input|select|textarea)[^>]*\bname="{name}"[^>]*>)(?P<rest>.*?)</div>\s*</div>',
        html,
        re.S,
    )
    assert field is not None, f"no invalid field {name}"
    widget, field_id = field["input"], field["id"]
    assert 'aria-invalid="true"' in widget
    described = re.search(r'aria-describedby="([^"]+)"', widget)
    assert described is not None and f"{field_id}_error" in described[1].split()
    errors_list = f'<div id="{field_id}_error"><ul class="error field-errors" id="{name}-errors"><li>'
    assert errors_list in field["rest"]
    errors = field["rest"].split(f'id="{name}-errors">', 1)[1]
    assert message in errors, errors


def test_new_placement(client: Client, ops: User, manifests: Hub) -> None:
    data = {"hub": manifests.pk, "kind": "Placement", "namespace": "web", "name": "Not_A_Name", "spec": ""}
    response = client.post(reverse("placement:placement-create"), data)
    assert_error_next_to(response, "name", "metadata.name: Invalid value: &quot;Not_A_Name&quot;")


def test_edit_spec(client: Client, ops: User, manifests: Hub) -> None:
    shop = service.create_placement(
        kind="Placement", hub=manifests, namespace="web", name="shop", spec={}, actor="test"
    )
    url = reverse("placement:placement-edit", args=[shop.pk])
    response = client.post(url, {"spec": "numberOfClusters: [1"})
    assert_error_next_to(response, "spec", "spec: invalid YAML")
    assert Placement.objects.get(pk=shop.pk).spec == {}


def test_upload(client: Client, ops: User) -> None:
    upload = SimpleUploadedFile("shop.yaml", b"kind: Placement\n")
    response = client.post(reverse("placement:placement-upload"), {"hub": 999999, "manifests": upload})
    assert_error_next_to(response, "hub", "Select a valid choice.")


def test_strategy(client: Client, ops: User, manifests: Hub) -> None:
    response = client.post(
        reverse("rollouts:strategy-create"), {"hub": manifests.pk, "name": "s", "spec": "stages: ["}
    )
    assert_error_next_to(response, "spec", "invalid YAML")


def test_run(client: Client, ops: User, manifests: Hub) -> None:
    fields = {"hub": manifests.pk, "name": "r", "placement_name": "checkout", "state": "Sideways"}
    response = client.post(reverse("rollouts:run-create"), fields)
    assert_error_next_to(response, "state", "Select a valid choice. Sideways is not one of the available")


@pytest.fixture
def prod(client: Client) -> ManagedClusterSet:
    """Cluster set prod on hub east, its admin signed in."""
    cluster_set = ManagedClusterSetFactory(hub=HubFactory(name="east"), name="prod")
    owner = UserFactory(username="owner")
    ClusterSetRoleFactory(cluster_set=cluster_set, role=ClusterSetRole.Role.ADMIN, user=owner)
    client.force_login(owner)
    return cluster_set


def test_access_grant(client: Client, prod: ManagedClusterSet) -> None:
    url = reverse("inventory:clusterset-access", args=[prod.pk])
    response = client.post(url, {"kind": "user", "name": "ghost", "role": "view"}, **HTMX)
    assert_error_next_to(response, "name", "No user named &#x27;ghost&#x27;.")


def test_access_change_marks_its_row_select_invalid(client: Client, prod: ManagedClusterSet) -> None:
    row = ClusterSetRole.objects.get(cluster_set=prod)
    url = reverse("inventory:clusterset-access-change", args=[prod.pk, row.pk])
    html = client.post(url, {"role": "emperor"}, **HTMX).content.decode()
    select = re.search(rf'<select name="role" id="role-{row.pk}-role"[^>]*>', html)
    assert select is not None
    assert 'aria-invalid="true"' in select[0] and f'aria-describedby="role-{row.pk}-errors"' in select[0]


def test_binding(client: Client, prod: ManagedClusterSet) -> None:
    url = reverse("inventory:clusterset-bind", args=[prod.pk])
    response = client.post(url, {"namespace": "Team_A"}, **HTMX)
    assert_error_next_to(response, "namespace", "Invalid value: &quot;Team_A&quot;")


def test_login(client: Client, db: None) -> None:
    response = client.post(reverse("login"), {"username": "nobody", "password": ""})
    assert_error_next_to(response, "password", "This field is required.")

    UserFactory(username="someone")
    response = client.post(reverse("login"), {"username": "someone", "password": "wrong"})
    html = response.content.decode()
    top = re.search(r'<ul class="error" id="form-errors" role="alert"><li>(.*?)</li>', html)
    assert top is not None and "Please enter a correct username and password" in top[1]
    assert html.index('id="form-errors"') < html.index('name="username"')
