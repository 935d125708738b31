"""`roles.restrict` builds a user's condition once and reuses it, yet every query reads the role rows as they
are when it runs: a role granted, revoked or given through a group after an earlier check counts at once."""

import pytest
from django.contrib.auth.models import Group

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
