"""A tiny in-memory hub for driving `reconcile_update_run` by hand in tests.

Objects are plain dicts, as the demo hub and the dashboard keep them; `Hub.reconcile()` runs the
engine at the hub's frozen clock and applies the step the way the API server would (a spec change
bumps a binding's generation, a delete removes the binding). Tests then mutate bindings and approval
requests between steps, like the member agents and people would.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from placement.scheduler.fleet.types import CRP_TRACKING_LABEL
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.rollout.approval import approved_condition
from placement.scheduler.rollout.execution import (
    PolicySnapshot,
    UpdateRunInputs,
    UpdateRunStep,
    reconcile_update_run,
)
from placement.scheduler.timeutil import format_time

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
PLACEMENT = "web"
RUN = "rel-1"
STRATEGY = "rings"
SNAPSHOT = f"{PLACEMENT}-0"


def stage(name: str, ring: str | None = None, **extra: Any) -> dict[str, Any]:
    """A strategy stage selecting the clusters labelled `ring=<ring>` (all clusters when ring is None)."""
    selector: dict[str, Any] = {"matchLabels": {"ring": ring}} if ring else {}
    return {"name": name, "labelSelector": selector, **extra}


def binding(cluster: str, state: str = "Scheduled", policy: str = SNAPSHOT) -> dict[str, Any]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourceBinding",
        "metadata": {
            "name": f"{PLACEMENT}-{cluster}",
            "labels": {CRP_TRACKING_LABEL: PLACEMENT},
            "generation": 1,
        },
        "spec": {"state": state, "targetCluster": cluster, "schedulingPolicySnapshotName": policy},
        "status": {},
    }


def member(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


class Hub:
    """The run, its strategy and placement, bindings and approval requests of one staged rollout."""

    def __init__(
        self,
        members: list[dict[str, Any]],
        stages: list[dict[str, Any]],
        *,
        state: str = "Run",
        unscheduled: tuple[str, ...] = (),
        observed_cluster_count: int | None = None,
    ) -> None:
        self.now = START
        self.members = copy.deepcopy(members)
        self.run: dict[str, Any] = {
            "metadata": {"name": RUN, "generation": 1},
            "spec": {
                "placementName": PLACEMENT,
                "resourceSnapshotIndex": "",
                "stagedRolloutStrategyName": STRATEGY,
                "state": state,
            },
        }
        self.strategy: dict[str, Any] | None = {"metadata": {"name": STRATEGY}, "spec": {"stages": stages}}
        self.placement: dict[str, Any] | None = {
            "metadata": {"name": PLACEMENT},
            "spec": {"strategy": {"type": "External"}},
        }
        self.policy_snapshot: PolicySnapshot | None = PolicySnapshot(
            SNAPSHOT, "0", True, observed_cluster_count
        )
        self.bindings: dict[str, dict[str, Any]] = {}
        for m in members:
            self.add_binding(binding(m["metadata"]["name"]))
        for name in unscheduled:
            self.add_binding(binding(name, state="Unscheduled"))
        self.approvals: dict[str, dict[str, Any]] = {}
        self.latest_resource_snapshot_index = "3"
        self.steps: list[UpdateRunStep] = []

    # --- the engine -------------------------------------------------------------------------------

    def inputs(self) -> UpdateRunInputs:
        return UpdateRunInputs(
            run=copy.deepcopy(self.run),
            strategy=copy.deepcopy(self.strategy),
            placement=copy.deepcopy(self.placement),
            policy_snapshot=self.policy_snapshot,
            bindings=[
                copy.deepcopy(b) for b in sorted(self.bindings.values(), key=lambda b: b["metadata"]["name"])
            ],
            member_clusters=copy.deepcopy(self.members),
            approval_requests=copy.deepcopy(self.approvals),
            latest_resource_snapshot_index=self.latest_resource_snapshot_index,
        )

    def reconcile(self) -> UpdateRunStep:
        step = reconcile_update_run(self.inputs(), self.now)
        self.apply(step)
        return step

    def apply(self, step: UpdateRunStep) -> None:
        self.steps.append(step)
        self.run["status"] = copy.deepcopy(step.status)
        for update in step.binding_updates:
            target = self.bindings[update.name]
            target["spec"] = copy.deepcopy(update.spec)
            target["metadata"]["generation"] = update.generation
            target["status"] = {"conditions": [dict(c) for c in update.conditions]}
        for name in step.bindings_to_delete:
            del self.bindings[name]
        for request in step.approvals_to_create:
            created = copy.deepcopy(request)
            created["metadata"]["generation"] = 1
            self.approvals[created["metadata"]["name"]] = created
        for acceptance in step.approvals_to_accept:
            self.approvals[acceptance.name]["status"] = copy.deepcopy(acceptance.status)

    # --- the world changing between steps ---------------------------------------------------------

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def set_state(self, state: str) -> None:
        self.run["spec"]["state"] = state
        self.run["metadata"]["generation"] += 1

    def add_binding(self, doc: dict[str, Any]) -> None:
        self.bindings[doc["metadata"]["name"]] = doc

    def binding_of(self, cluster: str) -> dict[str, Any]:
        return self.bindings[f"{PLACEMENT}-{cluster}"]

    def report(
        self, cluster: str, condition_type: str = "Available", status: str = "True", **extra: Any
    ) -> None:
        """The member agent reports a binding condition for the binding's current generation."""
        target = self.binding_of(cluster)
        condition = {
            "type": condition_type,
            "status": status,
            "observedGeneration": target["metadata"]["generation"],
            "reason": extra.pop("reason", "Reported"),
            **extra,
        }
        status_doc = target.setdefault("status", {})
        status_doc["conditions"] = set_condition(status_doc.get("conditions") or [], condition, self.now)

    def approve(self, name: str, generation: int | None = None) -> None:
        """`kubectl fleet approve`: Approved=True at the request's generation, or at `generation`."""
        request = self.approvals[name]
        observed = request["metadata"]["generation"] if generation is None else generation
        status_doc = request.setdefault("status", {})
        status_doc["conditions"] = set_condition(
            status_doc.get("conditions") or [], approved_condition(observed, self.now, "alice"), self.now
        )

    # --- reading the run status -------------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        return self.run.get("status") or {}

    def stage_status(self, name: str) -> dict[str, Any]:
        stages = [*self.status.get("stagesStatus", []), self.status.get("deletionStageStatus") or {}]
        return next(s for s in stages if s.get("stageName") == name)

    def cluster_status(self, stage_name: str, cluster: str) -> dict[str, Any]:
        return next(c for c in self.stage_status(stage_name)["clusters"] if c["clusterName"] == cluster)


def condition(holder: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    return next((c for c in holder.get("conditions") or [] if c["type"] == condition_type), None)


def summary(holder: dict[str, Any], condition_type: str) -> tuple[str, str] | None:
    """(status, reason) of a condition, or None."""
    found = condition(holder, condition_type)
    return None if found is None else (found["status"], found["reason"])


def stamp(moment: datetime) -> str:
    return format_time(moment) or ""
