"""Approve on the real hub: a staged update run's ClusterApprovalRequest, synced into the inbox, approved
through the Approve button's view as `kubectl fleet approve` approves it (KubeFleet v0.1.2
tools/fleet/cmd/approve: the Approved condition, reason ClusterApprovalRequestApproved, observedGeneration
the request's generation, written to the status subresource), with the least-privilege token; a second
Approve is a no-op that writes nothing."""

from __future__ import annotations

import kubernetes
import pytest
from django.test import Client
from django.urls import reverse

from inventory.models import AuditEntry, Hub
from inventory.sync import sync_hub
from placement.models import ApprovalRequest, Owner
from placement.rollouts import approvals
from tests.factories import UserFactory
from tests.realhub import objects
from tests.realhub.hub import RealHub

pytestmark = [pytest.mark.realhub, pytest.mark.django_db]


def test_approve_writes_kubectl_fleet_approves_condition_and_a_second_approve_is_a_no_op(
    empty_hub: RealHub, hub_client: kubernetes.client.ApiClient, registered_hub: Hub, client: Client
) -> None:
    [request] = objects.seed_fleet(hub_client, 6, seed=7)["ClusterApprovalRequest"]
    name = request["metadata"]["name"]
    sync_hub(registered_hub, trigger="command")
    row = ApprovalRequest.objects.get(hub=registered_hub, name=name)
    assert row.owner == Owner.HUB and row.state == ApprovalRequest.State.PENDING and row.run is not None
    approver = UserFactory(username="approver", is_superuser=True)
    client.force_login(approver)
    assert name in client.get(reverse("rollouts:approval-list")).content.decode()

    answer = client.post(reverse("rollouts:approval-approve", args=[row.pk]))

    assert answer.status_code == 302, answer.content.decode()
    approved = objects.get(hub_client, "ClusterApprovalRequest", name)
    [condition] = approved["status"]["conditions"]
    assert condition["type"] == "Approved" and condition["status"] == "True"
    assert condition["reason"] == "ClusterApprovalRequestApproved"
    assert condition["message"] == "ClusterApprovalRequest has been approved"
    assert (
        condition["observedGeneration"]
        == approved["metadata"]["generation"]
        == request["metadata"]["generation"]
    )
    # the spec is the controller's: only the status subresource was written
    assert (
        approved["spec"] == request["spec"]
        and approved["metadata"].get("labels") == request["metadata"]["labels"]
    )
    row.refresh_from_db()
    assert row.state == ApprovalRequest.State.APPROVED
    assert row.resource_version == approved["metadata"]["resourceVersion"]
    entry = AuditEntry.objects.get(action=approvals.ACTION)
    assert entry.outcome == AuditEntry.Outcome.OK and "Approved" in entry.hub_answer

    again = approvals.approve(row, approver)

    assert again.outcome == AuditEntry.Outcome.NO_OP
    assert (
        objects.get(hub_client, "ClusterApprovalRequest", name)["metadata"]["resourceVersion"]
        == approved["metadata"]["resourceVersion"]
    )
