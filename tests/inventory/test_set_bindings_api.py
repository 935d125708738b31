"""POST /api/cluster-set-bindings/ binds a set to a namespace on its hub; DELETE unbinds it (admins of the
set); 400 naming the field, 403 when not allowed, 502 when the hub refuses."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from demohub import DemoHub
from inventory.models import AuditEntry, ManagedClusterSetBinding
from tests.factories import ManagedClusterSetBindingFactory, UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/cluster-set-bindings/"


def api(user: User | None = None) -> APIClient:
    client = APIClient()
    client.force_authenticate(user or UserFactory(username="root", is_superuser=True, is_staff=True))
    return client


def test_an_admin_of_the_set_posts_to_bind_and_deletes_to_unbind(
    demo_hub: DemoHub, staging, staging_admin: User
) -> None:
    response = api(staging_admin).post(URL, {"cluster_set": staging.pk, "namespace": "team-a"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["namespace"], body["name"], body["cluster_set"], body["hub"]) == (
        "team-a",
        "staging",
        "staging",
        "demo",
    )
    assert demo_hub.store.get("ManagedClusterSetBinding", "staging", namespace="team-a")
    deleted = api(staging_admin).delete(f"{URL}{body['id']}/")
    assert deleted.status_code == 204
    assert not ManagedClusterSetBinding.objects.filter(pk=body["id"]).exists()
    assert demo_hub.store.names("ManagedClusterSetBinding", namespace="team-a") == []
    actions = list(AuditEntry.objects.values_list("action", flat=True))
    assert actions == ["clusterset.unbind", "clusterset.bind"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"namespace": "team-a"}, "cluster_set"),
        ({"cluster_set": 999999, "namespace": "team-a"}, "cluster_set"),
        ({"cluster_set": "staging", "namespace": "Team_A"}, "namespace"),
        ({"cluster_set": "staging", "namespace": ""}, "namespace"),
        ({"cluster_set": "staging"}, "namespace"),
    ],
)
def test_invalid_input_answers_400_naming_the_field(staging, body: dict, field: str) -> None:
    if body.get("cluster_set") == "staging":
        body = {**body, "cluster_set": staging.pk}
    response = api().post(URL, body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert not ManagedClusterSetBinding.objects.filter(namespace="team-a").exists()


def test_not_allowed_answers_403_and_writes_nothing(demo_hub: DemoHub, staging, refused_binder: User) -> None:
    refused = api(refused_binder)
    response = refused.post(URL, {"cluster_set": staging.pk, "namespace": "team-a"}, format="json")
    assert response.status_code == 403
    binding = ManagedClusterSetBinding.objects.get(hub=staging.hub, cluster_set="staging")
    assert refused.delete(f"{URL}{binding.pk}/").status_code == 403
    assert demo_hub.store.names("ManagedClusterSetBinding", namespace="team-a") == []
    assert ManagedClusterSetBinding.objects.filter(pk=binding.pk).exists()


def test_a_hub_refusal_answers_502(demo_hub: DemoHub, staging) -> None:
    demo_hub.fail_next(1, 500)
    response = api().post(URL, {"cluster_set": staging.pk, "namespace": "team-a"}, format="json")
    assert response.status_code == 502 and "HTTP 500" in response.json()["detail"]
    assert not ManagedClusterSetBinding.objects.filter(namespace="team-a").exists()


def test_a_binding_of_a_set_the_hub_does_not_have_is_left_to_the_hub(staging) -> None:
    ghost = ManagedClusterSetBindingFactory(hub=staging.hub, namespace="team-a", name="ghost")
    response = api().delete(f"{URL}{ghost.pk}/")
    assert response.status_code == 400
    assert response.json() == {"cluster_set": ["cluster set ghost is not on hub demo; unbind it there"]}
    assert ManagedClusterSetBinding.objects.filter(pk=ghost.pk).exists()
