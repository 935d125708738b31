"""`/api/approvals/`: list and read with the inbox's fields, approve with 200 / 200 no-op / 403 / 502."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from demohub import DemoHub
from inventory.models import AuditEntry, Hub
from placement.models import ApprovalRequest
from placement.rollouts import approvals
from tests.factories import UserFactory, synced_demo_hub_row
from tests.placement.runs_support import STAGING, VIEW, role_holder

pytestmark = pytest.mark.django_db

REQUEST = "batch-jobs-rollout-1-after-staging"  # its stage updates the demo hub's staging clusters
HUB_FAULT = "Internal error occurred: fault injected by the demo hub"  # the demo hub's Status message


@pytest.fixture
def hub(demo_hub: DemoHub, tasks_in_process: None) -> Hub:
    return synced_demo_hub_row(demo_hub)


@pytest.fixture
def request_row(hub: Hub) -> ApprovalRequest:
    return ApprovalRequest.objects.get(hub=hub, name=REQUEST)


@pytest.fixture
def viewer(hub: Hub) -> User:
    return role_holder(hub, STAGING, VIEW, username="viewer")


@pytest.fixture
def approver(hub: Hub) -> User:
    return role_holder(hub, STAGING, username="ops")


def token_client(user: User) -> APIClient:
    """Scripts authenticate with a token (`manage.py drf_create_token`)."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def url(name: str, *args: object) -> str:
    return reverse(f"rollouts-api:{name}", args=args)


def test_the_list_and_detail_carry_what_the_inbox_shows(request_row: ApprovalRequest, viewer: User) -> None:
    api = token_client(viewer)
    body = api.get(url("approval-list")).json()
    assert body["count"] == 1
    [item] = body["results"]
    assert item == api.get(url("approval-detail", request_row.pk)).json()
    assert {k: item[k] for k in ("hub", "owner", "name", "run", "stage", "task", "state", "can_approve")} == {
        "hub": "demo",
        "owner": "hub",
        "name": REQUEST,
        "run": "batch-jobs-rollout-1",
        "stage": "staging",
        "task": "after",
        "state": "pending",
        "can_approve": False,
    }
    assert len(item["clusters"]) == 3 and item["waiting_since"].endswith("Z")
    assert item["generation"] == 1 and item["spec"]["targetStage"] == "staging"


def test_can_approve_is_true_for_an_admin_of_the_stages_clusters(
    request_row: ApprovalRequest, approver: User
) -> None:
    assert token_client(approver).get(url("approval-detail", request_row.pk)).json()["can_approve"] is True


def test_a_user_without_a_role_on_the_hub_sees_no_request(request_row: ApprovalRequest) -> None:
    api = token_client(UserFactory(username="stranger"))
    assert api.get(url("approval-list")).json()["count"] == 0
    assert api.get(url("approval-detail", request_row.pk)).status_code == 404


@pytest.mark.parametrize(
    ("query", "count"), [("", 1), ("?state=accepted", 0), ("?state=all", 1), ("?hub=demo", 1)]
)
def test_the_list_filters_by_state_and_hub(
    request_row: ApprovalRequest, viewer: User, query: str, count: int
) -> None:
    assert token_client(viewer).get(url("approval-list") + query).json()["count"] == count


def test_an_unknown_filter_value_is_a_400_naming_it(request_row: ApprovalRequest, viewer: User) -> None:
    response = token_client(viewer).get(url("approval-list") + "?state=maybe")
    assert response.status_code == 400 and "state" in response.json()


def test_approve_answers_the_new_state_and_twice_is_a_200_no_op(
    request_row: ApprovalRequest, approver: User
) -> None:
    api = token_client(approver)

    first = api.post(url("approval-approve", request_row.pk))
    second = api.post(url("approval-approve", request_row.pk))

    assert first.status_code == 200, first.json()
    assert (first.json()["outcome"], first.json()["state"]) == ("ok", "approved")
    assert first.json()["approval"]["status"]["conditions"][0]["type"] == "Approved"
    assert second.status_code == 200
    assert (second.json()["outcome"], second.json()["state"]) == ("no-op", "approved")
    entries = AuditEntry.objects.order_by("pk")
    assert [(e.outcome, e.request_id != "") for e in entries] == [("ok", True), ("no-op", True)]


def test_approve_is_403_for_a_view_only_user(
    demo_hub: DemoHub, request_row: ApprovalRequest, viewer: User
) -> None:
    response = token_client(viewer).post(url("approval-approve", request_row.pk))
    assert response.status_code == 403
    assert response.json() == {"detail": approvals.DENIED}
    assert "status" not in demo_hub.store.get("ClusterApprovalRequest", REQUEST)


def test_approve_is_502_with_the_hubs_message_when_the_hub_fails(
    demo_hub: DemoHub, request_row: ApprovalRequest, approver: User
) -> None:
    demo_hub.fail_next(1)
    response = token_client(approver).post(url("approval-approve", request_row.pk))
    assert response.status_code == 502
    assert response.json()["detail"] == (
        f"{REQUEST} was not approved: hub demo: get clusterapprovalrequests {REQUEST}: "
        f"HTTP 500 Internal Server Error: {HUB_FAULT}"
    )
    request_row.refresh_from_db()
    assert request_row.state == ApprovalRequest.State.PENDING


def test_anonymous_calls_get_401_and_the_api_root_lists_approvals(request_row: ApprovalRequest) -> None:
    assert APIClient().post(url("approval-approve", request_row.pk)).status_code == 401
    assert token_client(UserFactory()).get("/api/").json()["approvals"].endswith("/api/approvals/")
