"""Roles for the placement pages' tests (placement.access): the view role through which a placement is
visible lets its holder see it, the admin role lets them change it too.

An OCM Placement is visible through the sets bound to its namespace and changed with a role in its
namespace, a Fleet CRP (and the runs and strategies of its hub) through a populated set of its hub;
`tests.factories.placement_role` grants either.
"""

from collections.abc import Iterable

from django.contrib.auth.base_user import AbstractBaseUser
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import ClusterSetRole, Hub, ManagedClusterSet, ManagedClusterSetBinding
from placement.models import Placement
from tests.factories import (
    ClusterSetMembershipFactory,
    HubFactory,
    ManagedClusterSetBindingFactory,
    ManagedClusterSetFactory,
    placement_role,
)

VIEW, ADMIN = ClusterSetRole.Role.VIEW, ClusterSetRole.Role.ADMIN


def bind(hub: Hub, namespace: str) -> ManagedClusterSet:
    """Set `<namespace>-team` of `hub`, holding one new cluster, bound to `namespace`.

    For placements made by factories, whose namespaces have no binding: nothing schedules them, so the
    binding changes no selection. (The demo fleet's namespaces have bindings already.)
    """
    team = ManagedClusterSetFactory(hub=hub, name=f"{namespace}-team")
    ClusterSetMembershipFactory(cluster_set=team)
    ManagedClusterSetBindingFactory(hub=hub, namespace=namespace, name=team.name)
    return team


def grant(user: AbstractBaseUser, *placements: Placement, role: str = VIEW) -> AbstractBaseUser:
    """`user` holding `role` on the sets through which each placement is visible: those bound to an OCM
    Placement's namespace (a namespace without a binding gets one, see `bind`), a populated set of a CRP's
    hub. A role already held on one of those sets is kept as it is."""
    for hub, namespace in _scopes(placements):
        if namespace and not ManagedClusterSetBinding.objects.filter(hub=hub, namespace=namespace).exists():
            bind(hub, namespace)
        placement_role(hub, (namespace,) if namespace else (), role=role, user=user)
    return user


def _scopes(placements: Iterable[Placement]) -> list[tuple[Hub, str]]:
    """(hub, namespace) of each OCM Placement, (hub, "") of each CRP, once each."""
    return list(dict.fromkeys((p.hub, p.namespace if p.family.namespaced else "") for p in placements))


def elsewhere_admin(**user_fields: object) -> AbstractBaseUser:
    """A user (UserFactory(**user_fields)) who administers a populated set of another hub, elsewhere: they
    may add things there (access.administers_any), and see nothing of the hubs under test."""
    return placement_role(HubFactory(name="elsewhere"), **user_fields)


def signed_in(client: Client, user: AbstractBaseUser) -> Client:
    client.force_login(user)
    return client


def api_for(user: AbstractBaseUser) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client
