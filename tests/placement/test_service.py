"""The placement service on the demo fleet: evaluation, stored decisions, stability, spec changes."""

import copy
import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import AuditEntry, ClusterSetRole, Hub
from placement import access, explanations, service
from placement.families.fleet import policy_snapshot
from placement.models import PLACEMENT_LABEL, DecisionChange, Placement, PlacementDecision, PlacementEvent
from placement.scheduler.errors import ManifestError
from tests.factories import UserFactory, placement_role
from tests.placement.conftest import NOW, WEB_SPEC

pytestmark = pytest.mark.django_db


def test_decision_diff_sorts_kept_added_removed() -> None:
    assert service.decision_diff(["c", "a", "b"], ["d", "b", "a"]) == {
        "kept": ["a", "b"],
        "added": ["d"],
        "removed": ["c"],
    }


def test_creating_stores_decisions_as_upstream(web_placement: Placement) -> None:
    decision = web_placement.decisions.get()
    assert decision.owner == "dashboard" and decision.hub == web_placement.hub
    assert decision.name == "shop-decision-1"
    assert decision.labels == {
        PLACEMENT_LABEL: "shop",
        "cluster.open-cluster-management.io/decision-group-name": "",
        "cluster.open-cluster-management.io/decision-group-index": "0",
    }
    names = [d["clusterName"] for d in decision.decisions]
    assert names == sorted(names) and len(names) == 2
    assert web_placement.status["numberOfSelectedClusters"] == 2
    assert web_placement.status["decisionGroups"] == [
        {
            "decisionGroupIndex": 0,
            "decisionGroupName": "",
            "decisions": ["shop-decision-1"],
            "clusterCount": 2,
        }
    ]
    satisfied = {c["type"]: c for c in web_placement.status["conditions"]}["PlacementSatisfied"]
    assert (satisfied["status"], satisfied["reason"]) == ("True", "AllDecisionsScheduled")
    # a real API server drops status on create: create, then the status patch and the scores
    assert [e.reason for e in reversed(web_placement.events.all())] == [
        "DecisionCreate",
        "DecisionUpdate",
        "ScoreUpdate",
    ]
    explained = web_placement.explanation
    assert explained["selected"] == names
    assert "clusters" not in explained  # stored as a packed record beside it
    clusters = explanations.full(web_placement)["clusters"]
    assert [c["name"] for c in clusters if c["selected"]] == sorted(
        names, key=lambda n: [c["name"] for c in clusters].index(n)
    )
    assert explained["outside"]["count"] + len(clusters) == 12  # the OCM clusters
    assert "not a member of any ManagedClusterSet" in explained["outside"]["reason"]


def test_history_records_creation_with_the_actor(web_placement: Placement, editor: User) -> None:
    # one entry: the spec it was created with and the decisions that spec led to
    [created] = web_placement.history.all()
    assert created.trigger == "created" and created.actor == editor
    assert created.spec_before is None and created.spec_after == WEB_SPEC
    assert created.added == sorted(web_placement.explanation["selected"]) and created.removed == []


def test_a_second_reschedule_is_stable(web_placement: Placement) -> None:
    events = PlacementEvent.objects.count()
    assert service.reschedule(web_placement, trigger="periodic resync") is None
    assert PlacementEvent.objects.count() == events  # no object changed, so no event, as upstream
    assert web_placement.history.count() == 1


def test_evaluate_is_pure_and_takes_a_what_if_spec(web_placement: Placement) -> None:
    before = (
        PlacementDecision.objects.count(),
        PlacementEvent.objects.count(),
        DecisionChange.objects.count(),
    )
    spec = copy.deepcopy(WEB_SPEC) | {"numberOfClusters": 4}
    with CaptureQueriesContext(connection) as queries:
        result = service.evaluate(web_placement, spec=spec, now=NOW)
    assert not [q for q in queries.captured_queries if not q["sql"].lstrip().upper().startswith("SELECT")]
    assert len(result.selected) == 4
    diff = service.decision_diff(web_placement.explanation["selected"], result.selected)
    assert len(diff["kept"]) == 2 and len(diff["added"]) == 2  # Steady keeps the current two
    assert before == (
        PlacementDecision.objects.count(),
        PlacementEvent.objects.count(),
        DecisionChange.objects.count(),
    )


def test_evaluate_raises_manifest_errors_for_what_admission_refuses(web_placement: Placement) -> None:
    spec = copy.deepcopy(WEB_SPEC)
    spec["prioritizerPolicy"]["configurations"][0]["weight"] = 11
    with pytest.raises(ManifestError) as raised:
        service.evaluate(web_placement, spec=spec)
    assert raised.value.field.startswith("spec.prioritizerPolicy.configurations[0].weight")


def test_the_snapshot_is_built_once_per_hub_state(manifests_hub: Hub) -> None:
    first = service.hub_snapshot(manifests_hub)
    assert service.hub_snapshot(manifests_hub) is first
    service.invalidate_snapshot(manifests_hub.pk)
    assert service.hub_snapshot(manifests_hub) is not first


def test_apply_spec_reschedules_and_records_the_edit(web_placement: Placement, editor: User) -> None:
    spec = copy.deepcopy(WEB_SPEC) | {"numberOfClusters": 3}
    service.apply_spec(web_placement, spec, actor=editor, trigger="weights edited")
    web_placement.refresh_from_db()
    assert web_placement.spec == spec and web_placement.status["numberOfSelectedClusters"] == 3
    # one entry for the edit: its spec and the decisions it led to
    edit, created = list(web_placement.history.all())
    assert (edit.trigger, len(edit.added), edit.removed, edit.actor) == ("weights edited", 1, [], editor)
    assert edit.spec_before == WEB_SPEC and edit.spec_after == spec and created.trigger == "created"


def test_apply_spec_refuses_invalid_specs_and_keeps_the_old_one(
    web_placement: Placement, editor: User
) -> None:
    with pytest.raises(ValidationError) as raised:
        service.apply_spec(web_placement, {**WEB_SPEC, "numberOfClusters": -1}, actor=editor)
    assert "spec.numberOfClusters" in raised.value.message_dict
    web_placement.refresh_from_db()
    assert web_placement.spec == WEB_SPEC


def staff_with_the_old_permissions(_hub: Hub) -> User:
    """Staff with the model permissions changing placements needed before cluster-set roles."""
    user = UserFactory(username="staff", is_staff=True)
    for codename in ("add_placement", "change_placement", "delete_placement"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return User.objects.get(pk=user.pk)  # permissions are cached per instance


def create_twin(hub: Hub, actor: User) -> Placement:
    """A second Placement in namespace web."""
    fields = {"kind": Placement.Kind.PLACEMENT, "namespace": "web", "name": "shop-twin", "spec": WEB_SPEC}
    return service.create_placement(hub=hub, actor=actor, **fields)


# web_placement is in namespace web, bound to sets prod-us, prod-eu and staging; ml is bound to global
REFUSED: dict[str, Callable[[Hub], User]] = {
    "the view role on the sets bound to web": lambda hub: placement_role(
        hub, ("web",), role=ClusterSetRole.Role.VIEW, username="viewer"
    ),
    "admin of the set bound to ml only": lambda hub: placement_role(hub, ("ml",), username="ml-admin"),
    "staff with the model permissions": staff_with_the_old_permissions,
}


@pytest.mark.parametrize("who", REFUSED)
def test_changes_need_the_admin_role_on_a_set_bound_to_the_namespace(
    who: str, web_placement: Placement, manifests_hub: Hub
) -> None:
    user = REFUSED[who](manifests_hub)
    history = web_placement.history.count()

    with pytest.raises(PermissionDenied, match=re.escape(access.CHANGE_DENIED)):
        service.apply_spec(web_placement, {**WEB_SPEC, "numberOfClusters": 1}, actor=user)
    with pytest.raises(PermissionDenied, match=re.escape(access.CHANGE_DENIED)):
        service.delete_placement(web_placement, actor=user)
    with pytest.raises(PermissionDenied, match=re.escape(access.ADD_DENIED)):
        create_twin(manifests_hub, user)

    web_placement.refresh_from_db()
    assert web_placement.spec == WEB_SPEC and web_placement.history.count() == history
    assert not Placement.objects.filter(hub=manifests_hub, name="shop-twin").exists()
    denied = AuditEntry.objects.filter(actor=user).order_by("pk")
    assert [(e.action, e.outcome, e.hub, e.target_id, e.target) for e in denied] == [
        ("placement.spec", AuditEntry.Outcome.DENIED, manifests_hub, str(web_placement.pk), "web/shop"),
        ("placement.delete", AuditEntry.Outcome.DENIED, manifests_hub, str(web_placement.pk), "web/shop"),
        ("placement.create", AuditEntry.Outcome.DENIED, manifests_hub, "", "web/shop-twin"),
    ]


@pytest.mark.parametrize(
    "make_user",
    [
        lambda hub: placement_role(hub, ("web",), username="web-admin"),
        lambda hub: UserFactory(username="root", is_superuser=True),
    ],
    ids=["admin of the sets bound to web", "a superuser"],
)
def test_an_admin_of_a_set_bound_to_the_namespace_or_a_superuser_changes_adds_and_deletes(
    make_user: Callable[[Hub], User], web_placement: Placement, manifests_hub: Hub
) -> None:
    user = make_user(manifests_hub)
    changed = {**WEB_SPEC, "numberOfClusters": 1}
    service.apply_spec(web_placement, changed, actor=user)
    web_placement.refresh_from_db()
    assert web_placement.spec == changed and web_placement.history.first().actor == user
    twin = create_twin(manifests_hub, user)
    service.delete_placement(twin, actor=user)
    assert not Placement.objects.filter(pk=twin.pk).exists()
    entries = AuditEntry.objects.filter(actor=user).order_by("pk")
    assert [(e.action, e.outcome, e.target) for e in entries] == [
        ("placement.spec", AuditEntry.Outcome.OK, "web/shop"),
        ("placement.create", AuditEntry.Outcome.OK, "web/shop-twin"),
        ("placement.delete", AuditEntry.Outcome.OK, "web/shop-twin"),
    ]
    assert (entries[0].before, entries[0].after) == (WEB_SPEC, changed)


def test_hub_owned_placements_are_read_only_and_only_explained(manifests_hub: Hub, editor: User) -> None:
    mirror = Placement.objects.get(hub=manifests_hub, namespace="web", name="frontend")
    hub_decisions = list(PlacementDecision.objects.values_list("pk", "decisions"))
    with pytest.raises(access.ReadOnlyPlacement):
        service.apply_spec(mirror, mirror.spec, actor=editor)
    service.reschedule(mirror, trigger="periodic resync", now=NOW)
    mirror.refresh_from_db()
    assert mirror.explanation["name"] == "frontend" and explanations.record(mirror).rows()
    assert list(PlacementDecision.objects.values_list("pk", "decisions")) == hub_decisions
    assert not mirror.events.exists()


def test_balance_counts_the_hubs_decisions_and_ours(web_placement: Placement, editor: User) -> None:
    twin = service.create_placement(
        kind=Placement.Kind.PLACEMENT,
        hub=web_placement.hub,
        namespace="web",
        name="shop-twin",
        spec={
            **WEB_SPEC,
            "prioritizerPolicy": {
                "mode": "Exact",
                "configurations": [
                    {"scoreCoordinate": {"type": "BuiltIn", "builtIn": "Balance"}, "weight": 1}
                ],
            },
        },
        actor=editor,
    )
    # Balance steers away from the clusters the first placement took
    assert not set(twin.explanation["selected"]) & set(web_placement.explanation["selected"])


def test_create_refuses_a_name_the_hub_already_has(manifests_hub: Hub, editor: User) -> None:
    with pytest.raises(ValidationError) as raised:
        service.create_placement(
            kind=Placement.Kind.PLACEMENT,
            hub=manifests_hub,
            namespace="web",
            name="frontend",
            spec=WEB_SPEC,
            actor=editor,
        )
    assert "metadata.name" in raised.value.message_dict


def test_fleet_crps_get_bindings_and_the_scheduled_condition(manifests_hub: Hub, editor: User) -> None:
    crp = service.create_placement(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        hub=manifests_hub,
        namespace="",
        name="web-crp",
        spec={
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
            "policy": {"placementType": "PickN", "numberOfClusters": 2},
        },
        actor=editor,
    )
    crp.refresh_from_db()
    bindings = list(crp.bindings.all())
    assert len(bindings) <= 2 and all(b.owner == "dashboard" for b in bindings)
    assert {b.spec["targetCluster"] for b in bindings} == set(crp.explanation["selected"])
    assert crp.status["conditions"][0]["type"] == "ClusterResourcePlacementScheduled"


def test_a_policy_change_is_a_new_policy_snapshot_that_makes_old_bindings_obsolete(
    manifests_hub: Hub, editor: User
) -> None:
    spec = {
        "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "web"}],
        "policy": {"placementType": "PickN", "numberOfClusters": 2},
    }
    crp = service.create_placement(
        kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT,
        hub=manifests_hub,
        namespace="",
        name="web-crp",
        spec=spec,
        actor=editor,
    )
    service.reschedule(crp, trigger="test", now=NOW)
    crp.refresh_from_db()
    assert {b.spec["schedulingPolicySnapshotName"] for b in crp.bindings.all()} == {"web-crp-0"}

    # upstream keeps numberOfClusters in an annotation of the same snapshot
    crp.spec = {**spec, "policy": {**spec["policy"], "numberOfClusters": 3}}
    assert policy_snapshot(crp, [])[0] == 0

    crp.spec = {
        **spec,
        "policy": {**spec["policy"], "tolerations": [{"key": "maintenance", "operator": "Exists"}]},
    }
    crp.save()
    service.reschedule(crp, trigger="test", now=NOW)
    crp.refresh_from_db()
    assert crp.status["policySnapshot"]["index"] == 1
    live = [b for b in crp.bindings.all() if b.spec["state"] != "Unscheduled"]
    assert live and {b.spec["schedulingPolicySnapshotName"] for b in live} == {"web-crp-1"}
