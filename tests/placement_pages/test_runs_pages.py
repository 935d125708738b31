"""The runs pages without JavaScript: list, filters, a run's page (preview before it starts, stages and
timeline after), Initialize / Run / Stop buttons (POST + CSRF, for admins of a cluster set the run's CRP is
visible through, audited), hub-owned runs read-only, the new run and new strategy forms."""

import html
import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from demohub import DemoHub
from inventory.models import AuditEntry
from placement import access
from placement.models import Owner, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import runs as rollouts
from tests.factories import (
    HubFactory,
    StagedUpdateRunFactory,
    UserFactory,
    placement_role,
    synced_demo_hub_row,
)
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    # noqa: F401 - fixtures,
    CANARY,
    PROD,
    STRATEGY_SPEC,
    Stepper,
    checkout_fixture,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stepped_by_hand_fixture,
    strategy_fixture,
)
from tests.placement_pages.access_support import VIEW, elsewhere_admin, signed_in

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def text(response) -> str:
    return html.unescape(response.content.decode())


def stage_clusters(html: str, stage: str) -> list[str]:
    block = re.search(rf'data-stage="{stage}".*?</li>\s*(?=<li class="stage"|</ol>)', html, re.S).group()
    return re.findall(r'<td class="cluster-name"><a href="[^"]*">([^<]+)</a></td>', block)


def test_the_list_shows_hub_and_dashboard_runs_with_their_conditions_and_filters(
    client: Client, fleet_hub: DemoHub
) -> None:
    hub = synced_demo_hub_row(fleet_hub)  # the seeded hub-owned run waiting for its approval
    other = HubFactory(name="west")
    StagedUpdateRunFactory(placement__hub=other, name="mine", owner=Owner.DASHBOARD)
    # the view role on a populated set of each hub shows the runs of its CRPs
    demo_viewer = placement_role(hub, role=VIEW, username="demo-viewer")
    ops = placement_role(other, role=VIEW, user=placement_role(hub, role=VIEW, username="ops"))
    page = text(signed_in(client, demo_viewer).get(reverse("rollouts:run-list")))
    assert '<span id="result-count">1</span>' in page and ">mine<" not in page
    page = text(signed_in(client, ops).get(reverse("rollouts:run-list")))
    assert '<span id="result-count">2</span>' in page
    row = re.search(
        r"<tr[^>]*>\s*<td class=\"name\"><a [^>]*>batch-jobs-rollout-1</a>.*?</tr>", page, re.S
    ).group()
    for expected in (
        "demo",
        "hub",
        "batch-jobs",
        "staging-then-prod",
        "Run",
        "staging",
        "True · InitializedSuccessfully",
        "False · Waiting",
    ):
        assert expected in row
    assert re.search(r'<td class="number"><a href="/approvals/\?q=batch-jobs-rollout-1">1</a></td>', row)

    filtered = text(client.get(reverse("rollouts:run-list"), {"hub": "west"}, **HTMX))
    assert '<span id="result-count">1</span>' in filtered and "mine" in filtered
    assert "<html" not in filtered  # the htmx fragment only
    assert ">mine<" in text(client.get(reverse("rollouts:run-list"), {"owner": "dashboard"}))
    assert client.get(reverse("rollouts:run-list"), {"state": "Sideways"}).status_code == 400
    assert hub.name == "demo"


def test_a_hub_owned_run_is_read_only_with_its_stages_and_timeline(
    client: Client, fleet_hub: DemoHub
) -> None:
    hub = synced_demo_hub_row(fleet_hub)
    run = StagedUpdateRun.objects.get(hub=hub, name="batch-jobs-rollout-1")
    admin = placement_role(hub, username="ops")  # an admin: the refusal below is the owner's (the hub)
    page = text(signed_in(client, admin).get(reverse("rollouts:run-detail", args=[run.pk])))
    assert 'id="run-read-only"' in page and 'id="run-actions"' not in page
    assert 'id="preview-heading"' not in page  # it started: stages and timeline instead
    figure = json.loads(
        re.search(r'<script id="timeline-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    labels = [label for trace in figure["data"] for label in trace["y"]]
    assert "stage staging" in labels and any(label.startswith("staging · ") for label in labels)
    assert "after-stage Approval" in page and "batch-jobs-rollout-1-after-staging" in page
    response = client.post(reverse("rollouts:run-state", args=[run.pk]), {"state": "Stop"})
    assert response.status_code == 403
    assert "belongs to hub demo" in text(response)
    run.refresh_from_db()
    assert run.spec["state"] == "Run"


def test_before_it_starts_a_run_shows_the_preview_and_the_initialisation_error(
    client: Client, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    run = new_run(hub_row, editor)
    url = reverse("rollouts:run-detail", args=[run.pk])
    page = text(signed_in(client, placement_role(hub_row, role=VIEW, username="ops")).get(url))
    assert 'id="preview-summary"' in page and "Before the run starts" in page
    assert stage_clusters(page, "canary") == CANARY
    assert stage_clusters(page, "prod") == PROD
    assert 'id="run-denied"' in page  # a viewer sees the run, not the buttons

    # every cluster also matches `{}`: initialisation would fail, and the preview says exactly why
    StagedUpdateStrategy.objects.filter(pk=strategy.pk).update(
        spec={"stages": [*STRATEGY_SPEC["stages"], {"name": "rest", "labelSelector": {}}]}
    )
    page = text(client.get(url))
    error = re.search(r'<p class="error" role="alert" id="preview-error">(.*?)</p>', page, re.S).group(1)
    assert "cluster `aks-northeurope-prod-019` appears in more than one stages" in error

    # once the run is stepped the failure is its own (Initialized=False): the same message, no buttons
    rollouts.reconcile(run)
    client.force_login(editor)
    page = text(client.get(url))
    stored = re.search(r'<p class="error" role="alert" id="preview-error">(.*?)</p>', page, re.S).group(1)
    assert stored == error
    assert "Initialized=False · UpdateRunInitializedFailed" in page
    assert 'id="run-actions"' not in page and "it could not be initialised" in page


def test_run_and_stop_buttons_change_the_state_audited(
    client: Client, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    run = new_run(hub_row, editor)
    url = reverse("rollouts:run-detail", args=[run.pk])
    client.force_login(editor)
    page = text(client.get(url))
    buttons = re.findall(r'<button type="submit" class="button" name="state" value="(\w+)"', page)
    assert buttons == ["Run"]  # Initialize -> Stop is not a transition the CRD allows
    assert 'name="csrfmiddlewaretoken"' in page
    response = client.post(reverse("rollouts:run-state", args=[run.pk]), {"state": "Run"}, follow=True)
    assert "checkout-1: state set to Run." in text(response)
    assert re.findall(r'name="state" value="(\w+)"', text(response)) == ["Stop"]
    run.refresh_from_db()
    assert (run.spec["state"], run.generation) == ("Run", 2)
    entry = AuditEntry.objects.get(action="run.state")
    assert (entry.actor_name, entry.before, entry.after, entry.outcome) == (
        "editor",
        "Initialize",
        "Run",
        "ok",
    )
    response = client.post(reverse("rollouts:run-state", args=[run.pk]), {"state": "Initialize"}, follow=True)
    assert "invalid state transition: cannot transition from Run to Initialize" in text(response)


def test_a_viewer_may_not_press_a_button_and_others_do_not_see_the_run(
    client: Client, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    """The view role shows the run without buttons (403, audited); staff with the model permission and
    admins of another hub's set do not see it (404). Admins of the set press them (the test above)."""
    run = new_run(hub_row, editor)
    detail_url = reverse("rollouts:run-detail", args=[run.pk])
    state_url = reverse("rollouts:run-state", args=[run.pk])
    signed_in(client, placement_role(hub_row, role=VIEW, username="viewer"))
    assert 'id="run-denied"' in text(client.get(detail_url))
    response = client.post(state_url, {"state": "Run"})
    assert response.status_code == 403
    assert rollouts.RUN_DENIED in text(response)
    entry = AuditEntry.objects.get(action="run.state")
    assert (entry.actor_name, entry.outcome) == ("viewer", AuditEntry.Outcome.DENIED)
    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_stagedupdaterun"))
    for outsider in (staff, elsewhere_admin(username="elsewhere")):
        signed_in(client, outsider)
        assert client.get(detail_url).status_code == 404
        assert client.post(state_url, {"state": "Run"}).status_code == 404
    run.refresh_from_db()
    assert run.spec["state"] == "Initialize"


def test_the_new_run_form_creates_a_run_or_names_the_field_in_error(
    client: Client, hub_row, checkout, strategy, editor, stepped_by_hand
) -> None:
    client.force_login(editor)
    form = text(client.get(reverse("rollouts:run-create"), {"placement": "checkout"}))
    assert 'value="checkout"' in form and '<option value="canary-then-prod">' in form
    fields = {
        "hub": hub_row.pk,
        "name": "checkout-2",
        "placement_name": "checkout",
        "strategy_name": "nope",
        "state": "Initialize",
    }
    response = client.post(reverse("rollouts:run-create"), fields)
    assert response.status_code == 400
    assert "spec.stagedRolloutStrategyName: ClusterStagedUpdateStrategy nope not found on hub demo" in text(
        response
    )
    response = client.post(reverse("rollouts:run-create"), {**fields, "strategy_name": "canary-then-prod"})
    run = StagedUpdateRun.objects.get(name="checkout-2")
    assert response.url == reverse("rollouts:run-detail", args=[run.pk])
    assert (run.owner, run.placement, run.spec["resourceSnapshotIndex"]) == (Owner.DASHBOARD, checkout, "")

    manifest = (
        "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterStagedUpdateRun\n"
        "metadata: {name: checkout-3}\nspec: {placementName: checkout, "
        "stagedRolloutStrategyName: canary-then-prod, state: Sideways}\n"
    )
    response = client.post(
        reverse("rollouts:run-create"), {"hub": hub_row.pk, "state": "Initialize", "manifest": manifest}
    )
    assert response.status_code == 400
    assert 'spec.state: Unsupported value: "Sideways": supported values: "Initialize", "Run", "Stop"' in text(
        response
    )


def test_the_strategy_pages_list_and_create_with_upstream_messages(client: Client, hub_row, editor) -> None:
    client.force_login(editor)
    form = text(client.get(reverse("rollouts:strategy-create")))
    assert "afterStageTasks" in form  # the example to start from
    bad = {"hub": hub_row.pk, "name": "two-stages", "spec": "stages:\n- name: Canary\n  labelSelector: {}\n"}
    response = client.post(reverse("rollouts:strategy-create"), bad)
    assert response.status_code == 400
    assert "spec.stages[0].name: Invalid value: \"Canary\": should match '^[a-z0-9]+$'" in text(response)
    good = {**bad, "spec": "stages:\n- name: canary\n  labelSelector: {}\n"}
    response = client.post(reverse("rollouts:strategy-create"), good, follow=True)
    page = text(response)
    assert "Strategy two-stages created." in page
    assert re.search(r"<summary>two-stages</summary>", page) and '<span class="chip">canary</span>' in page
    assert AuditEntry.objects.filter(action="strategy.create", actor_name="editor").count() == 1
    viewer = placement_role(hub_row, role=VIEW, username="viewer")
    denied = signed_in(Client(), viewer).get(reverse("rollouts:strategy-create"))
    assert denied.status_code == 403 and access.ADMIN_NEEDED in text(denied)


def test_new_runs_and_strategies_need_the_admin_role_on_a_set_of_their_hub(
    client: Client, hub_row, checkout, strategy, stepped_by_hand
) -> None:
    """Admins of another hub's set open the forms (they may add there), not for hub demo: its CRPs and
    strategies they do not see are not suggested, and a run of one is as if it did not exist; with the
    view role on hub demo besides, the CRP is seen and the run refused (403, audited)."""
    signed_in(client, elsewhere_admin(username="elsewhere"))
    form = text(client.get(reverse("rollouts:run-create")))
    assert '<option value="canary-then-prod">' not in form
    fields = {
        "hub": hub_row.pk,
        "name": "checkout-2",
        "placement_name": "checkout",
        "strategy_name": "canary-then-prod",
        "state": "Initialize",
    }
    response = client.post(reverse("rollouts:run-create"), fields)
    assert response.status_code == 400
    assert "spec.placementName: ClusterResourcePlacement checkout not found on hub demo" in text(response)
    good = {"hub": hub_row.pk, "name": "two", "spec": "stages:\n- name: canary\n  labelSelector: {}\n"}
    response = client.post(reverse("rollouts:strategy-create"), good)
    assert response.status_code == 403 and rollouts.STRATEGY_DENIED in text(response)

    signed_in(client, placement_role(hub_row, role=VIEW, user=elsewhere_admin(username="viewer")))
    response = client.post(reverse("rollouts:run-create"), fields)
    assert response.status_code == 403 and rollouts.RUN_DENIED in text(response)
    denied = AuditEntry.objects.filter(outcome=AuditEntry.Outcome.DENIED)
    assert sorted(denied.values_list("actor_name", "action")) == [
        ("elsewhere", "strategy.create"),
        ("viewer", "run.create"),
    ]
    assert not StagedUpdateRun.objects.filter(name="checkout-2").exists()
    assert not StagedUpdateStrategy.objects.filter(name="two").exists()
