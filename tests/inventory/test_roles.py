"""Role resolution: direct or through a group, view vs admin, superusers, no role, anonymous users."""

import pytest
from django.contrib.auth.models import AnonymousUser, Group

from inventory import roles
from inventory.models import ClusterSetRole, ManagedCluster
from tests.factories import (
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    GroupFactory,
    HubFactory,
    ManagedClusterFactory,
    ManagedClusterSetFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db
ADMIN, VIEW = ClusterSetRole.Role.ADMIN, ClusterSetRole.Role.VIEW


@pytest.fixture
def fleet() -> dict[str, object]:
    """Hub east: prod = {a, c}, dev = {b, c}; d is in no set; member "a" is a's Fleet namesake."""
    hub = HubFactory(name="east")
    prod, dev = ManagedClusterSetFactory(hub=hub, name="prod"), ManagedClusterSetFactory(hub=hub, name="dev")
    clusters = {name: ManagedClusterFactory(hub=hub, name=name) for name in "abcd"}
    for cluster_set, names in ((prod, "ac"), (dev, "bc")):
        for name in names:
            ClusterSetMembershipFactory(cluster_set=cluster_set, cluster=clusters[name])
    member = ManagedClusterFactory(hub=hub, name="a", kind=ManagedCluster.Kind.MEMBER_CLUSTER)
    return {"hub": hub, "prod": prod, "dev": dev, "member": member, **clusters}


def principal(kind: str, fleet: dict) -> object:
    """A user holding `kind` on prod: view/admin directly or through a group, a superuser, nobody."""
    if kind == "anonymous":
        return AnonymousUser()
    if kind == "superuser":
        return UserFactory(username="root", is_superuser=True)
    user = UserFactory(username=kind)
    role = ADMIN if "admin" in kind else VIEW
    if kind.startswith("group"):
        group = GroupFactory(name=f"{kind}-team")
        user.groups.add(group)
        ClusterSetRoleFactory(cluster_set=fleet["prod"], role=role, user=None, group=group)
    elif kind != "nobody":
        ClusterSetRoleFactory(cluster_set=fleet["prod"], role=role, user=user)
    return user


# kind: (sets viewed, sets administered)
MATRIX = {
    "view": ({"prod"}, set()),
    "admin": ({"prod"}, {"prod"}),
    "group-view": ({"prod"}, set()),
    "group-admin": ({"prod"}, {"prod"}),
    "superuser": ({"prod", "dev"}, {"prod", "dev"}),
    "nobody": (set(), set()),
    "anonymous": (set(), set()),
}


@pytest.mark.parametrize("kind", MATRIX)
def test_sets_for_each_kind_of_principal(fleet, kind: str) -> None:
    user = principal(kind, fleet)
    viewed, administered = MATRIX[kind]

    assert {s.name for s in roles.sets_for(user, VIEW)} == viewed
    assert {s.name for s in roles.sets_for(user, ADMIN)} == administered
    assert roles.can_view_set(user, fleet["prod"]) is ("prod" in viewed)
    assert roles.can_administer_set(user, fleet["prod"]) is ("prod" in administered)
    assert roles.can_administer_set(user, fleet["dev"]) is ("dev" in administered)


@pytest.mark.parametrize("kind", MATRIX)
def test_clusters_follow_their_sets(fleet, kind: str) -> None:
    user = principal(kind, fleet)
    viewed, administered = MATRIX[kind]
    everything = kind == "superuser"

    visible = roles.restrict(ManagedCluster.objects.all(), user)
    expected = {"a", "b", "c", "d"} if everything else ({"a", "c"} if viewed else set())
    assert {c.name for c in visible.filter(kind=ManagedCluster.Kind.MANAGED_CLUSTER)} == expected
    # c is in prod and dev: admin of either set administers it; d (in no set) only superusers
    assert roles.can_administer_cluster(user, fleet["c"]) is bool(administered)
    assert roles.can_administer_cluster(user, fleet["b"]) is everything
    assert roles.can_administer_cluster(user, fleet["d"]) is everything
    # a Fleet MemberCluster is covered by the set of its OCM namesake on the same hub
    assert roles.can_administer_cluster(user, fleet["member"]) is bool(administered)


def test_a_role_on_another_hubs_set_of_the_same_name_covers_nothing_here(fleet) -> None:
    west = ManagedClusterSetFactory(hub=HubFactory(name="west"), name="prod")
    user = UserFactory(username="west-admin")
    ClusterSetRoleFactory(cluster_set=west, role=ADMIN, user=user)

    assert list(roles.sets_for(user)) == [west]
    assert not roles.can_administer_cluster(user, fleet["a"])
    assert not roles.can_approve_clusters(user, fleet["hub"], ["a"])


def test_roles_of_several_groups_and_a_direct_role_add_up(fleet) -> None:
    user = UserFactory(username="both")
    ops, sre = GroupFactory(name="ops"), GroupFactory(name="sre")
    user.groups.add(ops, sre)
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=VIEW, user=None, group=ops)
    ClusterSetRoleFactory(cluster_set=fleet["dev"], role=ADMIN, user=None, group=sre)
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=ADMIN, user=user)

    assert {s.name for s in roles.sets_for(user, ADMIN)} == {"prod", "dev"}
    # one row per set even with several ways in
    assert roles.sets_for(user).count() == 2


@pytest.mark.parametrize(
    ("administered", "names", "allowed"),
    [
        (["prod"], ["a"], True),
        (["prod"], ["a", "c"], True),
        (["prod"], ["a", "b"], False),  # b is only in dev
        (["prod", "dev"], ["a", "b", "c"], True),  # two sets cover the stage together
        (["prod", "dev"], ["a", "d"], False),  # d is in no set
        (["prod"], ["a", "unknown"], False),
        (["prod"], [], True),  # an empty stage: admin of some set of the hub
        ([], [], False),
    ],
)
def test_can_approve_clusters_needs_every_cluster_covered(fleet, administered, names, allowed) -> None:
    user = UserFactory(username="approver")
    for name in administered:
        ClusterSetRoleFactory(cluster_set=fleet[name], role=ADMIN, user=user)

    assert roles.can_approve_clusters(user, fleet["hub"], names) is allowed


def test_can_approve_clusters_view_is_not_enough_and_superusers_always_can(fleet) -> None:
    viewer = UserFactory(username="viewer")
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=VIEW, user=viewer)
    root = UserFactory(username="root", is_superuser=True)

    assert not roles.can_approve_clusters(viewer, fleet["hub"], ["a"])
    assert roles.can_approve_clusters(root, fleet["hub"], ["d", "nowhere"])
    assert not roles.can_approve_clusters(AnonymousUser(), fleet["hub"], [])


def test_an_inactive_superuser_is_not_a_superuser(fleet) -> None:
    root = UserFactory(username="gone", is_superuser=True, is_active=False)
    assert not roles.sets_for(root).exists()


def test_unknown_action_and_model_are_programming_errors(fleet) -> None:
    user = UserFactory()
    with pytest.raises(ValueError, match="unknown action"):
        roles.restrict(ManagedCluster.objects.all(), user, "edit")
    with pytest.raises(TypeError, match="no role rule for Group"):
        roles.restrict(Group.objects.all(), user)


@pytest.mark.parametrize("repeat", [1, 30])
def test_an_inbox_page_of_stages_is_checked_in_two_queries(
    fleet, django_assert_max_num_queries, repeat
) -> None:
    user = UserFactory(username="approver")
    ClusterSetRoleFactory(cluster_set=fleet["prod"], role=ADMIN, user=user)
    west = HubFactory(name="west")
    stages = [(fleet["hub"].pk, ["a", "c"]), (fleet["hub"].pk, ["b"]), (fleet["hub"].pk, []), (west.pk, [])]

    with django_assert_max_num_queries(2):
        verdicts = roles.can_approve_stages(user, stages * repeat)
    assert verdicts == [True, False, True, False] * repeat
