"""Two people press Approve at the same moment (threads, each with its own PostgreSQL connection): one
approval and one no-op, both audited, and the row lock keeps their hub calls from interleaving."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from demohub import DemoHub
from inventory.hubclient import HubClient
from inventory.models import AuditEntry, Hub
from placement.models import ApprovalRequest, Owner
from placement.rollouts import approvals
from placement.rollouts import runs as rollouts
from placement.rollouts.approvals import ApprovalResult
from tests.factories import synced_demo_hub_row
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    STAGING,
    approval_request,
    east_fixture,
    role_holder,
)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

REQUEST = "batch-jobs-rollout-1-after-staging"  # its stage updates the demo hub's staging clusters


@pytest.fixture
def approvers(database_url: str) -> Callable[[Hub, str], list[User]]:
    """Ana and Ben, each an admin of the hub's set `set_name` (which holds the stage's clusters)."""
    return lambda hub, set_name: [role_holder(hub, set_name, username=name) for name in ("ana", "ben")]


def at_once(row: ApprovalRequest, users: list[User]) -> dict[str, ApprovalResult]:
    """Each user approves `row` in a thread of their own, released together."""
    results: dict[str, ApprovalResult] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(len(users))

    def approve(user: User) -> None:
        try:
            start.wait()
            results[user.username] = approvals.approve(ApprovalRequest.objects.get(pk=row.pk), user)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    return results


def logged(monkeypatch: pytest.MonkeyPatch, name: str, calls: list[tuple[str, str]]) -> None:
    """Record which thread calls HubClient.`name`, slowing reads so an unserialised approver would overlap."""
    original: Callable[..., Any] = getattr(HubClient, name)

    def wrapper(self: HubClient, *args: Any, **kwargs: Any) -> Any:
        calls.append((threading.current_thread().name, name))
        if name == "get_object":
            threading.Event().wait(0.1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HubClient, name, wrapper)


def test_hub_owned_one_approval_one_no_op_and_no_interleaving(
    demo_hub: DemoHub, approvers: Callable[[Hub, str], list[User]], monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = synced_demo_hub_row(demo_hub)
    row = ApprovalRequest.objects.get(hub=hub, name=REQUEST)
    calls: list[tuple[str, str]] = []
    for name in ("get_object", "patch_object"):
        logged(monkeypatch, name, calls)

    results = at_once(row, approvers(hub, STAGING))

    assert sorted(r.outcome for r in results.values()) == ["no-op", "ok"]
    assert {r.state for r in results.values()} == {"approved"}  # both see the final state
    first = next(thread for thread, _ in calls)
    ops = [(thread == first, op) for thread, op in calls]
    assert ops == [
        (True, "get_object"),
        (True, "patch_object"),
        (True, "get_object"),
        (False, "get_object"),
    ]
    conditions = demo_hub.store.get("ClusterApprovalRequest", REQUEST)["status"]["conditions"]
    assert [c["type"] for c in conditions] == ["Approved"]
    entries = AuditEntry.objects.filter(action=approvals.ACTION)
    assert sorted(entries.values_list("actor_name", "outcome")) == sorted(
        (name, result.outcome) for name, result in results.items()
    )


def test_dashboard_owned_one_approval_one_no_op(
    east: Hub, approvers: Callable[[Hub, str], list[User]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: True)
    row = approval_request(east, "web-rollout-after-prod", owner=Owner.DASHBOARD)

    results = at_once(row, approvers(east, "prod"))

    assert sorted(r.outcome for r in results.values()) == ["no-op", "ok"]
    row.refresh_from_db()
    assert [c["type"] for c in row.status["conditions"]] == ["Approved"]
    assert row.state == ApprovalRequest.State.APPROVED
