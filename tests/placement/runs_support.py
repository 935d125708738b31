"""Shared by the staged update run tests: a frozen-clock Fleet demo hub, a dashboard-owned External CRP
on it, a strategy and a run, small readers of the run's status, and the cluster-set roles and approval
requests of the approval tests."""

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from demohub import DemoHub
from demohub.store import Clock
from inventory.models import ClusterSetRole, Hub, ManagedClusterSet
from placement import service
from placement.models import ApprovalRequest, Owner, Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import runs as rollouts
from tests.factories import (
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetFactory,
    StagedUpdateRunFactory,
    UserFactory,
    placement_role,
    synced_demo_hub_row,
)

CANARY = ["eks-us-east-1-staging-008", "eks-us-east-1-staging-016"]
# in name order, as a stage without a sorting key updates them
PROD = ["aks-northeurope-prod-019", "aks-westus2-prod-001", "eks-eu-central-1-prod-009"]
STRATEGY_SPEC: dict[str, Any] = {
    "stages": [
        {
            "name": "canary",
            "labelSelector": {"matchLabels": {"environment": "staging"}},
            "afterStageTasks": [{"type": "Approval"}],
        },
        {
            "name": "prod",
            "labelSelector": {"matchLabels": {"environment": "prod"}},
            "maxConcurrency": 2,
            "afterStageTasks": [{"type": "TimedWait", "waitTime": "10m"}],
        },
    ]
}


def crp_spec(clusters: list[str] | None = None) -> dict[str, Any]:
    return {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "checkout"}],
        "policy": {"placementType": "PickFixed", "clusterNames": clusters or [*CANARY, *PROD]},
        "strategy": {"type": "External"},
    }


@pytest.fixture(name="editor")
def editor_fixture(hub_row: Hub) -> User:
    """Admin of a populated set of the Fleet hub: may change its CRPs, strategies and runs."""
    return placement_role(hub_row, username="editor")


@pytest.fixture(name="fleet_hub")
def fleet_hub_fixture(tasks_in_process: None) -> Iterator[DemoHub]:
    """A Fleet demo hub whose clock stands still at the current second; its controllers (simulated
    apply: Applied 2 s, Available 3 s later) act only when the test calls `reconcile()`."""
    started = timezone.now().replace(microsecond=0)
    with DemoHub(
        clusters=24,
        fleet=True,
        seed=7,
        clock=Clock.frozen(started),
        controllers=True,
        controller_seconds=0,
        bookmark_seconds=0.2,
        apply_seconds=2,
        available_seconds=3,
    ) as hub:
        yield hub


@pytest.fixture(name="hub_row")
def hub_row_fixture(fleet_hub: DemoHub) -> Hub:
    return synced_demo_hub_row(fleet_hub)


@pytest.fixture(name="checkout")
def checkout_fixture(hub_row: Hub, editor: User, fleet_hub: DemoHub) -> Placement:
    """A dashboard-owned External PickFixed CRP of two staging and three prod clusters, scheduled."""
    placement = service.create_placement(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        hub=hub_row,
        namespace="",
        name="checkout",
        spec=crp_spec(),
        actor=editor,
    )
    assert placement.bindings.count() == len(CANARY) + len(PROD)
    return placement


@pytest.fixture(name="strategy")
def strategy_fixture(hub_row: Hub, editor: User) -> StagedUpdateStrategy:
    return rollouts.create_strategy(hub=hub_row, name="canary-then-prod", spec=STRATEGY_SPEC, actor=editor)


@pytest.fixture(name="stepped_by_hand")
def stepped_by_hand_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating a run or changing its state queues no step: the test steps it with a frozen `now`."""
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: False)


def new_run(hub: Hub, actor: User, state: str = "Initialize", name: str = "checkout-1") -> StagedUpdateRun:
    spec = {"placementName": "checkout", "stagedRolloutStrategyName": "canary-then-prod", "state": state}
    return rollouts.create_run(hub=hub, name=name, spec=spec, actor=actor)


class Stepper:
    """Steps a run the way its worker would, with the hub's clock as `now`, letting the hub act between."""

    def __init__(self, hub: DemoHub, run: StagedUpdateRun) -> None:
        self.hub, self.run = hub, run

    def step(self) -> rollouts.UpdateRunStep:
        step = rollouts.reconcile(self.run, self.hub.clock())
        assert step is not None
        self.run.refresh_from_db()
        return step

    def advance(self, seconds: float) -> datetime:
        """Time passes on the hub, whose controllers (simulated apply) act on it."""
        now = self.hub.advance(seconds)
        self.hub.reconcile()
        return now


def its_time_comes(run: StagedUpdateRun) -> None:
    """The run's next step is due now (its requeue time has come)."""
    StagedUpdateRun.objects.filter(pk=run.pk, requeue_at__isnull=False).update(requeue_at=timezone.now())


def condition(holder: Mapping[str, Any] | None, kind: str) -> tuple[str, str] | None:
    """(status, reason) of the condition of type `kind` in `holder["conditions"]`."""
    found = next((c for c in (holder or {}).get("conditions") or () if c["type"] == kind), None)
    return (found["status"], found["reason"]) if found else None


def stage(run: StagedUpdateRun, name: str) -> dict[str, Any]:
    return next(s for s in run.status["stagesStatus"] if s["stageName"] == name)


def cluster_states(run: StagedUpdateRun, name: str) -> dict[str, tuple[str, ...]]:
    """Per cluster of the stage: the types of its True conditions (Started, Succeeded)."""
    return {
        c["clusterName"]: tuple(x["type"] for x in c.get("conditions") or () if x["status"] == "True")
        for c in stage(run, name)["clusters"]
    }


# --- approvals: who sees a run's requests and who may approve them (cluster-set roles, inventory.roles) ---

# The demo hub's set of its three staging clusters: the seeded request's stage, and CANARY, are in it.
STAGING = "staging"
# A demo hub set holding one of those staging clusters (eks-us-east-1-staging-018) and no other.
GPU_CLUSTERS = "gpu-clusters"
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
CREATED = "2026-11-20T11:35:00Z"
# Hub east's set prod holds these clusters; by default, `approval_request`'s stage updates them.
EAST_PROD = ("prod-1", "prod-2", "prod-3", "prod-4")


def role_holder(
    hub: Hub, set_name: str, role: str = ADMIN, *, group: Group | None = None, **user_fields: Any
) -> User:
    """A user (UserFactory(**user_fields)) holding `role` on the hub's set `set_name`, or whose `group`
    holds it."""
    user = UserFactory(**user_fields)
    principal: dict[str, Any] = {"user": user}
    if group is not None:
        user.groups.add(group)
        principal = {"user": None, "group": group}
    held = ManagedClusterSet.objects.get(hub=hub, name=set_name)
    ClusterSetRoleFactory(cluster_set=held, role=role, **principal)
    return user


def cluster_set(hub: Hub, name: str, clusters: Sequence[str]) -> ManagedClusterSet:
    """A set of ManagedClusters of these names on a hub of rows only (no hub serves them)."""
    members = ManagedClusterSetFactory(hub=hub, name=name)
    for cluster in clusters:
        ClusterSetMembershipFactory(cluster_set=members, cluster__name=cluster)
    return members


@pytest.fixture(name="east")
def east_fixture(db: None) -> Hub:
    """Hub east (rows only, no hub serves it) with set prod of the clusters EAST_PROD."""
    hub = HubFactory(name="east")
    cluster_set(hub, "prod", EAST_PROD)
    return hub


def stage_status(
    stage: str, clusters: Sequence[str], request: str, task_list: str = "afterStageTaskStatus"
) -> dict[str, Any]:
    """A run's status: `stage` updates `clusters`, and its Approval task in `task_list` (after- or
    beforeStageTaskStatus) created `request` at CREATED; an earlier stage updates cluster x."""
    task = {
        "type": "Approval",
        "approvalRequestName": request,
        "conditions": [{"type": "ApprovalRequestCreated", "status": "True", "lastTransitionTime": CREATED}],
    }
    waiting = {"stageName": stage, "clusters": [{"clusterName": c} for c in clusters], task_list: [task]}
    return {"stagesStatus": [{"stageName": "other", "clusters": [{"clusterName": "x"}]}, waiting]}


def approval_request(
    hub: Hub,
    name: str,
    clusters: Sequence[str] = EAST_PROD,
    *,
    state: str = ApprovalRequest.State.PENDING,
    owner: str = Owner.HUB,
    labels: dict[str, str] | None = None,
    task_list: str = "afterStageTaskStatus",
    **run_fields: Any,
) -> ApprovalRequest:
    """A request of run `run-<name>` (of a CRP of its own on `hub`) waiting at stage prod of `clusters`;
    `run_fields` go to the run (e.g. spec)."""
    status = stage_status("prod", clusters, name, task_list)
    run = StagedUpdateRunFactory(
        placement__hub=hub, owner=owner, name=f"run-{name}", status=status, **run_fields
    )
    return ApprovalRequest.objects.create(
        hub=hub,
        owner=owner,
        name=name,
        state=state,
        run=run,
        labels=labels or {},
        spec={"parentStageRollout": run.name, "targetStage": "prod"},
    )
