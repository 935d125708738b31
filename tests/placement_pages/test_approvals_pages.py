"""The approvals inbox page and its Approve button against the demo hub (no JavaScript: POST, redirect,
re-read on page load), the 403 and hub-failure pages, the polled row and the navigation badge. The
seeded request's stage updates the demo hub's staging clusters: admins of set staging approve it."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import AuditEntry, Hub
from placement.models import ApprovalRequest, Owner, StagedUpdateRun
from placement.rollouts import approvals
from placement.rollouts import runs as rollouts
from tests.factories import HubFactory
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    STAGING,
    VIEW,
    approval_request,
    cluster_set,
    east_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    role_holder,
)

pytestmark = pytest.mark.django_db

REQUEST = "batch-jobs-rollout-1-after-staging"
INBOX = "/approvals/"


@pytest.fixture
def request_row(hub_row: Hub) -> ApprovalRequest:
    """The demo hub's seeded request; its controllers accept an approval only on `reconcile()`."""
    return ApprovalRequest.objects.get(hub=hub_row, name=REQUEST)


@pytest.fixture
def approver(hub_row: Hub) -> User:
    return role_holder(hub_row, STAGING, username="ops")


@pytest.fixture
def viewer(hub_row: Hub) -> User:
    return role_holder(hub_row, STAGING, VIEW, username="viewer")


def signed_in(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def approve_url(row: ApprovalRequest) -> str:
    return reverse("rollouts:approval-approve", args=[row.pk])


def hub_conditions(fleet_hub: DemoHub) -> list[dict]:
    status = fleet_hub.store.get("ClusterApprovalRequest", REQUEST).get("status") or {}
    return status.get("conditions") or []


def test_the_inbox_shows_the_request_its_stage_clusters_and_an_approve_form(
    client: Client, request_row: ApprovalRequest, approver: User
) -> None:
    html = signed_in(client, approver).get(INBOX).content.decode()
    row = re.search(rf'<tr id="approval-{request_row.pk}".*?</tr>', html, re.S).group()
    for text in ("demo", "batch-jobs-rollout-1", "staging", "after stage", "pending", "3 in all"):
        assert text in row
    assert row.count('class="chip"') == 3
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT', row)
    assert f'action="{approve_url(request_row)}"' in row and "csrfmiddlewaretoken" in row
    assert "hx-get" not in row  # nothing to poll while pending


def test_approve_redirects_to_the_inbox_with_the_state_then_shows_accepted_once_the_hub_accepts(
    client: Client, fleet_hub: DemoHub, request_row: ApprovalRequest, approver: User
) -> None:
    signed_in(client, approver)

    response = client.post(f"{approve_url(request_row)}?state=all&hub=demo")

    assert response.status_code == 302 and response["Location"] == f"{INBOX}?state=all&hub=demo"
    page = client.get(response["Location"]).content.decode()
    assert f"{REQUEST}: approved, waiting for acceptance." in page
    row_url = reverse("rollouts:approval-row", args=[request_row.pk])
    assert f'hx-get="{row_url}" hx-trigger="every 1s"' in page  # the row polls until accepted
    assert [c["type"] for c in hub_conditions(fleet_hub)] == ["Approved"]

    fleet_hub.reconcile()
    page = client.get(INBOX).content.decode()  # re-read from the hub on page load, no watch running
    assert 'data-state="accepted"' in page and ">accepted<" in page


def test_the_polled_row_re_reads_the_hub_and_sends_the_badge_along(
    client: Client, fleet_hub: DemoHub, request_row: ApprovalRequest, approver: User
) -> None:
    signed_in(client, approver).post(approve_url(request_row))
    row_url = reverse("rollouts:approval-row", args=[request_row.pk])
    assert 'data-state="approved"' in client.get(row_url).content.decode()

    fleet_hub.reconcile()
    fragment = client.get(row_url, headers={"HX-Request": "true"}).content.decode()

    assert 'data-state="accepted"' in fragment and "hx-trigger" not in fragment
    badge = '<span id="approvals-badge" hx-swap-oob="true"></span>'
    assert re.search(badge, fragment)


def test_a_view_only_user_gets_403_with_the_reason_and_nothing_changes(
    client: Client, fleet_hub: DemoHub, request_row: ApprovalRequest, viewer: User
) -> None:
    signed_in(client, viewer)
    page = client.get(INBOX).content.decode()
    assert "you may not approve" in page and approve_url(request_row) not in page

    response = client.post(approve_url(request_row))

    assert response.status_code == 403
    assert approvals.DENIED in response.content.decode()
    assert hub_conditions(fleet_hub) == []
    request_row.refresh_from_db()
    assert request_row.state == ApprovalRequest.State.PENDING


def test_a_hub_failure_shows_its_error_and_nothing_is_approved(
    client: Client, fleet_hub: DemoHub, request_row: ApprovalRequest, approver: User
) -> None:
    signed_in(client, approver)
    fleet_hub.fail_next(1)

    response = client.post(approve_url(request_row))

    assert response.status_code == 502
    error = rf'id="approval-error">{REQUEST} was not approved: hub demo: .*HTTP 500'
    assert re.search(error, response.content.decode())
    assert hub_conditions(fleet_hub) == []
    request_row.refresh_from_db()
    assert request_row.state == ApprovalRequest.State.PENDING
    assert AuditEntry.objects.get().outcome == AuditEntry.Outcome.FAILED


def test_approve_needs_post_and_csrf(request_row: ApprovalRequest, approver: User) -> None:
    client = Client(enforce_csrf_checks=True)
    signed_in(client, approver)
    assert client.get(approve_url(request_row)).status_code == 405
    assert client.post(approve_url(request_row)).status_code == 403
    assert not AuditEntry.objects.exists()


BADGE = re.compile(r'href="/approvals/"[^>]*>Approvals <span id="approvals-badge"[^>]*>(\d*)</span>')


def badge(page: str) -> str:
    """The navigation badge's count ("" when none)."""
    return BADGE.search(page).group(1)


def test_the_navigation_counts_pending_approvals_for_signed_in_users_only(client: Client, east: Hub) -> None:
    for name, state in (("a", "pending"), ("b", "pending"), ("c", "approved")):
        approval_request(east, name, state=state)
    assert "approvals-badge" not in client.get(reverse("login")).content.decode()

    page = signed_in(client, role_holder(east, "prod", VIEW)).get("/").content.decode()

    assert badge(page) == "2"


def test_the_inbox_and_the_badge_show_only_requests_of_placements_the_user_sees(
    client: Client, east: Hub
) -> None:
    """A Fleet CRP is seen by users with a role on a populated set of its hub; a request whose run has
    no placement (here) is for superusers only."""
    approval_request(east, "seen")
    west = HubFactory(name="west")
    cluster_set(west, "prod", ["west-1"])
    approval_request(west, "other-hub", ["west-1"])
    unplaced = StagedUpdateRun.objects.create(hub=east, owner=Owner.HUB, name="run-unplaced")
    ApprovalRequest.objects.create(hub=east, owner=Owner.HUB, run=unplaced, name="unplaced")

    page = signed_in(client, role_holder(east, "prod", VIEW)).get(INBOX).content.decode()

    shown = [row.name for row in ApprovalRequest.objects.order_by("name") if f'"approval-{row.pk}"' in page]
    assert (shown, badge(page)) == (["seen"], "1")


@pytest.mark.parametrize("rows", [3, 30])
def test_the_inbox_query_count_does_not_grow_with_rows(
    client: Client, east: Hub, django_assert_max_num_queries, rows: int
) -> None:
    for number in range(rows):
        approval_request(east, f"r-{number}")
    signed_in(client, role_holder(east, "prod"))
    # session, user, count, the page (hub and run joined; the roles a subquery), who may approve which
    # (one query for the page), the badge, the hubs of the filter form
    with django_assert_max_num_queries(7):
        assert client.get(INBOX).status_code == 200


def test_a_running_dashboard_owned_run_can_be_stopped_from_its_approval(
    client: Client, east: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream has no Reject; the inbox offers Stop run (the runs page's own button) where we run it."""
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: False)
    run = approval_request(east, "web-rollout-after-prod", owner=Owner.DASHBOARD, spec={"state": "Run"}).run
    approval_request(east, "hub-owned-after-prod")
    viewer = role_holder(east, "prod", VIEW, username="viewer", is_staff=True)
    assert 'aria-label="Stop run ' not in signed_in(client, viewer).get(INBOX).content.decode()
    # admins of a populated set of the hub change its CRPs' runs
    signed_in(client, role_holder(east, "prod", username="ops"))

    page = client.get(INBOX).content.decode()

    stop = reverse("rollouts:run-state", args=[run.pk])
    assert page.count('aria-label="Stop run ') == 1 and f'action="{stop}"' in page
    assert f'<a href="{reverse("rollouts:run-detail", args=[run.pk])}">{run.name}</a>' in page
    assert client.post(stop, {"state": "Stop"}).status_code == 302
    run.refresh_from_db()
    assert run.spec["state"] == "Stop"
    assert 'aria-label="Stop run ' not in client.get(INBOX).content.decode()
