"""Who may see and change placements, staged update runs and strategies (issue 6 §1, integrations §4).

The cluster-set roles of `inventory.roles` decide, as for the inventory:
- seeing a placement needs the view role on a set bound to its namespace (OCM) or on a populated set of
  its hub (Fleet); what belongs to it (runs, approval requests, decisions) goes with it;
- changing one (spec, weights, tolerations, deleting it, rolling out a snapshot, its runs) needs the
  admin role on such a set: that admin decides what lands on the set's clusters;
- adding one needs the admin role on a set its namespace (OCM) or hub (Fleet) would make it visible
  through; a strategy, cluster-scoped like a CRP, needs the admin role on a populated set of its hub.
Superusers may do everything. Commands (actors given as strings) act for whoever holds the shell.

Each `can_*` is one query (none for superusers); `authorise` raises PermissionDenied with a sentence a
page or the API shows as it is.
"""

from collections.abc import Callable

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from inventory import audit, roles
from inventory.models import Hub
from placement.models import Placement, StagedUpdateRun

User = AbstractBaseUser | AnonymousUser
Actor = AbstractBaseUser | str | None

CHANGE_DENIED = (
    "Changing a placement needs the admin role on a cluster set bound to its namespace (OCM) "
    "or on a cluster set of its hub (Fleet)."
)
ADD_DENIED = (
    "Adding a placement needs the admin role on a cluster set bound to its namespace (OCM) "
    "or on a cluster set of its hub (Fleet)."
)
ADMIN_NEEDED = "Adding placements, runs and strategies needs the admin role on a cluster set."


def visible(queryset: QuerySet, user: User) -> QuerySet:
    """`queryset` (placements, runs, strategies, approval requests, ...) narrowed to what `user` sees."""
    return roles.restrict(queryset, user)


def administers_any(user: User) -> bool:
    """Whether `user` may add anything at all: the "New ..." buttons. One query."""
    return roles.is_superuser(user) or (user.is_authenticated and roles.sets_for(user, roles.ADMIN).exists())


def can_view(user: User, placement: Placement) -> bool:
    return roles.allows(user, roles.VIEW, placement)


def can_change(user: User, placement: Placement) -> bool:
    return roles.allows(user, roles.ADMIN, placement)


def can_add(user: User, hub: Hub, kind: str, namespace: str = "") -> bool:
    return roles.can_place(user, hub, kind, namespace, action=roles.ADMIN)


def can_add_strategy(user: User, hub: Hub) -> bool:
    """A strategy is cluster-scoped like a CRP: whoever may add a CRP to the hub may add one."""
    return can_add(user, hub, Placement.Kind.CLUSTER_RESOURCE_PLACEMENT)


def can_change_run(user: User, run: StagedUpdateRun) -> bool:
    """Admin on the run's placement; a run without a placement is for superusers."""
    return roles.allows(user, roles.ADMIN, run)


def authorise(
    actor: Actor,
    check: Callable[[User], bool],
    reason: str,
    *,
    action: str,
    target: models.Model,
    request: HttpRequest | None = None,
) -> None:
    """PermissionDenied(reason), audited as a denied `action` on `target`, for a user `check` refuses;
    commands (string actors) and system triggers (None) pass."""
    if isinstance(actor, AbstractBaseUser) and not check(actor):
        audit.record_refusal(actor, action, target, request=request)
        raise PermissionDenied(reason)
