"""What the inbox lists and shows: open requests of every hub and of the dashboard, their run's stage,
clusters and waiting time, who may approve, and the navigation count."""

from datetime import UTC, datetime
from typing import Any

import pytest
from django.http import QueryDict

from placement import approvals
from placement.filtersets import ApprovalRequestFilterSet
from placement.models import ApprovalRequest, Owner, StagedUpdateRun
from tests.factories import HubFactory, UserFactory

pytestmark = pytest.mark.django_db

CREATED = "2026-11-20T11:35:00Z"


def run_status(stage: str, task_list: str, request: str, clusters: list[str]) -> dict[str, Any]:
    task = {
        "type": "Approval",
        "approvalRequestName": request,
        "conditions": [{"type": "ApprovalRequestCreated", "status": "True", "lastTransitionTime": CREATED}],
    }
    stage_status = {"stageName": stage, "clusters": [{"clusterName": c} for c in clusters], task_list: [task]}
    return {"stagesStatus": [{"stageName": "other", "clusters": [{"clusterName": "x"}]}, stage_status]}


def make_request(name: str, *, state: str = "pending", owner: str = Owner.HUB, labels: dict | None = None,
                 run_status_: dict | None = None, hub_name: str = "east") -> ApprovalRequest:
    hub = HubFactory(name=hub_name)
    run = None
    if run_status_ is not None:
        run = StagedUpdateRun.objects.create(hub=hub, owner=owner, name=f"run-{name}", status=run_status_)
    return ApprovalRequest.objects.create(
        hub=hub, owner=owner, name=name, state=state, run=run, labels=labels or {},
        spec={"parentStageRollout": f"run-{name}", "targetStage": "prod"},
    )


def test_the_inbox_holds_pending_and_approved_requests_of_hubs_and_the_dashboard() -> None:
    user = UserFactory()
    make_request("a", state="pending")
    make_request("b", state="approved", owner=Owner.DASHBOARD)
    make_request("c", state="accepted")
    assert [r.name for r in approvals.pending_approvals(user)] == ["a", "b"]
    assert approvals.pending_count() == 1


def test_an_entry_shows_the_stage_clusters_task_and_the_time_the_run_created_the_request() -> None:
    clusters = ["prod-1", "prod-2", "prod-3", "prod-4"]
    status = run_status("prod", "afterStageTaskStatus", "r-after-prod", clusters)
    row = make_request("r-after-prod", run_status_=status)
    [entry] = approvals.inbox_entries([row], UserFactory(is_staff=True))
    assert (entry.task, entry.clusters) == ("after", tuple(clusters))
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
    labels: dict, task_list: str, task: str
) -> None:
    row = make_request("r", labels=labels, run_status_=run_status("prod", task_list, "r", ["c1"]))
    assert approvals.task_kind(row) == task


def test_without_its_run_an_entry_waits_since_the_request_was_first_seen_and_lists_no_clusters() -> None:
    row = make_request("orphan")
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
def test_the_filter_defaults_to_open_requests(query: str, names: list[str]) -> None:
    make_request("a", state="pending")
    make_request("b", state="approved", hub_name="west")
    make_request("c", state="accepted")
    filterset = ApprovalRequestFilterSet(QueryDict(query), queryset=approvals.visible_requests(UserFactory()))
    assert filterset.is_valid()
    assert [row.name for row in filterset.qs] == names
