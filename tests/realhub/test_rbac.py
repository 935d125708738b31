"""A token without some verb of deploy/hub-rbac.yaml: the real hub's RBAC refuses exactly those requests,
and the dashboard says so per kind instead of failing whole or crashing. Without `list` on
ClusterResourceBindings the sync stores every other kind and the hub page names the refused kind with
the API server's reason, and that kind's watch waits instead of re-listing the hub over and over;
without `patch` on placementdecisions/status publishing fails with that reason;
without `patch` on clusterapprovalrequests/status Approve answers a page naming it (502), not a 500."""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from django.test import Client
from django.urls import reverse

from inventory.hubclient import KINDS_BY_NAME
from inventory.models import AuditEntry, Hub, ManagedCluster, SyncRun
from inventory.sync import SyncFailed, sync_hub
from inventory.watch import HubWatcher
from placement import service, tasks
from placement.models import ApprovalRequest, Placement
from tests.factories import UserFactory, placement_role
from tests.realhub import objects
from tests.realhub.conftest import (
    HUB_RBAC,
    SERVICE_ACCOUNT,
    DashboardCredentials,
    api_client,
    register_hub,
    service_account_token,
)
from tests.realhub.hub import RealHub

pytestmark = [pytest.mark.realhub, pytest.mark.django_db]

LIMITED = "fleetui-limited"
USER = f"system:serviceaccount:{SERVICE_ACCOUNT[0]}:{LIMITED}"
# what the limited role lacks, of what deploy/hub-rbac.yaml grants
WITHOUT_LIST = "clusterresourcebindings"
WITHOUT_PATCH = ("placementdecisions/status", "clusterapprovalrequests/status")


def limited_role() -> dict[str, Any]:
    """The dashboard's ClusterRole without `list`/`watch` on WITHOUT_LIST and without the WITHOUT_PATCH
    subresources."""
    role = next(d for d in yaml.safe_load_all(HUB_RBAC.read_text()) if d and d["kind"] == "ClusterRole")
    rules = []
    for rule in copy.deepcopy(role["rules"]):
        if "list" in rule["verbs"]:
            rule["resources"] = [r for r in rule["resources"] if r != WITHOUT_LIST]
        if set(rule["resources"]) - set(WITHOUT_PATCH):
            rules.append(rule)
    return {**role, "metadata": {"name": LIMITED}, "rules": rules}


@pytest.fixture(scope="module")
def limited_credentials(
    real_hub: RealHub, dashboard_credentials: DashboardCredentials, tmp_path_factory: pytest.TempPathFactory
) -> DashboardCredentials:
    """A ServiceAccount beside the dashboard's, bound to `limited_role`, and its token."""
    namespace = SERVICE_ACCOUNT[0]
    with api_client(real_hub) as client:
        rbac = kubernetes.client.RbacAuthorizationV1Api(client)
        kubernetes.client.CoreV1Api(client).create_namespaced_service_account(
            namespace, {"metadata": {"name": LIMITED}}
        )
        rbac.create_cluster_role(limited_role())
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": LIMITED},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": LIMITED},
                "subjects": [{"kind": "ServiceAccount", "name": LIMITED, "namespace": namespace}],
            }
        )
        token = service_account_token(client, namespace, LIMITED)
    token_file = Path(tmp_path_factory.mktemp("limited")) / "token"
    token_file.write_text(token)
    return DashboardCredentials(token_file=token_file, ca_file=dashboard_credentials.ca_file)


@pytest.fixture
def limited_hub(
    empty_hub: RealHub,
    hub_client: kubernetes.client.ApiClient,
    limited_credentials: DashboardCredentials,
    tasks_in_process: None,
) -> Hub:
    """The hub registered with the limited token, a small fleet on it (its first stage awaiting approval)."""
    objects.seed_fleet(hub_client, 6, seed=7)
    return register_hub(empty_hub, limited_credentials, "--fleet", "--publish-namespace", "default")


def test_a_kind_without_list_is_named_on_the_hub_page_and_the_other_kinds_sync(
    limited_hub: Hub, hub_client: kubernetes.client.ApiClient, client: Client
) -> None:
    with pytest.raises(SyncFailed) as failure:
        sync_hub(limited_hub, trigger="command")

    run = failure.value.sync_run
    [(kind, error)] = run.kind_errors
    assert kind == "ClusterResourceBinding"
    assert f'User "{USER}" cannot list resource "{WITHOUT_LIST}"' in error and "HTTP 403" in error
    on_hub = objects.hub_objects(hub_client)
    mirrored = objects.dashboard_objects(limited_hub)
    assert on_hub[kind] and not mirrored[kind]
    assert {k: v for k, v in mirrored.items() if k != kind} == {k: v for k, v in on_hub.items() if k != kind}
    assert not ManagedCluster.objects.filter(hub=limited_hub, stale=True).exists()
    client.force_login(UserFactory(username="ops", is_superuser=True))

    page = client.get(reverse("inventory:hub-detail", args=[limited_hub.pk]))

    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="kind-error-ClusterResourceBinding"' in html and "cannot list resource" in html


def test_the_refused_kinds_watch_waits_instead_of_relisting_the_hub(limited_hub: Hub) -> None:
    with pytest.raises(SyncFailed):
        sync_hub(limited_hub, trigger="command")
    stop = threading.Event()
    threading.Timer(3, stop.set).start()

    HubWatcher(limited_hub, stop, timeout_seconds=5).run_kind(KINDS_BY_NAME["ClusterResourceBinding"])

    # a re-list would be refused the same way: none was started
    assert not SyncRun.objects.filter(hub=limited_hub, trigger=SyncRun.Trigger.WATCH_RELIST).exists()


def test_publishing_without_patch_on_decision_status_fails_with_the_hubs_reason(limited_hub: Hub) -> None:
    with pytest.raises(SyncFailed):
        sync_hub(limited_hub, trigger="command")  # everything but the refused bindings
    editor = placement_role(limited_hub, ("default",), username="editor")
    # the schedule's follow-up publishes: its failure is the task's, not the edit's
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=limited_hub,
        namespace="default",
        name="shop",
        spec={"clusterSets": ["global"], "numberOfClusters": 2},
        actor=editor,
    )
    assert placement.decisions.exists()

    result = tasks.publish_placement(placement.pk)

    assert result["state"] == "failed"
    assert f'User "{USER}" cannot patch resource "placementdecisions/status"' in result["error"]


def test_approve_without_patch_on_request_status_answers_the_hubs_reason(
    limited_hub: Hub, hub_client: kubernetes.client.ApiClient, client: Client
) -> None:
    with pytest.raises(SyncFailed):
        sync_hub(limited_hub, trigger="command")
    [row] = ApprovalRequest.objects.filter(hub=limited_hub)
    client.force_login(UserFactory(username="approver", is_superuser=True))

    answer = client.post(reverse("rollouts:approval-approve", args=[row.pk]))

    assert answer.status_code == 502
    assert "cannot patch resource &quot;clusterapprovalrequests/status&quot;" in answer.content.decode()
    row.refresh_from_db()
    assert row.state == ApprovalRequest.State.PENDING
    assert AuditEntry.objects.get(action="approval.approve").outcome == AuditEntry.Outcome.FAILED
    assert "conditions" not in objects.get(hub_client, "ClusterApprovalRequest", row.name).get("status", {})
