"""Binding a cluster set to a namespace (and unbinding it): a ManagedClusterSetBinding created or deleted on
the hub, read back with the kubernetes client, then the row; namespaces are RFC 1123 labels; only admins of
the set may (staging_admin here); audited."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from kubernetes.client import CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from demohub import DemoHub
from inventory import editing
from inventory.hubclient import HubError
from inventory.models import AuditEntry, ManagedClusterSetBinding

pytestmark = pytest.mark.django_db

OCM_GROUP, PLURAL = "cluster.open-cluster-management.io", "managedclustersetbindings"


def on_hub(custom_objects: CustomObjectsApi, namespace: str, name: str = "staging") -> dict | None:
    try:
        return custom_objects.get_namespaced_custom_object(OCM_GROUP, "v1beta2", namespace, PLURAL, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_bind_creates_the_binding_on_the_hub_then_the_row(staging, staging_admin, custom_objects) -> None:
    binding = editing.bind(staging, "team-a", actor=staging_admin)

    created = on_hub(custom_objects, "team-a")
    assert created["spec"] == {"clusterSet": "staging"}
    assert (binding.namespace, binding.name, binding.cluster_set) == ("team-a", "staging", "staging")
    assert (binding.uid, binding.resource_version) == (
        created["metadata"]["uid"],
        created["metadata"]["resourceVersion"],
    )
    entry = AuditEntry.objects.get(action="clusterset.bind")
    assert (entry.target_type, entry.target_id, entry.outcome) == (
        "inventory.managedclusterset",
        str(staging.pk),
        AuditEntry.Outcome.OK,
    )
    assert (entry.before, entry.after) == (None, {"namespace": "team-a", "clusterSet": "staging"})


def test_unbind_deletes_it_on_the_hub_then_the_row(staging, staging_admin, custom_objects) -> None:
    binding = editing.bind(staging, "team-a", actor=staging_admin)
    editing.unbind(binding, actor=staging_admin)
    assert on_hub(custom_objects, "team-a") is None
    assert not ManagedClusterSetBinding.objects.filter(pk=binding.pk).exists()
    entry = AuditEntry.objects.get(action="clusterset.unbind")
    assert (entry.before, entry.after, entry.outcome) == (
        {"namespace": "team-a", "clusterSet": "staging"},
        None,
        AuditEntry.Outcome.OK,
    )


def test_a_binding_the_hub_no_longer_has_is_removed_here_as_a_no_op(
    demo_hub: DemoHub, staging, staging_admin
) -> None:
    binding = editing.bind(staging, "team-a", actor=staging_admin)
    demo_hub.store.delete("ManagedClusterSetBinding", "staging", namespace="team-a")
    editing.unbind(binding, actor=staging_admin)
    assert not ManagedClusterSetBinding.objects.filter(pk=binding.pk).exists()
    assert AuditEntry.objects.get(action="clusterset.unbind").outcome == AuditEntry.Outcome.NO_OP


@pytest.mark.parametrize(
    ("namespace", "reason"),
    [
        ("", "Required value"),
        (
            "Team_A",
            'Invalid value: "Team_A": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric character",
        ),
        ("a.b", 'Invalid value: "a.b": a lowercase RFC 1123 label must consist'),
        ("n" * 64, f'Invalid value: "{"n" * 64}": must be no more than 63 characters'),
        (["team-a"], 'Invalid value: ["team-a"]: must be a string'),
    ],
)
def test_namespaces_are_rfc_1123_labels(
    staging, staging_admin, custom_objects, namespace, reason: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        editing.bind(staging, namespace, actor=staging_admin)
    [message] = caught.value.message_dict["namespace"]
    assert message.startswith(reason)
    assert not AuditEntry.objects.exists()


def test_binding_twice_is_refused_before_the_hub_is_asked(staging, staging_admin) -> None:
    editing.bind(staging, "team-a", actor=staging_admin)
    with pytest.raises(ValidationError) as caught:
        editing.bind(staging, "team-a", actor=staging_admin)
    assert caught.value.message_dict == {"namespace": ['Duplicate value: "team-a": already bound']}


def test_without_the_admin_role_nothing_is_written_and_the_refusal_is_audited(
    staging, refused_binder: User, custom_objects
) -> None:
    with pytest.raises(PermissionDenied):
        editing.bind(staging, "team-a", actor=refused_binder)
    assert on_hub(custom_objects, "team-a") is None
    assert not ManagedClusterSetBinding.objects.filter(namespace="team-a").exists()
    existing = ManagedClusterSetBinding.objects.filter(hub=staging.hub, cluster_set="staging").first()
    with pytest.raises(PermissionDenied):
        editing.unbind(existing, actor=refused_binder)
    assert ManagedClusterSetBinding.objects.filter(pk=existing.pk).exists()
    assert list(AuditEntry.objects.values_list("action", "outcome")) == [
        ("clusterset.unbind", "denied"),
        ("clusterset.bind", "denied"),
    ]


def test_a_hub_error_creates_no_row_and_is_audited_as_failed(
    demo_hub: DemoHub, staging, staging_admin
) -> None:
    demo_hub.fail_next(1, 403)
    with pytest.raises(HubError, match="HTTP 403"):
        editing.bind(staging, "team-a", actor=staging_admin)
    assert not ManagedClusterSetBinding.objects.filter(namespace="team-a").exists()
    entry = AuditEntry.objects.get(action="clusterset.bind")
    assert entry.outcome == AuditEntry.Outcome.FAILED and "HTTP 403" in entry.hub_answer
