"""Creating dashboard-owned strategies and runs: upstream's field paths and messages, the External
dashboard-owned placement a run needs, permissions, audit, and the preview of what initialisation does."""

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError

from inventory.models import AuditEntry, ManagedCluster
from placement import rollouts
from placement.models import CRP_LABEL, Owner, Placement
from tests.factories import (
    HubFactory,
    ManagedClusterFactory,
    PlacementFactory,
    StagedUpdateStrategyFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

EXTERNAL = {"policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}


@pytest.fixture(autouse=True)
def no_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rollouts, "request_reconcile", lambda run: False)


@pytest.fixture
def hub():
    return HubFactory(name="east", serves_fleet=True)


def crp(hub, name: str = "web", spec: dict | None = None, owner: str = Owner.DASHBOARD) -> Placement:
    kind = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT
    return PlacementFactory(hub=hub, kind=kind, namespace="", name=name, owner=owner, spec=spec or EXTERNAL)


def errors(call) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value.message_dict


def run_spec(**fields: str) -> dict[str, str]:
    return {"placementName": "web", "stagedRolloutStrategyName": "s", **fields}


def test_a_strategy_is_checked_with_the_crd_rules_and_audited(hub) -> None:
    editor = UserFactory(username="editor", is_staff=True)
    bad = {"stages": [{"name": "a", "afterStageTasks": [{"type": "TimedWait"}]}]}
    assert errors(lambda: rollouts.create_strategy(hub=hub, name="s", spec=bad, actor=editor)) == {
        "spec.stages[0].afterStageTasks": ["AfterStageTaskType is TimedWait, waitTime is required"]
    }
    assert errors(
        lambda: rollouts.create_strategy(hub=hub, name="S!", spec={"stages": []}, actor=editor)
    ) == {
        "metadata.name": [
            'Invalid value: "S!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
            "characters, '-' or '.', and must start and end with an alphanumeric character"
        ]
    }
    strategy = rollouts.create_strategy(hub=hub, name="s", spec={"stages": [{"name": "a"}]}, actor=editor)
    assert strategy.owner == Owner.DASHBOARD
    entry = AuditEntry.objects.get(action="strategy.create")
    assert (entry.actor_name, entry.after, entry.hub) == ("editor", {"stages": [{"name": "a"}]}, hub)
    assert errors(lambda: rollouts.create_strategy(hub=hub, name="s", spec={"stages": []}, actor=editor)) == {
        "metadata.name": ["ClusterStagedUpdateStrategy s already exists on hub east"]
    }


def test_a_run_needs_a_dashboard_owned_external_placement_and_an_existing_strategy(hub) -> None:
    StagedUpdateStrategyFactory(hub=hub, name="s")
    crp(hub, "rolling", {"policy": {"placementType": "PickAll"}})
    crp(hub, "mirror", EXTERNAL, owner=Owner.HUB)

    def create(**fields: str) -> dict[str, list[str]]:
        return errors(lambda: rollouts.create_run(hub=hub, name="r", spec=run_spec(**fields), actor="test"))

    assert create(placementName="nope") == {
        "spec.placementName": ["ClusterResourcePlacement nope not found on hub east"]
    }
    assert create(placementName="rolling") == {
        "spec.placementName": [
            "ClusterResourcePlacement rolling has strategy type RollingUpdate; a staged update run needs "
            "spec.strategy.type External"
        ]
    }
    assert create(placementName="mirror") == {
        "spec.placementName": [
            "ClusterResourcePlacement mirror is owned by hub east: create its runs on the hub, whose "
            "controller executes them"
        ]
    }
    crp(hub)
    assert create(stagedRolloutStrategyName="other") == {
        "spec.stagedRolloutStrategyName": ["ClusterStagedUpdateStrategy other not found on hub east"]
    }
    assert create(state="Go") == {
        "spec.state": ['Unsupported value: "Go": supported values: "Initialize", "Run", "Stop"']
    }
    assert create(stagedRolloutStrategyName="") == {"spec.stagedRolloutStrategyName": ["Required value"]}
    too_long = errors(lambda: rollouts.create_run(hub=hub, name="r" * 64, spec=run_spec(), actor="test"))
    assert too_long == {"metadata.name": ["Too long: may not be longer than 63"]}

    run = rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor="test")
    assert run.spec == {
        "placementName": "web",
        "stagedRolloutStrategyName": "s",
        "resourceSnapshotIndex": "",
        "state": "Initialize",
    }
    assert (run.owner, run.generation, run.placement.name) == (Owner.DASHBOARD, 1, "web")


def test_only_staff_or_the_permission_may_create_runs_and_strategies(hub) -> None:
    crp(hub)
    StagedUpdateStrategyFactory(hub=hub, name="s")
    viewer = UserFactory(username="viewer")
    with pytest.raises(PermissionDenied, match="placement.add_stagedupdaterun"):
        rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor=viewer)
    with pytest.raises(PermissionDenied, match="placement.add_stagedupdatestrategy"):
        rollouts.create_strategy(hub=hub, name="t", spec={"stages": []}, actor=viewer)
    viewer.user_permissions.add(Permission.objects.get(codename="add_stagedupdaterun"))
    viewer = type(viewer).objects.get(pk=viewer.pk)  # permissions are cached per instance
    assert rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor=viewer).owner == Owner.DASHBOARD


def test_the_preview_names_each_stage_s_clusters_in_update_order_or_the_initialisation_error(hub) -> None:
    """No hub involved: the preview initialises from the stored bindings and member clusters."""
    placement = crp(hub, spec={**EXTERNAL, "policy": {"placementType": "PickAll"}})
    placement.status = {
        "policySnapshot": {"index": 0, "hash": "h"},
        "conditions": [
            {"type": "ClusterResourcePlacementScheduled", "status": "True", "reason": "Scheduled"}
        ],
    }
    placement.save()
    for name, order in (("m-b", "2"), ("m-a", "10"), ("m-c", "1")):
        ManagedClusterFactory(
            hub=hub,
            name=name,
            kind=ManagedCluster.Kind.MEMBER_CLUSTER,
            labels={"order": order, "env": "prod"},
        )
        placement.bindings.create(
            hub=hub,
            owner=Owner.DASHBOARD,
            name=f"web-{name}",
            labels={CRP_LABEL: "web"},
            spec={"targetCluster": name, "state": "Scheduled", "schedulingPolicySnapshotName": "web-0"},
        )
    stages = {
        "stages": [
            {
                "name": "prod",
                "labelSelector": {"matchLabels": {"env": "prod"}},
                "sortingLabelKey": "order",
                "beforeStageTasks": [{"type": "Approval"}],
            }
        ]
    }
    StagedUpdateStrategyFactory(hub=hub, name="s", spec=stages)
    run = rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor="test")
    preview = rollouts.preview(run)
    assert (preview.error, preview.stored) == ("", False)
    stage = preview.status["stagesStatus"][0]
    assert [c["clusterName"] for c in stage["clusters"]] == ["m-c", "m-b", "m-a"]  # 1, 2, 10: as integers
    assert stage["beforeStageTaskStatus"] == [{"type": "Approval", "approvalRequestName": "r-before-prod"}]
    run.refresh_from_db()
    assert run.status == {}  # a preview writes nothing

    ManagedCluster.objects.filter(name="m-a").update(labels={"env": "prod", "order": "ten"})
    assert rollouts.preview(run).error == (
        "cannot continue the updateRun: failed to initialize the updateRun: failed to process the request "
        "due to a client error: the sorting label `order:ten` on cluster `m-a` is not valid: strconv.Atoi: "
        'parsing "ten": invalid syntax'
    )
