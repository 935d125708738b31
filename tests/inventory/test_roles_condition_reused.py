"""`roles.restrict` builds a user's condition once and reuses it, and `roles.allows` compiles its check of one
object once, yet every query reads the role rows as they are when it runs: a role granted, revoked or given
through a group after an earlier check counts at once."""

import pytest
from django.contrib.auth.models import Group
from django.http import Http404

from inventory import roles
from inventory.models import ClusterSetRole, ManagedCluster
from placement import access
from placement.models import Placement
from tests.factories import (
    ClusterSetMembershipFactory,
    ClusterSetRoleFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    PlacementFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_roles_changed_after_a_check_count_in_the_next_one() -> None:
    hub = HubFactory(name="east")
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    cluster = ClusterSetMembershipFactory(cluster_set=prod, cluster__hub=hub, cluster__name="p1").cluster
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-a", name="prod")
    placement = PlacementFactory(hub=hub, namespace="team-a", name="web")
    user = UserFactory(username="viewer")

    def sees() -> tuple[list[ManagedCluster], list[Placement]]:
        return (
            list(roles.restrict(ManagedCluster.objects.all(), user)),
            list(access.visible(Placement.objects.all(), user)),
        )

    assert sees() == ([], [])
    role = ClusterSetRoleFactory(cluster_set=prod, user=user, role=ClusterSetRole.Role.VIEW)
    assert sees() == ([cluster], [placement])
    role.delete()
    assert sees() == ([], [])
    group = Group.objects.create(name="viewers")
    user.groups.add(group)
    ClusterSetRole.objects.create(cluster_set=prod, group=group, role=ClusterSetRole.Role.VIEW)
    assert sees() == ([cluster], [placement])
    # another user's check is their own, whatever was built before
    assert list(roles.restrict(ManagedCluster.objects.all(), UserFactory(username="other"))) == []


def test_a_check_of_one_object_is_compiled_once_and_reads_the_roles_as_they_are() -> None:
    hub = HubFactory(name="east")
    prod = ManagedClusterSetFactory(hub=hub, name="prod")
    ClusterSetMembershipFactory(cluster_set=prod, cluster__hub=hub, cluster__name="p1")
    ManagedClusterSetBindingFactory(hub=hub, namespace="team-a", name="prod")
    placement = PlacementFactory(hub=hub, namespace="team-a", name="web")
    user = UserFactory(username="viewer")
    roles._check.cache_clear()

    def sees() -> tuple[bool, bool, bool]:
        try:
            found = access.visible_one(Placement.objects.all(), user, placement.pk) == placement
        except Http404:
            found = False
        return roles.can_view_set(user, prod), access.can_view(user, placement), found

    assert sees() == (False, False, False)
    compiled = roles._check.cache_info().misses
    role = ClusterSetRoleFactory(cluster_set=prod, user=user, role=ClusterSetRole.Role.VIEW)
    assert sees() == (True, True, True)
    assert not access.can_change(user, placement)  # view on a bound set changes nothing
    role.delete()
    assert sees() == (False, False, False)
    group = Group.objects.create(name="viewers")
    user.groups.add(group)
    ClusterSetRole.objects.create(cluster_set=prod, group=group, role=ClusterSetRole.Role.VIEW)
    assert sees() == (True, True, True)
    # one statement per model and action, compiled by the first check: the later ones only ran it
    assert compiled == 2
    assert roles._check.cache_info().misses == 3  # and the change check
    # another user's check is their own, whatever was compiled before
    other = UserFactory(username="other")
    assert not roles.can_view_set(other, prod)
    assert not access.can_view(other, placement)
