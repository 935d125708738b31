"""The runs and strategies API: list, detail, create through the service (upstream messages, 400 naming
the field), and `POST /api/runs/<id>/state/`: 200, 400 (bad state or transition), 403 (the view role alone,
hub-owned run), 404 (no role on a set the run's CRP is visible through)."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from rest_framework.test import APIClient

from demohub import DemoHub
from inventory.models import AuditEntry
from placement.models import Owner, StagedUpdateRun
from placement.rollouts import runs as rollouts
from tests.factories import UserFactory, placement_role, synced_demo_hub_row
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    STRATEGY_SPEC,
    checkout_fixture,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    stepped_by_hand_fixture,
    strategy_fixture,
)
from tests.placement_pages.access_support import VIEW, elsewhere_admin

pytestmark = pytest.mark.django_db

RUN_SPEC = {"placementName": "checkout", "stagedRolloutStrategyName": "canary-then-prod"}


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def url(name: str, *args: object) -> str:
    return reverse(f"rollouts-api:{name}", args=args)


def test_runs_are_listed_and_read_with_their_conditions(fleet_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(fleet_hub)
    api = client_for(placement_role(hub, role=VIEW, username="viewer"))
    listed = api.get(url("run-list"), {"hub": "demo"}).json()
    assert listed["count"] == 1
    run = listed["results"][0]
    assert (run["name"], run["owner"], run["state"], run["current_stage"]) == (
        "batch-jobs-rollout-1",
        "hub",
        "Run",
        "staging",
    )
    assert run["progressing"]["reason"] == "UpdateRunWaiting"
    assert run["pending_approvals"] == 1
    assert "status" not in run
    detail = api.get(url("run-detail", run["id"])).json()
    assert [s["stageName"] for s in detail["status"]["stagesStatus"]] == ["staging", "prod"]
    strategies = api.get(url("strategy-list")).json()
    assert [s["name"] for s in strategies["results"]] == ["staging-then-prod"]
    root = api.get("/api/").json()
    assert root["runs"].endswith("/api/runs/") and root["strategies"].endswith("/api/strategies/")


def test_strategies_and_runs_are_created_through_the_service(
    hub_row, checkout, editor, stepped_by_hand
) -> None:
    api = client_for(editor)
    bad = api.post(
        url("strategy-list"), {"hub": "demo", "name": "s", "spec": {"stages": [{"name": "A"}]}}, format="json"
    )
    assert bad.status_code == 400
    assert bad.json() == {"spec.stages[0].name": ["Invalid value: \"A\": should match '^[a-z0-9]+$'"]}
    created = api.post(
        url("strategy-list"),
        {"hub": "demo", "name": "canary-then-prod", "spec": STRATEGY_SPEC},
        format="json",
    )
    assert created.status_code == 201 and created.json()["owner"] == "dashboard"

    missing = api.post(
        url("run-list"),
        {"hub": "demo", "name": "r1", "spec": {**RUN_SPEC, "placementName": "x"}},
        format="json",
    )
    assert missing.status_code == 400
    assert missing.json() == {"spec.placementName": ["ClusterResourcePlacement x not found on hub demo"]}
    run = api.post(url("run-list"), {"hub": "demo", "name": "r1", "spec": RUN_SPEC}, format="json")
    assert run.status_code == 201
    body = run.json()
    assert (body["owner"], body["state"], body["spec"]["resourceSnapshotIndex"]) == (
        "dashboard",
        "Initialize",
        "",
    )
    assert body["placement_id"] == checkout.pk
    again = api.post(url("run-list"), {"hub": "demo", "name": "r1", "spec": RUN_SPEC}, format="json")
    assert again.json() == {"metadata.name": ["ClusterStagedUpdateRun r1 already exists on hub demo"]}
    assert AuditEntry.objects.filter(action__in=["run.create", "strategy.create"]).count() == 2


def test_a_run_of_a_placement_that_is_not_external_is_refused(hub_row, checkout, strategy, editor) -> None:
    checkout.spec = {**checkout.spec, "strategy": {"type": "RollingUpdate"}}
    checkout.save()
    response = client_for(editor).post(
        url("run-list"), {"hub": "demo", "name": "r1", "spec": RUN_SPEC}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "spec.placementName": [
            "ClusterResourcePlacement checkout has strategy type RollingUpdate; a staged update run needs "
            "spec.strategy.type External"
        ]
    }


def test_the_state_endpoint_answers_200_400_403_and_404(
    hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    run = rollouts.create_run(hub=hub_row, name="r1", spec=RUN_SPEC, actor=editor)
    api = client_for(editor)
    ok = api.post(url("run-state", run.pk), {"state": "Run"}, format="json")
    assert ok.status_code == 200
    assert (ok.json()["state"], ok.json()["generation"]) == ("Run", 2)
    bad = api.post(url("run-state", run.pk), {"state": "Initialize"}, format="json")
    assert bad.status_code == 400
    assert bad.json() == {
        "spec.state": ["invalid state transition: cannot transition from Run to Initialize"]
    }
    assert api.post(url("run-state", run.pk), {"state": "Go"}, format="json").status_code == 400

    viewer = client_for(placement_role(hub_row, role=VIEW, username="viewer"))
    denied = viewer.post(url("run-state", run.pk), {"state": "Stop"}, format="json")
    assert denied.status_code == 403
    assert denied.json()["detail"] == rollouts.RUN_DENIED
    assert AuditEntry.objects.get(action="run.state", actor_name="viewer").outcome == "denied"
    # staff with the model permission, and admins of another hub's set, do not even see the run
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_stagedupdaterun"))
    for outsider in (staff, elsewhere_admin(username="elsewhere")):
        response = client_for(outsider).post(url("run-state", run.pk), {"state": "Stop"}, format="json")
        assert response.status_code == 404
    run.refresh_from_db()
    assert run.spec["state"] == "Run"
    operator = placement_role(hub_row, username="operator")  # another admin of the hub's set
    assert (
        client_for(operator).post(url("run-state", run.pk), {"state": "Stop"}, format="json").status_code
        == 200
    )
    run.refresh_from_db()
    assert run.spec["state"] == "Stop"


def test_a_hub_owned_run_cannot_be_changed_through_the_api(fleet_hub: DemoHub, editor) -> None:
    hub = synced_demo_hub_row(fleet_hub)
    run = StagedUpdateRun.objects.get(hub=hub, owner=Owner.HUB)
    response = client_for(editor).post(url("run-state", run.pk), {"state": "Stop"}, format="json")
    assert response.status_code == 403
    assert "belongs to hub demo" in response.json()["detail"]
