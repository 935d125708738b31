"""Cluster-set roles, admin and view (issue 6 §1, spec §4): who may see and change what.

Every page, API endpoint and command that acts for a user narrows its rows with `restrict`, which adds
subqueries to the query it is given: a check costs one SQL statement at 10 rows and at 10,000, and the
page's own query stays one query. Superusers pass everything; anonymous users nothing. Admin implies view.

What a role on a set covers (the same rules with "admin" in place of "view" for the admin action):
- the set itself, when the user holds a role on it directly or through one of their groups;
- a cluster, when a ManagedCluster of the same hub and name is a member of the set: OCM clusters through
  their own membership, a Fleet MemberCluster through its OCM namesake (a hub that serves only Fleet has
  no sets, so its clusters are for superusers);
- an OCM Placement, when its namespace holds a ManagedClusterSetBinding to the set (the namespaces that
  can use the set);
- a Fleet ClusterResourcePlacement, which is cluster-scoped and cannot be bound, when the set is on the
  placement's hub and has at least one member (the user sees some of the clusters it can pick from);
  a ClusterStagedUpdateStrategy, cluster-scoped too, by the same rule;
- a ManagedClusterSetBinding through the set it names, an AddOnPlacementScore through the cluster it
  scores (its namespace), a ClusterSetRole through its set;
- what belongs to a placement (decisions, bindings, events, history, staged update runs, and approval
  requests through their run) with the placement; such rows without a placement are for superusers.

Role changes go through `grant`, `change` and `revoke`: only admins of the set and superusers may make
them, a set keeps at least one admin unless a superuser removes it, and each attempt is audited (denied
ones too).
"""

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from django.http import HttpRequest

from inventory import audit
from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    ClusterSetMembership,
    ClusterSetRole,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    RejectedObject,
)
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

Role = ClusterSetRole.Role
VIEW = Role.VIEW
ADMIN = Role.ADMIN
User = AbstractBaseUser | AnonymousUser
T = TypeVar("T")


def is_superuser(user: User) -> bool:
    return bool(user.is_active and getattr(user, "is_superuser", False))


def _granting(action: str) -> list[str]:
    """The roles that allow `action`: admin allows viewing too."""
    if action not in Role.values:
        raise ValueError(f"unknown action {action!r}; expected one of {Role.values}")
    return [ADMIN] if action == ADMIN else [ADMIN, VIEW]


def _set_ids(user: User, action: str) -> QuerySet[ClusterSetRole]:
    """The ids of the sets `user` holds a role allowing `action` on, as a subquery (no rows read)."""
    groups = get_user_model().groups.through.objects.filter(user_id=user.pk).values("group_id")
    held = ClusterSetRole.objects.filter(Q(user=user.pk) | Q(group__in=groups), role__in=_granting(action))
    return held.values("cluster_set_id")


def sets_for(user: User, action: str = VIEW) -> QuerySet[ManagedClusterSet]:
    """The cluster sets `user` may view (view or admin role) or, with action "admin", administer."""
    return restrict(ManagedClusterSet.objects.all(), user, action)


# --- one rule per model: a condition on its rows, given the ids of the sets that allow the action


def _covered_cluster(set_ids: QuerySet, hub: str, name: str) -> Exists:
    """A ManagedCluster of the row's hub, named by the row's field `name`, is a member of one of the sets."""
    return Exists(
        ClusterSetMembership.objects.filter(
            cluster_set_id__in=set_ids, cluster__hub_id=OuterRef(hub), cluster__name=OuterRef(name)
        )
    )


def _own_membership(set_ids: QuerySet) -> Q:
    """An OCM cluster that is itself a member of one of the sets, tried before the namesake match that a
    Fleet MemberCluster needs. As `id IN (members)`, which PostgreSQL hashes once per query even beside
    the OR, where a correlated EXISTS would run once per row of a 10,000-cluster count."""
    return Q(pk__in=ClusterSetMembership.objects.filter(cluster_set_id__in=set_ids).values("cluster_id"))


def _set_named(set_ids: QuerySet, name: str) -> Exists:
    """One of the sets is on the row's hub and is named by the row's field `name`."""
    named = ManagedClusterSet.objects.filter(pk__in=set_ids, hub_id=OuterRef("hub_id"), name=OuterRef(name))
    return Exists(named)


def _bound_set_names(set_ids: QuerySet) -> QuerySet[ManagedClusterSet]:
    """Names of the sets on the (outer) binding row's hub: a binding names a set of its own hub."""
    return ManagedClusterSet.objects.filter(pk__in=set_ids, hub_id=OuterRef("hub_id")).values("name")


def _bindings_to(set_ids: QuerySet, hub: Any, namespace: Any) -> QuerySet[ManagedClusterSetBinding]:
    """Bindings of `namespace` on `hub` (values or OuterRefs) to one of the sets."""
    return ManagedClusterSetBinding.objects.filter(
        hub_id=hub, namespace=namespace, cluster_set__in=_bound_set_names(set_ids)
    )


def _populated_sets_of(set_ids: QuerySet, hub: Any) -> QuerySet[ClusterSetMembership]:
    """Members of the sets that are on `hub` (a value or an OuterRef)."""
    return ClusterSetMembership.objects.filter(cluster_set_id__in=set_ids, cluster_set__hub_id=hub)


def _placement_rule(set_ids: QuerySet) -> Q:
    hub, namespace = OuterRef("hub_id"), OuterRef("namespace")
    ocm = Q(Exists(_bindings_to(set_ids, hub, namespace)), kind=Placement.Kind.PLACEMENT)
    fleet = Q(Exists(_populated_sets_of(set_ids, hub)), kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT)
    return ocm | fleet


def _through_placement(path: str) -> Callable[[QuerySet], Q]:
    """Rows that belong to a placement (at `path`) are visible with it; rows without one to superusers."""
    return lambda set_ids: Q(**{f"{path}__in": Placement.objects.filter(_placement_rule(set_ids))})


RULES: dict[type[models.Model], Callable[[QuerySet], Q | Exists]] = {
    ManagedClusterSet: lambda set_ids: Q(pk__in=set_ids),
    ClusterSetRole: lambda set_ids: Q(cluster_set_id__in=set_ids),
    ManagedCluster: lambda set_ids: _own_membership(set_ids) | _covered_cluster(set_ids, "hub_id", "name"),
    AddOnPlacementScore: lambda set_ids: _covered_cluster(set_ids, "hub_id", "namespace"),
    ManagedClusterSetBinding: lambda set_ids: _set_named(set_ids, "cluster_set"),
    Placement: _placement_rule,
    PlacementDecision: _through_placement("placement"),
    ClusterResourceBinding: _through_placement("placement"),
    PlacementEvent: _through_placement("placement"),
    DecisionChange: _through_placement("placement"),
    StagedUpdateRun: _through_placement("placement"),
    # cluster-scoped like a CRP, and what CRPs of its hub roll out with
    StagedUpdateStrategy: lambda set_ids: Exists(_populated_sets_of(set_ids, OuterRef("hub_id"))),
    ApprovalRequest: _through_placement("run__placement"),
    # operator data (the names of every team's objects, hubs' faults): superusers only
    RejectedObject: lambda set_ids: Q(pk__in=[]),
}


def restrict(queryset: QuerySet, user: User, action: str = VIEW) -> QuerySet:
    """`queryset` narrowed to the rows `user` may see (action "view") or administer ("admin")."""
    rule = RULES.get(queryset.model)
    if rule is None:
        raise TypeError(f"no role rule for {queryset.model.__name__}")
    _granting(action)
    if is_superuser(user):
        return queryset
    if not user.is_authenticated:
        return queryset.none()
    return queryset.filter(rule(_set_ids(user, action)))


def allows(user: User, action: str, obj: models.Model) -> bool:
    """Whether `user` may view or administer one object; one query (none for superusers)."""
    if is_superuser(user):
        return True
    return restrict(type(obj)._default_manager.filter(pk=obj.pk), user, action).exists()


def can_view_set(user: User, cluster_set: ManagedClusterSet) -> bool:
    return allows(user, VIEW, cluster_set)


def can_administer_set(user: User, cluster_set: ManagedClusterSet) -> bool:
    """Admin of the set: bind it to namespaces, grant roles on it."""
    return allows(user, ADMIN, cluster_set)


def can_administer_cluster(user: User, cluster: ManagedCluster) -> bool:
    """Admin of any set the cluster (or its OCM namesake) belongs to: edit its taints."""
    return allows(user, ADMIN, cluster)


def can_approve_clusters(user: User, hub: Hub, cluster_names: Iterable[str]) -> bool:
    """Admin of sets that together cover every named cluster of the hub (a rollout stage); one query.

    A stage without clusters changes nothing on any cluster, but approving it still moves the rollout
    on: it needs admin of at least one (populated) set of the hub.
    """
    return can_approve_stages(user, [(hub.pk, cluster_names)])[0]


def can_approve_stages(user: User, stages: Iterable[tuple[int, Iterable[str]]]) -> list[bool]:
    """`can_approve_clusters` for many (hub pk, cluster names) stages, e.g. an inbox page: two queries
    at most, whatever the number of stages."""
    wanted = [(hub_id, frozenset(names)) for hub_id, names in stages]
    if is_superuser(user) or not user.is_authenticated:
        return [is_superuser(user)] * len(wanted)
    hub_ids = {hub_id for hub_id, _ in wanted}
    administered = ClusterSetMembership.objects.filter(
        cluster_set_id__in=_set_ids(user, ADMIN), cluster_set__hub_id__in=hub_ids
    )
    covered: set[tuple[int, str]] = set()
    if every_name := frozenset().union(*(names for _, names in wanted)):
        members = administered.filter(cluster__name__in=every_name)
        covered = set(members.values_list("cluster_set__hub_id", "cluster__name"))
    populated: set[int] = set()
    if not all(names for _, names in wanted):
        populated = set(administered.values_list("cluster_set__hub_id", flat=True).distinct())
    return [
        all((hub_id, name) in covered for name in names) if names else hub_id in populated
        for hub_id, names in wanted
    ]


def can_place(user: User, hub: Hub, kind: str, namespace: str = "", action: str = VIEW) -> bool:
    """Whether a placement of `kind` in `namespace` on `hub` would be visible to `user` (before creating
    one): the namespace is bound to a set they can view (OCM), or they view a populated set of the hub
    (Fleet). The same rule as `restrict` on existing placements; one query."""
    _granting(action)
    if is_superuser(user):
        return True
    if not user.is_authenticated:
        return False
    set_ids = _set_ids(user, action)
    if kind == Placement.Kind.PLACEMENT:
        return _bindings_to(set_ids, hub.pk, namespace).exists()
    return _populated_sets_of(set_ids, hub.pk).exists()


# --- changing roles


def holders(cluster_set: ManagedClusterSet) -> QuerySet[ClusterSetRole]:
    """The set's roles with their users and groups, admins first, then by name (the access tab)."""
    return (
        ClusterSetRole.objects.filter(cluster_set=cluster_set)
        .select_related("user", "group")
        .annotate(principal_name=Coalesce("user__username", "group__name"))
        .order_by("role", "principal_name", "pk")
    )


def _snapshot(row: ClusterSetRole) -> dict[str, str]:
    """What the audit log keeps of a role: `{"principal": "user:alice", "role": "view"}`."""
    return {"principal": row.principal, "role": row.role}


def _check_role(role: str) -> None:
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}, not {role!r}."})


def _denied(cluster_set: ManagedClusterSet) -> PermissionDenied:
    return PermissionDenied(f"Only admins of cluster set {cluster_set.name} can change who has access to it.")


def _record(
    actor: AbstractBaseUser,
    verb: str,
    cluster_set: ManagedClusterSet,
    request: HttpRequest | None,
    **fields: Any,
) -> None:
    audit.record(actor, f"role.{verb}", cluster_set, hub=cluster_set.hub, request=request, **fields)


def authorise(
    actor: AbstractBaseUser, cluster_set: ManagedClusterSet, verb: str, *, request: HttpRequest | None = None
) -> None:
    """PermissionDenied, audited, unless `actor` administers the set; `verb` is grant, change or revoke.

    Pages call it before reading a form, so a refused user learns nothing from validation errors;
    grant/change/revoke check again under the set's lock.
    """
    if not can_administer_set(actor, cluster_set):
        _record(actor, verb, cluster_set, request, outcome=AuditEntry.Outcome.DENIED)
        raise _denied(cluster_set)


def _under_lock(
    actor: AbstractBaseUser,
    cluster_set: ManagedClusterSet,
    verb: str,
    request: HttpRequest | None,
    work: Callable[[], T],
) -> T:
    """`work()` in a transaction holding the set's row lock, once `actor` is seen to administer the set
    under that lock. Role changes of one set run one at a time (PostgreSQL; SQLite serialises writers),
    so two admins removing each other leave one, and an admin removed meanwhile is refused (audited)."""
    try:
        with transaction.atomic():
            ManagedClusterSet.objects.select_for_update().filter(pk=cluster_set.pk).exists()
            if not can_administer_set(actor, cluster_set):
                raise _denied(cluster_set)
            return work()
    except PermissionDenied:
        _record(actor, verb, cluster_set, request, outcome=AuditEntry.Outcome.DENIED)
        raise


def _keep_an_admin(actor: AbstractBaseUser, row: ClusterSetRole) -> None:
    """Refuse to take away a set's last admin role unless a superuser does it: nobody could grant again."""
    if row.role != ADMIN or is_superuser(actor):
        return
    others = ClusterSetRole.objects.filter(cluster_set_id=row.cluster_set_id, role=ADMIN).exclude(pk=row.pk)
    if not others.exists():
        last = f"{row.principal} is the last admin of {row.cluster_set.name}"
        raise ValidationError({"role": f"{last}; only a superuser may leave the set without one."})


def _fresh(row: ClusterSetRole) -> ClusterSetRole:
    return ClusterSetRole.objects.select_related("user", "group", "cluster_set__hub").get(pk=row.pk)


def grant(
    actor: AbstractBaseUser,
    cluster_set: ManagedClusterSet,
    role: str,
    principal: AbstractBaseUser | Group,
    *,
    request: HttpRequest | None = None,
) -> ClusterSetRole:
    """Give a user or a group `role` on the set; one already holding a role there is told to change it."""
    _check_role(role)
    field = "group" if isinstance(principal, Group) else "user"
    row = ClusterSetRole(cluster_set=cluster_set, role=role, **{field: principal})

    def save() -> ClusterSetRole:
        held = ClusterSetRole.objects.filter(cluster_set=cluster_set, **{field: principal}).first()
        if held is not None:
            message = f"{row.principal} already has the {held.role} role on {cluster_set.name}; change it."
            raise ValidationError({"name": message})
        row.save()
        _record(actor, "grant", cluster_set, request, after=_snapshot(row))
        return row

    return _under_lock(actor, cluster_set, "grant", request, save)


def change(
    actor: AbstractBaseUser, row: ClusterSetRole, role: str, *, request: HttpRequest | None = None
) -> ClusterSetRole:
    """Give the row's principal another role on its set; the same role again changes nothing."""
    _check_role(role)

    def save() -> ClusterSetRole:
        fresh = _fresh(row)
        if fresh.role == role:
            return fresh
        before = _snapshot(fresh)
        _keep_an_admin(actor, fresh)
        fresh.role = role
        fresh.save(update_fields=["role"])
        _record(actor, "change", fresh.cluster_set, request, before=before, after=_snapshot(fresh))
        return fresh

    return _under_lock(actor, row.cluster_set, "change", request, save)


def revoke(actor: AbstractBaseUser, row: ClusterSetRole, *, request: HttpRequest | None = None) -> None:
    """Take the row's role away from its principal."""

    def delete() -> None:
        fresh = _fresh(row)
        _keep_an_admin(actor, fresh)
        before = _snapshot(fresh)
        fresh.delete()
        _record(actor, "revoke", fresh.cluster_set, request, before=before)

    _under_lock(actor, row.cluster_set, "revoke", request, delete)
