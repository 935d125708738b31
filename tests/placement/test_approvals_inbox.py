"""What the inbox lists and shows: open requests of every hub and of the dashboard, their run's stage,
clusters and waiting time, who may approve, and the navigation count."""

from datetime import UTC, datetime

import pytest
from django.http import QueryDict

from inventory.models import Hub
from placement.models import ApprovalRequest, Owner
from placement.rollouts import approvals
from placement.rollouts.filtersets import ApprovalRequestFilterSet
from tests.factories import HubFactory, UserFactory
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    EAST_PROD,
    VIEW,
    approval_request,
    east_fixture,
    role_holder,
)

pytestmark = pytest.mark.django_db


def test_the_inbox_holds_pending_and_approved_requests_of_hubs_and_the_dashboard(east: Hub) -> None:
    viewer = role_holder(east, "prod", VIEW)
    approval_request(east, "a", state="pending")
    approval_request(east, "b", state="approved", owner=Owner.DASHBOARD)
    approval_request(east, "c", state="accepted")
    assert [r.name for r in approvals.pending_approvals(viewer)] == ["a", "b"]
    assert approvals.pending_count(viewer) == 1


def test_an_entry_shows_the_stage_clusters_task_and_the_time_the_run_created_the_request(east: Hub) -> None:
    row = approval_request(east, "r-after-prod")
    [entry] = approvals.inbox_entries([row], role_holder(east, "prod"))
    assert (entry.task, entry.clusters) == ("after", EAST_PROD)
    assert entry.waiting_since == datetime(2026, 11, 20, 11, 35, tzinfo=UTC)
    assert entry.can_approve


@pytest.mark.parametrize(
    ("labels", "task_list", "task"),
    [
        ({"kubernetes-fleet.io/taskType": "beforeStage"}, "afterStageTaskStatus", "before"),  # the label wins
        ({}, "beforeStageTaskStatus", "before"),
        ({}, "afterStageTaskStatus", "after"),
    ],
)
def test_before_or_after_comes_from_the_label_else_from_the_runs_task_lists(
    east: Hub, labels: dict, task_list: str, task: str
) -> None:
    row = approval_request(east, "r", ["c1"], labels=labels, task_list=task_list)
    assert approvals.task_kind(row) == task


def test_without_its_run_an_entry_waits_since_the_request_was_first_seen_and_lists_no_clusters(
    east: Hub,
) -> None:
    row = ApprovalRequest.objects.create(hub=east, owner=Owner.HUB, name="orphan")
    [entry] = approvals.inbox_entries([row], UserFactory())
    assert (entry.task, entry.clusters, entry.waiting_since) == ("after", (), row.created)
    assert not entry.can_approve


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("", ["a", "b"]),
        ("state=", ["a", "b"]),
        ("state=accepted", ["c"]),
        ("state=all", ["a", "b", "c"]),
        ("hub=west", ["b"]),
        ("q=run-c&state=all", ["c"]),
    ],
)
def test_the_filter_defaults_to_open_requests(east: Hub, query: str, names: list[str]) -> None:
    approval_request(east, "a", state="pending")
    approval_request(HubFactory(name="west"), "b", state="approved")
    approval_request(east, "c", state="accepted")
    root = UserFactory(is_superuser=True)  # sees every hub's requests
    filterset = ApprovalRequestFilterSet(QueryDict(query), queryset=approvals.visible_requests(root))
    assert filterset.is_valid()
    assert [row.name for row in filterset.qs] == names
