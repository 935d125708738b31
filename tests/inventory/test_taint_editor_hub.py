"""Saving taints: a JSON merge patch of spec.taints on the hub, read back with the kubernetes client; the
row refreshed from the hub's answer; every attempt audited; only admins of a set holding the cluster may
(gpu_admin here), and a refusal changes nothing here."""

import json

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from kubernetes.client import CustomObjectsApi

from demohub import DemoHub
from inventory import editing
from inventory.hubclient import HubError
from inventory.models import AuditEntry, ClusterSetRole, Hub, ManagedCluster, ManagedClusterSet
from tests.factories import ClusterSetRoleFactory, GroupFactory, UserFactory

pytestmark = pytest.mark.django_db

OCM_GROUP, FLEET_GROUP = "cluster.open-cluster-management.io", "cluster.kubernetes-fleet.io"
GPU_CLUSTER = "aks-northeurope-dev-021"  # seeded with the taint dedicated=gpu:NoSelect; in set gpu-clusters


@pytest.fixture
def hub(synced_hub: Hub) -> Hub:
    return synced_hub


def ocm_cluster(hub: Hub, name: str = GPU_CLUSTER) -> ManagedCluster:
    return ManagedCluster.objects.get(hub=hub, kind=ManagedCluster.Kind.MANAGED_CLUSTER, name=name)


def hub_taints(custom_objects: CustomObjectsApi, name: str = GPU_CLUSTER, fleet: bool = False) -> list:
    group, plural = (FLEET_GROUP, "memberclusters") if fleet else (OCM_GROUP, "managedclusters")
    obj = custom_objects.get_cluster_custom_object(group, "v1beta1" if fleet else "v1", plural, name)
    return obj["spec"].get("taints")


def test_a_save_patches_the_hub_keeps_time_added_of_unchanged_taints_and_refreshes_the_row(
    hub: Hub, gpu_admin, custom_objects: CustomObjectsApi
) -> None:
    cluster = ocm_cluster(hub)
    before = cluster.taints
    stamped = before[0]["timeAdded"]
    editing.save_taints(
        cluster,
        [
            {"key": "dedicated", "value": "gpu", "effect": "NoSelect"},
            {"key": "example.com/maintenance", "value": "window-3", "effect": "NoSelectIfNew"},
        ],
        actor=gpu_admin,
    )

    on_hub = hub_taints(custom_objects)
    assert on_hub == [
        {"key": "dedicated", "value": "gpu", "effect": "NoSelect", "timeAdded": stamped},
        # the demo hub does not stamp new taints (a real hub's webhook does): blank until it does
        {"key": "example.com/maintenance", "value": "window-3", "effect": "NoSelectIfNew"},
    ]
    cluster.refresh_from_db()
    assert cluster.taints == on_hub
    assert cluster.taint_keys == ",dedicated,example.com/maintenance,"
    entry = AuditEntry.objects.get(action="cluster.taints")
    assert (entry.actor, entry.outcome, entry.hub_id) == (gpu_admin, AuditEntry.Outcome.OK, hub.pk)
    assert (entry.before, entry.after) == (before, on_hub)
    answer = json.loads(entry.hub_answer)
    assert answer == {"resourceVersion": cluster.resource_version, "taints": on_hub}


def test_removing_every_taint_and_tainting_a_fleet_member(hub: Hub, gpu_admin, custom_objects) -> None:
    editing.save_taints(ocm_cluster(hub), [], actor=gpu_admin)
    assert hub_taints(custom_objects) == []
    member = ManagedCluster.objects.get(hub=hub, kind=ManagedCluster.Kind.MEMBER_CLUSTER, name=GPU_CLUSTER)
    spot = {"key": "example.com/spot", "value": "true", "effect": "NoSchedule"}
    editing.save_taints(member, [spot], actor=gpu_admin)  # an admin of its OCM namesake's set
    assert hub_taints(custom_objects, fleet=True) == [spot]
    member.refresh_from_db()
    assert member.taints == [spot]


def test_a_hub_error_changes_nothing_here_and_is_audited_as_failed(
    demo_hub: DemoHub, hub: Hub, gpu_admin, custom_objects
) -> None:
    cluster = ocm_cluster(hub)
    before, version = cluster.taints, cluster.resource_version
    demo_hub.fail_next(1, 500)
    with pytest.raises(HubError, match="HTTP 500"):
        editing.save_taints(cluster, [], actor=gpu_admin)
    cluster.refresh_from_db()
    assert (cluster.taints, cluster.resource_version) == (before, version)
    assert hub_taints(custom_objects) == before
    entry = AuditEntry.objects.get(action="cluster.taints")
    assert (entry.outcome, entry.before, entry.after) == (AuditEntry.Outcome.FAILED, before, [])
    assert "HTTP 500" in entry.hub_answer


def test_a_cluster_changed_on_the_hub_meanwhile_is_a_conflict_and_is_reloaded(
    demo_hub: DemoHub, hub: Hub, gpu_admin, custom_objects
) -> None:
    cluster = ocm_cluster(hub)
    elsewhere = [{"key": "added-elsewhere", "effect": "NoSelect"}]
    demo_hub.store.patch("ManagedCluster", GPU_CLUSTER, {"spec": {"taints": elsewhere}})
    with pytest.raises(HubError) as caught:
        editing.save_taints(cluster, [], actor=gpu_admin)
    assert caught.value.status == 409
    assert "the object has been modified" in str(caught.value)  # the hub's own reason
    assert hub_taints(custom_objects) == elsewhere
    cluster.refresh_from_db()
    assert cluster.taints == elsewhere


def test_without_the_admin_role_nothing_is_written_and_the_refusal_is_audited(
    hub: Hub, refused_taint_editor: User, custom_objects
) -> None:
    cluster = ocm_cluster(hub)
    before = cluster.taints
    with pytest.raises(PermissionDenied):
        editing.save_taints(cluster, [], actor=refused_taint_editor)
    assert hub_taints(custom_objects) == before
    cluster.refresh_from_db()
    assert cluster.taints == before
    entry = AuditEntry.objects.get(action="cluster.taints")
    assert (entry.actor, entry.outcome) == (refused_taint_editor, AuditEntry.Outcome.DENIED)


def test_a_group_admin_role_allows_it_and_invalid_input_never_reaches_the_hub(
    hub: Hub, custom_objects
) -> None:
    sre = GroupFactory(name="sre")
    gpu_clusters = ManagedClusterSet.objects.get(hub=hub, name="gpu-clusters")
    ClusterSetRoleFactory(cluster_set=gpu_clusters, group=sre, user=None, role=ClusterSetRole.Role.ADMIN)
    editor = UserFactory(username="editor")
    editor.groups.add(sre)
    cluster = ocm_cluster(hub)
    with pytest.raises(ValidationError):
        editing.save_taints(cluster, [{"key": "no spaces please", "effect": "NoSelect"}], actor=editor)
    assert not AuditEntry.objects.exists()
    editing.save_taints(cluster, [{"key": "ok", "effect": "PreferNoSelect"}], actor=editor)
    assert hub_taints(custom_objects) == [{"key": "ok", "effect": "PreferNoSelect"}]
