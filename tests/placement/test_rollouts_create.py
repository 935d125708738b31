"""Creating dashboard-owned strategies and runs: upstream's field paths and messages, the External
dashboard-owned placement a run needs, the cluster-set roles they need, audit, and the preview of what
initialisation does."""

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import PermissionDenied, ValidationError

from inventory.models import AuditEntry, ClusterSetRole, Hub, ManagedCluster
from placement import access
from placement.models import CRP_LABEL, Owner, Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import runs as rollouts
from tests.factories import (
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    PlacementFactory,
    StagedUpdateStrategyFactory,
    UserFactory,
    placement_role,
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
    editor = placement_role(hub, username="editor")  # admin of a populated set of the hub
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


def staff_with_the_old_permissions(_hub: Hub) -> User:
    """Staff with the model permissions adding runs and strategies needed before cluster-set roles."""
    user = UserFactory(username="staff", is_staff=True)
    for codename in ("add_stagedupdaterun", "change_stagedupdaterun", "add_stagedupdatestrategy"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


def admin_of_an_empty_set(hub: Hub) -> User:
    """Admin of a set of the hub without members: it selects none of the clusters a CRP picks from."""
    user = UserFactory(username="empty-set-admin")
    empty = ManagedClusterSetFactory(hub=hub, name="empty")
    ClusterSetRoleFactory(cluster_set=empty, user=user, role=ClusterSetRole.Role.ADMIN)
    return user


# who is refused, and the reason a run's creation gives them (a strategy's is always STRATEGY_DENIED);
# None: the CRP is hidden from them, so it is "not found" as if it did not exist (a field error)
REFUSED: dict[str, tuple[Callable[[Hub], User], str | None]] = {
    "the view role on a set of the hub": (
        lambda hub: placement_role(hub, role=ClusterSetRole.Role.VIEW, username="viewer"),
        access.ADMIN_NEEDED,
    ),
    "admin of a set of another hub": (
        lambda hub: placement_role(HubFactory(name="west", serves_fleet=True), username="west-admin"),
        None,
    ),
    "admin of an empty set of the hub": (admin_of_an_empty_set, None),
    "staff with the model permissions": (staff_with_the_old_permissions, access.ADMIN_NEEDED),
}


@pytest.mark.parametrize("who", REFUSED)
def test_runs_and_strategies_are_refused_without_the_admin_role_on_a_set_of_their_hub(hub, who: str) -> None:
    crp(hub)
    StagedUpdateStrategyFactory(hub=hub, name="s")
    make_user, run_denied = REFUSED[who]
    user = make_user(hub)

    if run_denied is None:
        hidden = f"ClusterResourcePlacement web not found on hub {hub.name}"
        with pytest.raises(ValidationError, match=hidden):
            rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor=user)
    else:
        with pytest.raises(PermissionDenied, match=re.escape(run_denied)):
            rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor=user)
    with pytest.raises(PermissionDenied, match=re.escape(rollouts.STRATEGY_DENIED)):
        rollouts.create_strategy(hub=hub, name="t", spec={"stages": []}, actor=user)

    assert not StagedUpdateRun.objects.exists()
    assert list(StagedUpdateStrategy.objects.values_list("name", flat=True)) == ["s"]
    denied = AuditEntry.objects.order_by("pk")
    run_refused = [] if run_denied is None else [("run.create", AuditEntry.Outcome.DENIED, user, hub, "r")]
    assert [(e.action, e.outcome, e.actor, e.hub, e.target) for e in denied] == [
        *run_refused,
        ("strategy.create", AuditEntry.Outcome.DENIED, user, hub, "t"),
    ]


@pytest.mark.parametrize(
    "make_user",
    [lambda hub: placement_role(hub, username="admin"), lambda hub: UserFactory(is_superuser=True)],
    ids=["admin of a populated set of the hub", "a superuser"],
)
def test_an_admin_of_a_set_of_the_hub_or_a_superuser_creates_runs_and_strategies(
    hub, make_user: Callable[[Hub], User]
) -> None:
    crp(hub)
    StagedUpdateStrategyFactory(hub=hub, name="s")
    user = make_user(hub)
    run = rollouts.create_run(hub=hub, name="r", spec=run_spec(), actor=user)
    strategy = rollouts.create_strategy(hub=hub, name="t", spec={"stages": []}, actor=user)
    assert (run.owner, run.placement.name, strategy.owner) == (Owner.DASHBOARD, "web", Owner.DASHBOARD)
    entries = AuditEntry.objects.order_by("pk")
    assert [(e.action, e.outcome, e.actor) for e in entries] == [
        ("run.create", AuditEntry.Outcome.OK, user),
        ("strategy.create", AuditEntry.Outcome.OK, user),
    ]


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
