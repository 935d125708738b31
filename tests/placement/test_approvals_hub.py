"""Approving a hub-owned ClusterApprovalRequest on the demo hub, read back with the `kubernetes` client.

The demo hub (runs_support) has a frozen clock and controllers that act only on `reconcile()`, so an
approval stays "approved" until the test lets the hub's run controller accept it. The request's stage
updates the hub's three staging clusters: admins of cluster set staging may approve it."""

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from kubernetes import client

from demohub import DemoHub
from inventory.hubclient import HubClient
from inventory.models import AuditEntry, Hub
from placement.models import ApprovalRequest
from placement.rollouts import approvals
from placement.scheduler.timeutil import parse_time
from tests.factories import GroupFactory, UserFactory, synced_demo_hub_row
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    GPU_CLUSTERS,
    STAGING,
    VIEW,
    fleet_hub_fixture,
    hub_row_fixture,
    role_holder,
)

pytestmark = pytest.mark.django_db

REQUEST = "batch-jobs-rollout-1-after-staging"
GROUP, VERSION, PLURAL = "placement.kubernetes-fleet.io", "v1beta1", "clusterapprovalrequests"
KUBECTL_APPROVED = {
    "type": "Approved",
    "status": "True",
    "reason": "ClusterApprovalRequestApproved",
    "message": "ClusterApprovalRequest has been approved",
}


@pytest.fixture
def api(fleet_hub: DemoHub) -> Iterator[client.CustomObjectsApi]:
    configuration = client.Configuration()
    configuration.host = fleet_hub.url
    with client.ApiClient(configuration) as api_client:
        yield client.CustomObjectsApi(api_client)


@pytest.fixture
def approver(hub_row: Hub) -> User:
    """Admin of staging, which holds the three clusters of the request's stage."""
    return role_holder(hub_row, STAGING, username="approver")


def on_hub(api: client.CustomObjectsApi) -> dict[str, Any]:
    return api.get_cluster_custom_object(GROUP, VERSION, PLURAL, REQUEST)


def stored(hub_row: Hub) -> ApprovalRequest:
    return ApprovalRequest.objects.get(hub=hub_row, name=REQUEST)


def set_conditions(fleet_hub: DemoHub, conditions: list[dict[str, Any]]) -> None:
    """What another writer (kubectl, a controller) does to the request's status on the hub."""
    body = {"status": {"conditions": conditions}}
    fleet_hub.store.patch("ClusterApprovalRequest", REQUEST, body, subresource="status")


def outcomes() -> list[str]:
    entries = AuditEntry.objects.filter(action=approvals.ACTION).order_by("pk")
    return list(entries.values_list("outcome", flat=True))


def test_the_approval_reaches_the_hub_exactly_as_kubectl_writes_it_then_is_accepted(
    hub_row: Hub, fleet_hub: DemoHub, api: client.CustomObjectsApi, approver: User
) -> None:
    assert stored(hub_row).state == ApprovalRequest.State.PENDING
    assert on_hub(api).get("status", {}).get("conditions") is None
    before = timezone.now().replace(microsecond=0)

    result = approvals.approve(stored(hub_row), approver)

    obj = on_hub(api)
    [condition] = obj["status"]["conditions"]
    condition = dict(condition)
    written = parse_time(condition.pop("lastTransitionTime"))
    assert before <= written <= datetime.now(UTC)
    assert condition == KUBECTL_APPROVED | {"observedGeneration": obj["metadata"]["generation"]}
    assert (result.outcome, result.state) == (AuditEntry.Outcome.OK, ApprovalRequest.State.APPROVED)
    row = stored(hub_row)
    assert (row.state, row.resource_version) == ("approved", obj["metadata"]["resourceVersion"])
    assert row.status == obj["status"]

    fleet_hub.reconcile()  # the hub's run controller acts on the approval
    accepted = {c["type"]: c for c in on_hub(api)["status"]["conditions"]}["ApprovalAccepted"]
    assert (accepted["status"], accepted["reason"]) == ("True", "ApprovalRequestApprovalAccepted")
    assert approvals.refresh_waiting([row]) == []
    assert stored(hub_row).state == ApprovalRequest.State.ACCEPTED


def test_the_audit_entry_names_the_actor_the_statuses_and_the_hubs_answer(
    hub_row: Hub, api: client.CustomObjectsApi, approver: User
) -> None:
    approvals.approve(stored(hub_row), approver)
    entry = AuditEntry.objects.get(action=approvals.ACTION)
    assert (entry.actor, entry.actor_name, entry.hub, entry.outcome) == (approver, "approver", hub_row, "ok")
    assert entry.target == REQUEST and entry.target_id == str(stored(hub_row).pk)
    assert entry.before == {} and entry.after == on_hub(api)["status"]
    version = stored(hub_row).resource_version
    assert entry.hub_answer.startswith(f"approved at generation 1, resourceVersion {version}:")


def test_approving_twice_is_a_no_op_that_writes_nothing_to_the_hub(
    hub_row: Hub, api: client.CustomObjectsApi, approver: User
) -> None:
    approvals.approve(stored(hub_row), approver)
    version = on_hub(api)["metadata"]["resourceVersion"]

    again = approvals.approve(stored(hub_row), role_holder(hub_row, STAGING, username="second"))

    assert (again.outcome, again.state) == (AuditEntry.Outcome.NO_OP, ApprovalRequest.State.APPROVED)
    assert again.message == f"{REQUEST} was already approved, waiting for acceptance; nothing to do."
    assert on_hub(api)["metadata"]["resourceVersion"] == version
    assert outcomes() == ["ok", "no-op"]


def test_a_stale_approval_is_pending_and_approving_rewrites_it_at_the_current_generation(
    hub_row: Hub, fleet_hub: DemoHub, api: client.CustomObjectsApi, approver: User
) -> None:
    stale = KUBECTL_APPROVED | {"observedGeneration": 1, "lastTransitionTime": "2026-11-20T10:00:00Z"}
    set_conditions(fleet_hub, [stale])
    # a spec change bumps the generation: the approval above is now for an older generation
    fleet_hub.store.patch("ClusterApprovalRequest", REQUEST, {"spec": {"note": "edited"}})
    fleet_hub.reconcile()
    assert [c["type"] for c in on_hub(api)["status"]["conditions"]] == ["Approved"]  # the hub ignored it
    synced_demo_hub_row(fleet_hub)
    assert stored(hub_row).state == ApprovalRequest.State.PENDING

    result = approvals.approve(stored(hub_row), approver)

    assert result.outcome == AuditEntry.Outcome.OK
    # meta.SetStatusCondition: the status did not flip, so lastTransitionTime stays
    assert on_hub(api)["status"]["conditions"] == [stale | {"observedGeneration": 2}]
    fleet_hub.reconcile()
    assert approvals.approval_state(on_hub(api)) == "accepted"


def test_a_concurrent_write_on_the_hub_is_read_again_and_kept(
    hub_row: Hub,
    fleet_hub: DemoHub,
    api: client.CustomObjectsApi,
    approver: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Someone else writes the object between our read and our patch: 409, read again, nothing lost."""
    read = HubClient.get_object
    reads = []

    def counted(self: HubClient, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
        obj = read(self, kind, name, namespace)
        reads.append(obj["metadata"]["resourceVersion"])
        return obj

    monkeypatch.setattr(HubClient, "get_object", counted)
    fleet_hub.conflict_next(1, kind="ClusterApprovalRequest")
    result = approvals.approve(stored(hub_row), approver)

    assert result.outcome == AuditEntry.Outcome.OK
    assert len(reads) == 3  # read, 409, read again, patch, read back
    conditions = on_hub(api)["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["DemoConcurrentWriter", "Approved"]


@pytest.mark.parametrize("failing", ["read", "patch"])
def test_a_hub_failure_is_an_error_and_nothing_is_approved(
    failing: str,
    hub_row: Hub,
    fleet_hub: DemoHub,
    api: client.CustomObjectsApi,
    approver: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if failing == "read":
        fleet_hub.fail_next(1)
    else:
        read = HubClient.get_object

        def read_then_fail(self: HubClient, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
            obj = read(self, kind, name, namespace)
            fleet_hub.fail_next(1)
            return obj

        monkeypatch.setattr(HubClient, "get_object", read_then_fail)

    with pytest.raises(approvals.ApprovalFailed, match=f"{REQUEST} was not approved: hub demo: .*HTTP 500"):
        approvals.approve(stored(hub_row), approver)

    assert on_hub(api).get("status", {}).get("conditions") is None
    assert stored(hub_row).state == ApprovalRequest.State.PENDING
    entry = AuditEntry.objects.get(action=approvals.ACTION)
    assert (entry.outcome, entry.actor) == (AuditEntry.Outcome.FAILED, approver)
    assert "HTTP 500" in entry.hub_answer


def staff_with_the_old_permission(_hub: Hub) -> User:
    """Staff with placement.change_approvalrequest: what approving needed before cluster-set roles."""
    user = UserFactory(username="staff", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_approvalrequest"))
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


REFUSED: dict[str, Callable[[Hub], User]] = {
    "the view role on staging": lambda hub: role_holder(hub, STAGING, VIEW),
    "admin of gpu-clusters, holding one of the stage's clusters": lambda hub: role_holder(hub, GPU_CLUSTERS),
    "staff with the model permission": staff_with_the_old_permission,
}


@pytest.mark.parametrize("who", REFUSED)
def test_a_user_without_the_admin_role_on_every_stage_cluster_is_refused_and_nothing_is_written(
    who: str, hub_row: Hub, api: client.CustomObjectsApi
) -> None:
    user = REFUSED[who](hub_row)
    version = on_hub(api)["metadata"]["resourceVersion"]

    with pytest.raises(PermissionDenied, match=re.escape(approvals.DENIED)):
        approvals.approve(stored(hub_row), user)

    assert on_hub(api)["metadata"]["resourceVersion"] == version
    assert stored(hub_row).state == ApprovalRequest.State.PENDING
    assert outcomes() == [AuditEntry.Outcome.DENIED]


@pytest.mark.parametrize(
    "user",
    [
        lambda hub: role_holder(hub, STAGING, group=GroupFactory(name="releasers")),
        lambda hub: UserFactory(is_superuser=True),
    ],
    ids=["a group's admin role on staging", "a superuser"],
)
def test_a_groups_admin_role_or_a_superuser_is_enough(user: Callable[[Hub], User], hub_row: Hub) -> None:
    assert approvals.approve(stored(hub_row), user(hub_row)).outcome == AuditEntry.Outcome.OK
