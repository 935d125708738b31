"""Hub writes under conflicts: the demo hub lets another writer change an object between our read and
our conditional update (409 Conflict), and every automatic write reads again, re-applies its change to
the fresh copy and keeps the other writer's, a bounded number of times; after that the step fails
visibly and the runner retries it. A staged run over 20 clusters completes under random conflicts."""

import os
from typing import Any

import pytest
from django.contrib.auth.models import User

from demohub import DemoHub
from demohub.store import CONCURRENT_WRITES_ANNOTATION
from inventory import hubwrites
from inventory.models import Hub
from placement import hubbindings, service
from placement.models import Placement
from placement.rollouts import runs as rollouts
from tests.factories import placement_role, synced_demo_hub_row
from tests.placement.runs_support import (  # noqa: F401 - fixtures
    Stepper,
    checkout_fixture,
    condition,
    editor_fixture,
    fleet_hub_fixture,
    hub_row_fixture,
    new_run,
    stepped_by_hand_fixture,
    strategy_fixture,
)

pytestmark = pytest.mark.django_db
BINDING = "ClusterResourceBinding"
ROLLOUT_STARTED = "RolloutStarted"


def hub_binding(hub: DemoHub, name: str) -> dict[str, Any]:
    return hub.store.get(BINDING, name)


def types(obj: dict[str, Any]) -> list[str]:
    return [c["type"] for c in (obj.get("status") or {}).get("conditions") or []]


def test_merge_conditions_replaces_ours_by_type_and_keeps_theirs_in_place() -> None:
    theirs = [{"type": "Applied", "status": "True"}, {"type": "RolloutStarted", "status": "False"}]
    ours = [{"type": "RolloutStarted", "status": "True"}, {"type": "Mine", "status": "True"}]
    assert hubwrites.merge_conditions(theirs, ours) == [
        {"type": "Applied", "status": "True"},
        {"type": "RolloutStarted", "status": "True"},
        {"type": "Mine", "status": "True"},
    ]


def test_binding_spec_and_status_writes_keep_the_other_writers_change(
    checkout: Placement, fleet_hub: DemoHub
) -> None:
    row = checkout.bindings.order_by("name").first()
    row.spec = {**row.spec, "state": "Bound", "resourceSnapshotName": "checkout-0-snapshot"}
    row.status = {"conditions": [{"type": ROLLOUT_STARTED, "status": "True", "reason": ROLLOUT_STARTED}]}
    row.save()
    fleet_hub.conflict_next(2, kind=BINDING)  # the spec write meets two, each re-applied to a fresh copy

    report = hubbindings.push_bindings(checkout, [row])

    assert report.conflicts == [row.name, row.name] and report.updated == [row.name]
    obj = hub_binding(fleet_hub, row.name)
    assert (obj["spec"]["state"], obj["spec"]["resourceSnapshotName"]) == ("Bound", "checkout-0-snapshot")
    assert obj["metadata"]["annotations"][CONCURRENT_WRITES_ANNOTATION] == "2"
    assert types(obj) == [ROLLOUT_STARTED]


def test_a_write_over_objects_listed_before_another_writer_changed_them_keeps_both(
    checkout: Placement, fleet_hub: DemoHub
) -> None:
    """A round pushes over the objects its sync listed; the hub's controllers may write between the two."""
    row = checkout.bindings.order_by("name").first()
    listed, _ = hubbindings.sync_bindings(checkout)
    theirs = hub_binding(fleet_hub, row.name)
    applied = {"type": "Applied", "status": "True", "reason": "Applied", "message": ""}
    fleet_hub.store.replace(
        BINDING, row.name, {**theirs, "status": {"conditions": [applied]}}, subresource="status"
    )
    row.spec = {**row.spec, "state": "Bound", "resourceSnapshotName": "checkout-0-snapshot"}
    row.status = {"conditions": [{"type": ROLLOUT_STARTED, "status": "True", "reason": ROLLOUT_STARTED}]}

    report = hubbindings.push_bindings(checkout, [row], listed=listed)

    assert report.conflicts == [row.name] and report.updated == [row.name]
    obj = hub_binding(fleet_hub, row.name)
    assert obj["spec"]["state"] == "Bound" and types(obj) == ["Applied", ROLLOUT_STARTED]
    assert row.status == obj["status"]


def test_exhausted_retries_raise_instead_of_dropping_the_write(
    checkout: Placement, fleet_hub: DemoHub
) -> None:
    row = checkout.bindings.order_by("name").first()
    row.status = {"conditions": [{"type": ROLLOUT_STARTED, "status": "True", "reason": ROLLOUT_STARTED}]}
    fleet_hub.conflict_next(hubwrites.ATTEMPTS, kind=BINDING)

    with pytest.raises(hubwrites.ConflictRetriesExhausted, match="409 Conflict") as raised:
        hubbindings.push_bindings(checkout, [row])

    assert raised.value.status == 409 and raised.value.conflicts == hubwrites.ATTEMPTS
    assert ROLLOUT_STARTED not in types(hub_binding(fleet_hub, row.name))


def test_published_decisions_survive_conflicts(demo_hub: DemoHub) -> None:
    hub = synced_demo_hub_row(demo_hub)
    hub.publish_namespace = "argocd"
    hub.save(update_fields=["publish_namespace"])
    editor = placement_role(hub, ("default",), username="editor")
    spec = {"clusterSets": ["global"], "numberOfClusters": 3}
    placement = service.create_placement(
        kind=Placement.Kind.PLACEMENT, hub=hub, namespace="default", name="shop", spec=spec, actor=editor
    )
    demo_hub.conflict_next(2, kind="PlacementDecision")
    service.apply_spec(placement, {**spec, "numberOfClusters": 1}, actor=editor)

    decision = demo_hub.store.get("PlacementDecision", "shop-decision-1", "argocd")
    assert decision["status"]["decisions"] == placement.decisions.get().decisions
    assert len(decision["status"]["decisions"]) == 1
    assert decision["metadata"]["annotations"][CONCURRENT_WRITES_ANNOTATION] == "2"  # the other writer's
    assert demo_hub.faults.conflicts_injected == 2


@pytest.mark.usefixtures("stepped_by_hand", "strategy")
def test_a_lost_rollout_started_is_pushed_again_instead_of_aborting_the_run(
    hub_row: Hub, editor: User, checkout: Placement, fleet_hub: DemoHub
) -> None:
    run = new_run(hub_row, editor, state="Run")
    stepper = Stepper(fleet_hub, run)
    stepper.step()  # initialise
    stepper.step()  # the first canary cluster starts: RolloutStarted on its binding
    [name] = [n for n, o in hubbindings.pull_binding_status(checkout).items() if ROLLOUT_STARTED in types(o)]
    # another writer replaces the status with one that lacks our condition
    lost = [c for c in hub_binding(fleet_hub, name)["status"]["conditions"] if c["type"] != ROLLOUT_STARTED]
    fleet_hub.store.patch(BINDING, name, {"status": {"conditions": lost}}, subresource="status")

    stepper.advance(5)
    stepper.step()

    assert condition(run.status, "Succeeded") is None  # neither failed nor aborted
    assert ROLLOUT_STARTED in types(hub_binding(fleet_hub, name))


# --- a staged run over 20 clusters, again and again, under random conflicts ---------------------------

CLUSTERS = 20
# Runs of the loop below; FLEETUI_CONFLICT_RUNS=50 with `-s` gives the figures the README quotes.
LOOP_RUNS = int(os.environ.get("FLEETUI_CONFLICT_RUNS", "3"))
WIDE_STRATEGY = {"stages": [{"name": "all", "labelSelector": {}, "maxConcurrency": 5}]}


def conflict_loop(hub: DemoHub, hub_row: Hub, editor: User, runs: int) -> dict[str, int]:
    """`runs` staged runs, each of a new External CRP over the same 20 clusters, stepped as the runner
    steps them (a failed step is retried) while the hub answers 409 at random; answers the figures."""
    members = sorted(hub.store.names("MemberCluster"))[:CLUSTERS]
    rollouts.create_strategy(hub=hub_row, name="wide", spec=WIDE_STRATEGY, actor=editor)
    failed_steps = 0
    for index in range(runs):
        name = f"soak-{index:02d}"
        service.create_placement(
            kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
            hub=hub_row,
            namespace="",
            name=name,
            spec={
                "resourceSelectors": [
                    {"group": "", "version": "v1", "kind": "Namespace", "name": "checkout"}
                ],
                "policy": {"placementType": "PickFixed", "clusterNames": members},
                "strategy": {"type": "External"},
            },
            actor=editor,
        )
        spec = {"placementName": name, "stagedRolloutStrategyName": "wide", "state": "Run"}
        run = rollouts.create_run(hub=hub_row, name=f"{name}-run", spec=spec, actor=editor)
        for _ in range(200):
            outcome = rollouts.reconcile_run(run.pk, hub.clock(), force=True)
            failed_steps += outcome["state"] == "failed"
            run.refresh_from_db()
            if condition(run.status, "Succeeded") is not None:
                break
            hub.advance(1)
            hub.reconcile()
        assert condition(run.status, "Succeeded") == ("True", "UpdateRunSucceeded"), run.status
    return {"runs": runs, "failed_steps": failed_steps, **hubwrites.totals.snapshot()}


@pytest.mark.usefixtures("stepped_by_hand")
def test_staged_runs_over_20_clusters_complete_under_random_conflicts(
    hub_row: Hub, editor: User, fleet_hub: DemoHub
) -> None:
    fleet_hub.faults.conflict_rate = 0.3
    before = hubwrites.totals.snapshot()

    figures = conflict_loop(fleet_hub, hub_row, editor, runs=LOOP_RUNS)
    print(f"conflicts: {LOOP_RUNS} runs over {CLUSTERS} clusters succeeded; {figures}")

    assert figures["conflicts"] > before["conflicts"]
    assert figures["conflicts"] - before["conflicts"] <= fleet_hub.faults.conflicts_injected
