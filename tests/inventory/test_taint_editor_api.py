"""PATCH /api/clusters/<id>/taints/ (the full list) and its preview: admins of a set holding the cluster;
400 naming the field, 403 when not allowed, 409/502 when the hub refuses; nothing changes unless the hub
accepted."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from demohub import DemoHub
from inventory.models import AuditEntry, Hub, ManagedCluster, ManagedClusterSet
from tests.factories import ClusterSetRoleFactory, UserFactory

pytestmark = pytest.mark.django_db

GPU_CLUSTER = "aks-northeurope-dev-021"
DRAIN = {"key": "example.com/drain", "effect": "NoSelect"}


@pytest.fixture
def cluster(synced_hub: Hub) -> ManagedCluster:
    return ManagedCluster.objects.get(hub=synced_hub, kind="ManagedCluster", name=GPU_CLUSTER)


def api(user: User | None = None) -> APIClient:
    client = APIClient()
    client.force_authenticate(user or UserFactory(username="root", is_superuser=True, is_staff=True))
    return client


def viewer_of(cluster: ManagedCluster, username: str = "viewer") -> User:
    """A user who sees the cluster (a view role on one of its sets) but may not edit it."""
    cluster_set = ManagedClusterSet.objects.get(hub=cluster.hub, memberships__cluster=cluster, name="global")
    return ClusterSetRoleFactory(cluster_set=cluster_set, user=UserFactory(username=username)).user


def url(cluster: ManagedCluster, preview: bool = False) -> str:
    return f"/api/clusters/{cluster.pk}/taints/{'preview/' if preview else ''}"


def test_an_admin_of_its_set_patches_the_taints_on_the_hub_and_gets_the_refreshed_cluster(
    demo_hub: DemoHub, cluster: ManagedCluster, gpu_admin: User
) -> None:
    response = api(gpu_admin).patch(url(cluster), {"taints": [DRAIN]}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["taints"] == [DRAIN] and body["name"] == GPU_CLUSTER
    assert demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"] == [DRAIN]
    assert (
        body["resource_version"]
        == demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["metadata"]["resourceVersion"]
    )
    assert AuditEntry.objects.get(action="cluster.taints").actor_name == "gpu-admin"


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"taints": [{"key": "a/b/c", "effect": "NoSelect"}]}, ["taints[0].key"]),
        (
            {"taints": [DRAIN, {"key": "ok", "value": "not ok", "effect": "Sometimes"}]},
            ["taints[1].value", "taints[1].effect"],
        ),
        ({"taints": "none"}, ["taints"]),
        ({}, ["taints"]),
        ([DRAIN, DRAIN], ["taints[1].key"]),  # a bare list is taken as the list
    ],
)
def test_invalid_input_answers_400_naming_each_field(demo_hub, cluster: ManagedCluster, body, errors) -> None:
    before = demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"]
    response = api().patch(url(cluster), body, format="json")
    assert response.status_code == 400
    assert sorted(response.json()) == sorted(errors)
    assert all(isinstance(reasons, list) and reasons for reasons in response.json().values())
    assert demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"] == before
    assert not AuditEntry.objects.exists()


def test_not_allowed_answers_403_and_writes_nothing(
    demo_hub: DemoHub, cluster: ManagedCluster, refused_taint_editor: User
) -> None:
    before = demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"]
    response = api(refused_taint_editor).patch(url(cluster), {"taints": []}, format="json")
    assert response.status_code == 403
    assert demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"] == before
    assert AuditEntry.objects.get().outcome == AuditEntry.Outcome.DENIED
    assert APIClient().patch(url(cluster), {"taints": []}, format="json").status_code == 401


def test_hub_refusals_answer_502_or_409_and_change_nothing(demo_hub, cluster: ManagedCluster) -> None:
    demo_hub.fail_next(1, 500)
    refused = api().patch(url(cluster), {"taints": []}, format="json")
    assert refused.status_code == 502 and "HTTP 500" in refused.json()["detail"]
    demo_hub.store.patch("ManagedCluster", GPU_CLUSTER, {"metadata": {"labels": {"touched": "yes"}}})
    conflict = api().patch(url(cluster), {"taints": []}, format="json")
    assert conflict.status_code == 409 and "the object has been modified" in conflict.json()["detail"]
    assert demo_hub.store.get("ManagedCluster", GPU_CLUSTER)["spec"]["taints"]
    assert list(AuditEntry.objects.values_list("outcome", flat=True)) == ["failed", "failed"]


def test_preview_answers_each_placement_verdict_and_writes_nothing(demo_fleet) -> None:
    cluster = ManagedCluster.objects.get(name="prod-use1-a")
    response = api().post(url(cluster, preview=True), {"taints": [DRAIN]}, format="json")
    assert response.status_code == 200
    frontend = next(row for row in response.json() if row["name"] == "frontend")
    assert frontend == {
        "id": frontend["id"],
        "kind": "Placement",
        "namespace": "web",
        "name": "frontend",
        "holds": True,
        "would_hold": False,
        "verdict": "drops",
        "reason": "taint example.com/drain:NoSelect is not tolerated",
    }
    cluster.refresh_from_db()
    assert cluster.taints == []
    bad = api().post(url(cluster, preview=True), {"taints": [{"key": "x"}]}, format="json")
    assert bad.status_code == 400 and list(bad.json()) == ["taints[0].effect"]
    denied = api(viewer_of(cluster)).post(url(cluster, preview=True), {"taints": []}, format="json")
    assert denied.status_code == 403
