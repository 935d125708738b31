"""`roles.restrict` per model: placements through bound namespaces (OCM) or the hub's sets (Fleet),
bindings, add-on scores and roles through their sets, runs and approvals through their placement;
one SQL query whatever the number of rows."""

import pytest

from inventory import roles
from inventory.models import (
    AddOnPlacementScore,
    ClusterSetRole,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
)
from placement import access
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    DecisionChange,
    Placement,
    PlacementDecision,
    PlacementEvent,
    StagedUpdateRun,
)
from tests.factories import (
    AddOnPlacementScoreFactory,
    ClusterResourceBindingFactory,
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    DecisionChangeFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    NamespaceRoleFactory,
    PlacementDecisionFactory,
    PlacementEventFactory,
    PlacementFactory,
    StagedUpdateRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW
CRP = Placement.Kind.CLUSTER_RESOURCE_PLACEMENT


@pytest.fixture
def fleet() -> dict[str, object]:
    """east: prod = {p1} bound to team-a, dev = {d1} bound to team-b, empty bound to team-c;
    west: a set "prod" bound to team-a too. A viewer of east/prod and an admin of east/dev."""
    east, west = HubFactory(name="east"), HubFactory(name="west")
    sets = {
        "prod": ManagedClusterSetFactory(hub=east, name="prod"),
        "dev": ManagedClusterSetFactory(hub=east, name="dev"),
        "empty": ManagedClusterSetFactory(hub=east, name="empty"),
        "west-prod": ManagedClusterSetFactory(hub=west, name="prod"),
    }
    for key, name in (("prod", "p1"), ("dev", "d1"), ("west-prod", "w1")):
        cluster = ManagedClusterFactory(hub=sets[key].hub, name=name)
        ClusterSetMembershipFactory(cluster_set=sets[key], cluster=cluster)
    bound = (("prod", "team-a"), ("dev", "team-b"), ("empty", "team-c"), ("west-prod", "team-a"))
    for key, namespace in bound:
        ManagedClusterSetBindingFactory(hub=sets[key].hub, namespace=namespace, name=sets[key].name)
    viewer, admin = UserFactory(username="viewer"), UserFactory(username="admin")
    ClusterSetRoleFactory(cluster_set=sets["prod"], role=VIEW, user=viewer)
    ClusterSetRoleFactory(cluster_set=sets["dev"], role=ADMIN, user=admin)
    return {"east": east, "west": west, "viewer": viewer, "admin": admin, **sets}


def names(queryset) -> set[str]:
    return {str(row) for row in queryset}


def test_ocm_placements_are_visible_through_the_sets_bound_to_their_namespace(fleet) -> None:
    east, west = fleet["east"], fleet["west"]
    namespaces = ((east, "team-a"), (east, "team-b"), (east, "team-c"), (east, "nobody"), (west, "team-a"))
    for hub, namespace in namespaces:
        PlacementFactory(hub=hub, namespace=namespace, name=f"{hub.name}-web")
    placements = Placement.objects.all()

    assert names(roles.restrict(placements, fleet["viewer"])) == {"team-a/east-web"}
    assert names(roles.restrict(placements, fleet["admin"])) == {"team-b/east-web"}
    # viewing is not administering: the viewer administers no placement
    assert names(roles.restrict(placements, fleet["viewer"], ADMIN)) == set()
    # nor does administering the set bound there: changing a namespace's placements needs a role in it
    assert names(roles.restrict(placements, fleet["admin"], ADMIN)) == set()
    NamespaceRoleFactory(hub=east, namespace="team-b", role=NamespaceRole.Role.EDIT, user=fleet["admin"])
    assert names(roles.restrict(placements, fleet["admin"], ADMIN)) == {"team-b/east-web"}


def test_fleet_placements_are_visible_to_viewers_of_a_populated_set_of_their_hub(fleet) -> None:
    PlacementFactory(hub=fleet["east"], kind=CRP, namespace="", name="east-crp")
    PlacementFactory(hub=fleet["west"], kind=CRP, namespace="", name="west-crp")
    empty_only = UserFactory(username="empty-viewer")
    ClusterSetRoleFactory(cluster_set=fleet["empty"], role=ADMIN, user=empty_only)
    placements = Placement.objects.all()

    assert names(roles.restrict(placements, fleet["viewer"])) == {"east-crp"}
    assert names(roles.restrict(placements, fleet["admin"], ADMIN)) == {"east-crp"}
    assert names(roles.restrict(placements, empty_only)) == set()


def test_bindings_scores_and_roles_follow_their_set(fleet) -> None:
    AddOnPlacementScoreFactory(hub=fleet["east"], namespace="p1")
    AddOnPlacementScoreFactory(hub=fleet["east"], namespace="d1")
    AddOnPlacementScoreFactory(hub=fleet["west"], namespace="p1")  # no cluster p1 on west
    viewer = fleet["viewer"]

    bindings = roles.restrict(ManagedClusterSetBinding.objects.all(), viewer)
    assert [(b.hub.name, b.namespace) for b in bindings] == [("east", "team-a")]
    scores = roles.restrict(AddOnPlacementScore.objects.all(), viewer)
    assert [(s.hub.name, s.namespace) for s in scores] == [("east", "p1")]
    assert [r.user for r in roles.restrict(ClusterSetRole.objects.all(), viewer)] == [viewer]


def test_what_belongs_to_a_placement_is_visible_with_it(fleet) -> None:
    web = PlacementFactory(hub=fleet["east"], namespace="team-a", name="web")
    etl = PlacementFactory(hub=fleet["east"], namespace="team-b", name="etl")
    for placement in (web, etl):
        PlacementDecisionFactory(placement=placement)
        PlacementEventFactory(placement=placement)
        DecisionChangeFactory(placement=placement)
        run = StagedUpdateRunFactory(placement=placement, hub=placement.hub, name=f"{placement.name}-run")
        ApprovalRequest.objects.create(hub=placement.hub, name=f"{placement.name}-approval", run=run)
    ClusterResourceBindingFactory(placement__hub=fleet["east"], placement__name="crp")
    orphan = StagedUpdateRunFactory(placement=None, hub=fleet["east"], name="orphan", spec={})
    ApprovalRequest.objects.create(hub=fleet["east"], name="orphan-approval", run=orphan)
    viewer = fleet["viewer"]

    for model in (PlacementDecision, PlacementEvent, DecisionChange, StagedUpdateRun):
        assert {row.placement for row in roles.restrict(model.objects.all(), viewer)} == {web}, model
    approvals = roles.restrict(ApprovalRequest.objects.all(), viewer)
    assert [row.name for row in approvals] == ["web-approval"]
    bindings = roles.restrict(ClusterResourceBinding.objects.all(), viewer)
    assert [row.placement.name for row in bindings] == ["crp"]


@pytest.mark.parametrize(
    ("kind", "hub", "namespace", "visible"),
    [
        (Placement.Kind.PLACEMENT, "east", "team-a", True),
        (Placement.Kind.PLACEMENT, "east", "team-b", False),
        (Placement.Kind.PLACEMENT, "west", "team-a", False),
        (CRP, "east", "", True),
        (CRP, "west", "", False),
    ],
)
def test_can_place_follows_the_placement_rule(fleet, kind, hub, namespace, visible) -> None:
    assert access.can_place(fleet["viewer"], fleet[hub], kind, namespace) is visible
    assert not access.can_place(fleet["viewer"], fleet[hub], kind, namespace, ADMIN)
    assert access.can_place(UserFactory(is_superuser=True), fleet[hub], kind, namespace)


def seed_rows(fleet: dict, count: int) -> None:
    """`count` more clusters and placements, half of them visible to the viewer."""
    east = fleet["east"]
    for index in range(count):
        cluster_set = fleet["prod"] if index % 2 else fleet["dev"]
        cluster = ManagedClusterFactory(hub=east, name=f"m-{index:03d}")
        ClusterSetMembershipFactory(cluster_set=cluster_set, cluster=cluster)
        PlacementFactory(hub=east, namespace="team-a" if index % 2 else "team-b", name=f"p-{index:03d}")
        PlacementFactory(hub=east, kind=CRP, namespace="", name=f"crp-{index:03d}")


QUERYSETS = [
    ManagedCluster.objects.all,
    ManagedClusterSet.objects.all,
    Placement.objects.all,
    ManagedClusterSetBinding.objects.all,
    AddOnPlacementScore.objects.all,
    ClusterSetRole.objects.all,
    ApprovalRequest.objects.all,
]


@pytest.mark.parametrize("count", [2, 60])
@pytest.mark.parametrize("queryset", QUERYSETS)
def test_restrict_is_one_query_whatever_the_rows(fleet, django_assert_num_queries, count, queryset) -> None:
    seed_rows(fleet, count)
    user = UserFactory(username="grouped")
    group = user.groups.create(name="ops")
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=VIEW, user=None, group=group)
    with django_assert_num_queries(1):
        rows = list(roles.restrict(queryset(), user))
    assert rows or queryset().model in (ManagedClusterSetBinding, AddOnPlacementScore, ApprovalRequest)


@pytest.mark.parametrize("count", [2, 60])
def test_visible_counts_scale_and_checks_stay_one_query(fleet, django_assert_num_queries, count) -> None:
    seed_rows(fleet, count)
    viewer = fleet["viewer"]

    assert roles.restrict(ManagedCluster.objects.all(), viewer).count() == 1 + count // 2
    ocm = Placement.objects.filter(kind=Placement.Kind.PLACEMENT)
    assert roles.restrict(ocm, viewer).count() == count // 2
    cluster = ManagedCluster.objects.get(name="m-001")
    with django_assert_num_queries(1):
        assert not roles.can_administer_cluster(viewer, cluster)
    with django_assert_num_queries(1):
        assert roles.can_approve_clusters(fleet["admin"], fleet["east"], ["m-000", "d1"])
