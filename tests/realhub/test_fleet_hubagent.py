"""KubeFleet's own hub agent runs a staged update run on the real hub, and waits for the dashboard's Approve.

Three MemberClusters join as they do with a member agent: the hub agent makes each one's
InternalMemberCluster, and the test writes its status as the member agent would (joined, healthy, a fresh
heartbeat). A ClusterResourcePlacement with the External rollout strategy is scheduled by the hub agent's
scheduler onto all three; a ClusterStagedUpdateRun with the strategy canary (an Approval before it) then
prod (an Approval before it) makes the agent's update run controller create the canary stage's
ClusterApprovalRequest. The dashboard syncs it, shows it in its inbox, and its Approve button writes what
`kubectl fleet approve` writes; the agent accepts the approval and rolls the canary stage out (binds its
cluster). The member agent's part of a rollout, applying the Work on the member and reporting it applied
and available, is written as that agent would write it, and the run goes on to the prod stage, whose
approval the inbox then shows.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator
from typing import Any

import kubernetes
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from inventory.models import Hub
from inventory.sync import sync_hub
from placement.models import ApprovalRequest
from placement.scheduler.rollout.approval import ACCEPTED_MESSAGE, ACCEPTED_REASON
from placement.scheduler.rollout.staged import TASK_TYPE_LABEL
from tests.conftest import unavailable
from tests.factories import UserFactory
from tests.first_look import wait_for
from tests.realhub.conftest import api_client, delete_custom_objects
from tests.realhub.hub import RealHub, process_exists
from tests.realhub.hubagent import HubAgent

pytestmark = pytest.mark.realhub

CLUSTER_API = ("cluster.kubernetes-fleet.io", "v1beta1")
PLACEMENT_API = ("placement.kubernetes-fleet.io", "v1beta1")
MEMBERS = {"canary-1": "canary", "prod-1": "prod", "prod-2": "prod"}  # cluster: its stage label
NAMESPACE = "staged-app"  # what the placement places: a namespace and what is in it
PLACEMENT = "staged-app"
STRATEGY = "canary-then-prod"
RUN = "staged-app-rollout-1"
INBOX = "/approvals/"
# the hub agent reacts to a watch event within a second; its slowest step here is the first resource
# snapshot of a placement, and the update run's own requeue after a stage is 15 s
SETTLE = 90.0


@pytest.fixture(scope="module")
def hub_agent(real_hub: RealHub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubAgent]:
    """The hub agent of this module alone: any other test's objects would be scheduled and finalized by
    it. Missing, the test skips (fails in CI) as the hub's binaries do."""
    agent = HubAgent(real_hub, tmp_path_factory.mktemp("hubagent"))
    if not agent.binary.exists():
        unavailable(f"no {agent.binary}: make realhub-bin builds it")
    with agent:
        pid = agent.pid
        yield agent
    assert not process_exists(pid), "the hub agent outlived its fixture"
    # what it made carries its finalizers, which nothing removes once it is gone
    with api_client(real_hub) as client:
        delete_custom_objects(client)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    for found in ((obj or {}).get("status") or {}).get("conditions") or ():
        if found.get("type") == kind:
            return dict(found)
    return None


def is_true(conditions: list[dict[str, Any]] | None, kind: str, generation: int | None = None) -> bool:
    """`kind` is True, and (when given) observed at `generation`, as upstream's IsConditionStatusTrue."""
    for found in conditions or ():
        if found.get("type") == kind:
            observed = generation is None or found.get("observedGeneration") == generation
            return found.get("status") == "True" and observed
    return False


class Fleet:
    """The admin's view of the hub's KubeFleet objects."""

    def __init__(self, client: kubernetes.client.ApiClient) -> None:
        self.objects = kubernetes.client.CustomObjectsApi(client)

    def create(self, api: tuple[str, str], plural: str, body: dict[str, Any]) -> None:
        self.objects.create_cluster_custom_object(*api, plural, body)

    def get(self, api: tuple[str, str], plural: str, name: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self.objects.get_cluster_custom_object(*api, plural, name)
        except kubernetes.client.ApiException as error:
            if error.status == 404:
                return None
            raise
        return found

    def items(self, api: tuple[str, str], plural: str, namespace: str = "") -> list[dict[str, Any]]:
        if namespace:
            listed = self.objects.list_namespaced_custom_object(*api, namespace, plural)
        else:
            listed = self.objects.list_cluster_custom_object(*api, plural)
        return list(listed["items"])

    def run(self) -> dict[str, Any]:
        run = self.get(PLACEMENT_API, "clusterstagedupdateruns", RUN)
        assert run is not None
        return run

    def stage(self, name: str) -> dict[str, Any]:
        stages = (self.run().get("status") or {}).get("stagesStatus") or []
        return next((stage for stage in stages if stage["stageName"] == name), {})

    def approval_name(self, stage: str) -> str:
        """The ClusterApprovalRequest the run names for the stage's before-stage Approval task."""
        tasks = self.stage(stage).get("beforeStageTaskStatus") or [{}]
        return str(tasks[0].get("approvalRequestName") or "")

    def approval(self, stage: str) -> dict[str, Any] | None:
        name = self.approval_name(stage)
        return self.get(PLACEMENT_API, "clusterapprovalrequests", name) if name else None

    def bindings(self) -> dict[str, dict[str, Any]]:
        """The placement's ClusterResourceBindings by target cluster."""
        return {
            binding["spec"]["targetCluster"]: binding
            for binding in self.items(PLACEMENT_API, "clusterresourcebindings")
            if binding["metadata"]["labels"].get("kubernetes-fleet.io/parent-CRP") == PLACEMENT
        }


def member_cluster(name: str, stage: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"stage": stage}},
        "spec": {
            "identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"},
            "heartbeatPeriodSeconds": 60,
        },
    }


def true_conditions(generation: int, *reasons: tuple[str, str]) -> list[dict[str, Any]]:
    """Conditions (type, reason) all True at `generation`, as an agent sets them now."""
    at = now()
    return [
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": "",
            "observedGeneration": generation,
            "lastTransitionTime": at,
        }
        for kind, reason in reasons
    ]


def report_in(fleet: Fleet, name: str) -> None:
    """Write the status the member agent writes on its cluster's InternalMemberCluster once it joined:
    the hub agent copies it to the MemberCluster, and its scheduler places only on clusters that have
    joined, are healthy and sent a heartbeat in the last five minutes."""
    namespace = f"fleet-member-{name}"
    internal = fleet.objects.get_namespaced_custom_object(
        *CLUSTER_API, namespace, "internalmemberclusters", name
    )
    conditions = true_conditions(
        internal["metadata"]["generation"],
        ("Joined", "InternalMemberClusterJoined"),
        ("Healthy", "InternalMemberClusterHealthy"),
    )
    agent = {"type": "MemberAgent", "conditions": conditions, "lastReceivedHeartbeat": now()}
    fleet.objects.patch_namespaced_custom_object_status(
        *CLUSTER_API, namespace, "internalmemberclusters", name, {"status": {"agentStatus": [agent]}}
    )


def apply_works(fleet: Fleet, cluster: str) -> list[str]:
    """Write what the member agent writes once it applied a Work on its cluster and found the objects
    available: Applied and Available, at the Work's generation. Answers the Works' names."""
    namespace = f"fleet-member-{cluster}"
    names = []
    for work in fleet.items(PLACEMENT_API, "works", namespace):
        name = work["metadata"]["name"]
        conditions = true_conditions(
            work["metadata"]["generation"],
            ("Applied", "AllManifestsApplied"),
            ("Available", "AllManifestsAvailable"),
        )
        fleet.objects.patch_namespaced_custom_object_status(
            *PLACEMENT_API, namespace, "works", name, {"status": {"conditions": conditions}}
        )
        names.append(name)
    return names


def settle(check: Callable[[], object], what: str, agent: HubAgent, found: Callable[[], object]) -> None:
    """Wait for the hub agent to do `what`; a dead agent fails at once with its log."""

    def done() -> object:
        agent.check_alive()
        return check()

    wait_for(done, what, SETTLE, found=lambda: f"{found()}\nhub agent log:\n{agent.tail()}")


@pytest.fixture
def fleet(hub_client: kubernetes.client.ApiClient) -> Fleet:
    return Fleet(hub_client)


@pytest.fixture
def joined(empty_hub: RealHub, hub_agent: HubAgent, fleet: Fleet) -> None:
    """The members, joined in the hub agent's eyes (their MemberClusters' Joined condition)."""
    for name, stage in MEMBERS.items():
        fleet.create(CLUSTER_API, "memberclusters", member_cluster(name, stage))

    def internal_clusters() -> list[str]:
        return [
            name
            for name in MEMBERS
            if any(fleet.items(CLUSTER_API, "internalmemberclusters", f"fleet-member-{name}"))
        ]

    settle(
        lambda: len(internal_clusters()) == len(MEMBERS),
        "InternalMemberClusters",
        hub_agent,
        internal_clusters,
    )
    for name in MEMBERS:
        report_in(fleet, name)

    def members() -> dict[str, dict[str, Any]]:
        return {name: fleet.get(CLUSTER_API, "memberclusters", name) or {} for name in MEMBERS}

    def all_joined() -> bool:
        return all(
            is_true(member.get("status", {}).get("conditions"), "Joined", member["metadata"]["generation"])
            for member in members().values()
        )

    settle(all_joined, "the members joining", hub_agent, members)


def place_namespace(hub_client: kubernetes.client.ApiClient) -> None:
    """The namespace the placement selects, and a ConfigMap in it; kept across tests of the session."""
    core = kubernetes.client.CoreV1Api(hub_client)
    try:
        core.create_namespace({"metadata": {"name": NAMESPACE}})
        core.create_namespaced_config_map(
            NAMESPACE, {"metadata": {"name": "settings"}, "data": {"mode": "blue"}}
        )
    except kubernetes.client.ApiException as error:
        if error.status != 409:
            raise


def staged_placement() -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": PLACEMENT},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": NAMESPACE}],
            "policy": {"placementType": "PickAll"},
            # External: the update runs roll it out, not the placement's own rolling update
            "strategy": {"type": "External"},
        },
    }


def strategy() -> dict[str, Any]:
    def stage(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "labelSelector": {"matchLabels": {"stage": name}},
            "beforeStageTasks": [{"type": "Approval"}],
        }

    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": STRATEGY},
        "spec": {"stages": [stage("canary"), stage("prod")]},
    }


def update_run() -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": RUN},
        "spec": {
            "placementName": PLACEMENT,
            "resourceSnapshotIndex": "0",
            "stagedRolloutStrategyName": STRATEGY,
            "state": "Execute",
        },
    }


def superuser() -> User:
    return UserFactory(username="fleet-admin", is_superuser=True, is_staff=True)


def inbox_row(client: Client, request: ApprovalRequest, state: str = "") -> str:
    """The request's row in the inbox: the open requests, or those in `state` ("all" for every one)."""
    page = client.get(INBOX, {"state": state} if state else {}).content.decode()
    found = re.search(rf'<tr id="approval-{request.pk}".*?</tr>', page, re.S)
    assert found is not None, f"{request.name} is not in the inbox"
    return found.group()


@pytest.mark.usefixtures("joined")
def test_the_hub_agent_waits_for_the_dashboards_approve_then_rolls_the_stage_out(
    hub_agent: HubAgent,
    fleet: Fleet,
    hub_client: kubernetes.client.ApiClient,
    registered_hub: Hub,
    client: Client,
) -> None:
    place_namespace(hub_client)
    fleet.create(PLACEMENT_API, "clusterstagedupdatestrategies", strategy())
    fleet.create(PLACEMENT_API, "clusterresourceplacements", staged_placement())
    # the scheduler binds every joined member, and with an External strategy leaves the bindings Scheduled
    settle(
        lambda: (
            sorted(fleet.bindings()) == sorted(MEMBERS)
            and all(b["spec"]["state"] == "Scheduled" for b in fleet.bindings().values())
        ),
        "the placement's bindings",
        hub_agent,
        fleet.bindings,
    )

    fleet.create(PLACEMENT_API, "clusterstagedupdateruns", update_run())
    settle(
        lambda: fleet.approval("canary"), "the canary stage's ClusterApprovalRequest", hub_agent, fleet.run
    )
    request_name = fleet.approval_name("canary")
    hub_request = fleet.approval("canary")
    assert hub_request is not None
    assert hub_request["spec"] == {"parentStageRollout": RUN, "targetStage": "canary"}
    # KubeFleet v0.1.2 does not label the task type (later releases do): the inbox finds it in the run
    assert TASK_TYPE_LABEL not in hub_request["metadata"]["labels"]
    assert fleet.stage("canary")["clusters"] == [{"clusterName": "canary-1"}]
    assert {b["spec"]["state"] for b in fleet.bindings().values()} == {"Scheduled"}  # nothing rolled out yet

    sync_hub(registered_hub, trigger="command")
    request = ApprovalRequest.objects.get(hub=registered_hub, name=request_name)
    assert request.state == "pending" and request.run is not None and request.run.name == RUN
    client.force_login(superuser())
    row = inbox_row(client, request)
    for text in (request_name, RUN, "canary", "before stage", "pending", "canary-1", "Approve"):
        assert text in row, text

    response = client.post(reverse("rollouts:approval-approve", args=[request.pk]))

    assert response.status_code == 302
    approved = condition(fleet.get(PLACEMENT_API, "clusterapprovalrequests", request_name), "Approved")
    assert approved is not None
    generation = hub_request["metadata"]["generation"]
    # what `kubectl fleet approve` writes: its reason and message, at the request's generation
    assert {k: approved[k] for k in ("status", "reason", "message", "observedGeneration")} == {
        "status": "True",
        "reason": "ClusterApprovalRequestApproved",
        "message": "ClusterApprovalRequest has been approved",
        "observedGeneration": generation,
    }

    # the agent accepts it, marks the run's task approved, and rolls the canary stage out
    settle(
        lambda: condition(fleet.approval("canary"), "ApprovalAccepted"),
        "the approval's acceptance",
        hub_agent,
        fleet.run,
    )
    accepted = condition(fleet.approval("canary"), "ApprovalAccepted")
    assert accepted is not None
    # the dashboard's own runs write the same acceptance
    assert (accepted["reason"], accepted["message"]) == (ACCEPTED_REASON, ACCEPTED_MESSAGE)
    settle(
        lambda: fleet.bindings()["canary-1"]["spec"]["state"] == "Bound",
        "the canary cluster's binding bound",
        hub_agent,
        fleet.run,
    )
    task = fleet.stage("canary")["beforeStageTaskStatus"][0]
    assert is_true(task["conditions"], "ApprovalRequestApproved")
    bindings = fleet.bindings()
    assert bindings["canary-1"]["spec"]["resourceSnapshotName"] == f"{PLACEMENT}-0-snapshot"
    assert {bindings[name]["spec"]["state"] for name in ("prod-1", "prod-2")} == {"Scheduled"}
    # re-read from the hub; already accepted, the request may have left the open ones the inbox shows first
    assert 'data-state="accepted"' in inbox_row(client, request, state="all")

    # the member agent applies the canary's Work; the run finishes the stage and stops before prod
    settle(lambda: apply_works(fleet, "canary-1"), "the canary cluster's Work", hub_agent, fleet.run)
    settle(lambda: fleet.approval("prod"), "the prod stage's ClusterApprovalRequest", hub_agent, fleet.run)
    assert is_true(fleet.stage("canary")["conditions"], "Succeeded")
    assert {fleet.bindings()[name]["spec"]["state"] for name in ("prod-1", "prod-2")} == {"Scheduled"}
    sync_hub(registered_hub, trigger="command")
    prod = ApprovalRequest.objects.get(hub=registered_hub, name=fleet.approval_name("prod"))
    assert prod.state == "pending" and "prod-2" in inbox_row(client, prod)
    print(
        f"realhub: KubeFleet hub agent started in {hub_agent.started_in:.1f} s, "
        f"RSS {hub_agent.rss_bytes() / 2**20:.0f} MiB; it accepted the dashboard's approval of "
        f"{request_name} and rolled stage canary out"
    )
