"""Who may see and change placements, staged update runs and strategies.

The cluster-set and namespace roles of `inventory.roles` decide, as the hub's RBAC does:
- an OCM Placement is namespaced: seeing one needs a role in its namespace or the view role on a set
  bound to it; adding, changing or deleting one needs the edit (or admin) role in its namespace. The
  admin of a set bound there decides which clusters the set holds, not the namespace's placements;
- a Fleet ClusterResourcePlacement is cluster-scoped: seeing one needs the view role on a populated set
  of its hub, changing or adding one the admin role on such a set; a strategy, cluster-scoped like a CRP,
  follows the same rule. What belongs to a placement (runs, approval requests, decisions) goes with it.
Superusers may do everything. Commands (actors given as strings) act for whoever holds the shell.

Each `can_*` is one query (none for superusers); `authorise` raises PermissionDenied with a sentence a
page or the API shows as it is; `authorise_change` is the one prologue of every change to a placement,
shared by the service, the editors, the pages and the API. The rules that narrow these models' rows
(`visible`) are registered with `inventory.roles` by `register_rules` when the app is ready.
"""

import functools
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest

from inventory import audit, roles
from inventory.models import Hub
from placement import families
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    DecisionChange,
    Placement,
    PlacementDecision,
    PlacementEvent,
    StagedUpdateRun,
    StagedUpdateStrategy,
)

User = AbstractBaseUser | AnonymousUser
M = TypeVar("M", bound=models.Model)
Actor = AbstractBaseUser | str | None

CHANGE_DENIED = (
    "Changing a placement needs the edit role in its namespace (OCM) "
    "or the admin role on a cluster set of its hub (Fleet)."
)
ADD_DENIED = (
    "Adding a placement needs the edit role in its namespace (OCM) "
    "or the admin role on a cluster set of its hub (Fleet)."
)
ADMIN_NEEDED = (
    "Adding placements needs the edit role in a namespace or the admin role on a cluster set; "
    "runs and strategies the admin role on a cluster set."
)


class ReadOnlyPlacement(PermissionDenied):
    """A hub-owned placement: its hub's controller decides; change it on the hub."""


def _placement_rule(held: roles.Held) -> Q:
    # the kind first: PostgreSQL keeps the order of the terms of an AND inside an OR, so a placement of
    # the other family never runs this family's subqueries
    rules = (Q(kind=family.kind) & Q(family.access_rule(held)) for family in families.all_families())
    return functools.reduce(operator.or_, rules)


def _through_placement(path: str) -> roles.Rule:
    """Rows that belong to a placement (at `path`) are visible with it; rows without one to superusers."""
    return lambda held: Q(**{f"{path}__in": Placement.objects.filter(_placement_rule(held))})


def register_rules() -> None:
    roles.register(Placement, _placement_rule)
    for model in (PlacementDecision, ClusterResourceBinding, PlacementEvent, DecisionChange, StagedUpdateRun):
        roles.register(model, _through_placement("placement"))
    # cluster-scoped like a CRP, and what CRPs of its hub roll out with
    roles.register(
        StagedUpdateStrategy, lambda held: Exists(roles.populated_sets_of(held.sets, OuterRef("hub_id")))
    )
    roles.register(ApprovalRequest, _through_placement("run__placement"))


def visible(queryset: QuerySet[M], user: User) -> QuerySet[M]:
    """`queryset` (placements, runs, strategies, approval requests, ...) narrowed to what `user` sees."""
    return roles.restrict(queryset, user)


def visible_one(queryset: QuerySet[M], user: User, pk: Any) -> M:
    """The row `pk` of `queryset` (a placement, with what a page reads of it) if `user` sees it; Http404
    otherwise (`roles.get_visible`)."""
    return roles.get_visible(queryset, user, pk)


def administers_any(user: User) -> bool:
    """Whether `user` may add anything at all: the "New ..." buttons. One query."""
    return roles.places_anywhere(user)


def can_view(user: User, placement: Placement) -> bool:
    return roles.allows(user, roles.VIEW, placement)


def can_change(user: User, placement: Placement) -> bool:
    return roles.allows(user, roles.ADMIN, placement)


def can_place(user: User, hub: Hub, kind: str, namespace: str = "", action: str = roles.VIEW) -> bool:
    """Whether `user` could see (action "view") or change ("admin") a placement of `kind` in `namespace`
    on `hub` before it exists, e.g. to add one: the same rule as `visible` on existing placements (OCM:
    a role in the namespace or a viewed set bound to it; Fleet: a populated set of the hub); one query."""

    return roles.decide(user, action, lambda held: families.family(kind).may_place(held, hub, namespace))


def can_add(user: User, hub: Hub, kind: str, namespace: str = "") -> bool:
    return can_place(user, hub, kind, namespace, action=roles.ADMIN)


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
    **audited: Any,
) -> None:
    """PermissionDenied(reason), audited as a denied `action` on `target` (with the `audited` fields), for
    a user `check` refuses; commands (string actors) and system triggers (None) pass."""
    if isinstance(actor, AbstractBaseUser) and not check(actor):
        _record_refusal(actor, action, target, request, audited)
        raise PermissionDenied(reason)


def authorise_change(
    actor: Actor,
    placement: Placement,
    action: str,
    *,
    request: HttpRequest | None = None,
    verb: str = "change it",
    **audited: Any,
) -> None:
    """Refuse `action` on `placement` (audited, with the `audited` fields) to a user who may not change it
    (PermissionDenied), then to everyone when the placement is hub-owned (ReadOnlyPlacement: the hub's
    controller decides; `verb` says what to do on the hub instead)."""
    authorise(
        actor,
        lambda user: can_change(user, placement),
        CHANGE_DENIED,
        action=action,
        target=placement,
        request=request,
        **audited,
    )
    if placement.read_only:
        _record_refusal(actor, action, placement, request, audited)
        hub = placement.hub.name
        raise ReadOnlyPlacement(f"{placement} is a read-only mirror of hub {hub}; {verb} there")


def _record_refusal(
    actor: Actor, action: str, target: models.Model, request: HttpRequest | None, audited: dict[str, Any]
) -> None:
    # a page opened with GET (a form) is no attempt at a change, nor is a system trigger's (None) run:
    # their refusals are not audited
    if actor is not None and (request is None or request.method not in ("GET", "HEAD")):
        audit.record_refusal(actor, action, target, request=request, **audited)
