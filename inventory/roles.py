"""Cluster-set and namespace roles: who may see and change what, as the hub's RBAC scopes it.

Every page, API endpoint and command that acts for a user narrows its rows with `restrict`, which adds
subqueries to the query it is given: a check costs one SQL statement at 10 rows and at 10,000, and the
page's own query stays one query. One object can instead be read by its key and then checked
(`get_visible`, `allows`), a statement compiled once per model, user and action. Superusers pass
everything; anonymous users nothing. Admin implies view.
Every model a page or an endpoint reads has a rule in `RULES`; a model without one is refused. The
rules of placements and what belongs to them are placement's (`placement.access`), registered here when
that app is ready, on the building blocks below (`namespaced_access`, `populated_sets_of`).

Two kinds of role, as Kubernetes grants them:
- a role on a cluster set (ClusterSetRole, admin or view): the set's clusters, and `bind` on the set for
  its admins;
- a role in a namespace of a hub (NamespaceRole, admin, edit or view), as RBAC scopes namespaced kinds:
  view sees the namespace's OCM Placements, edit also adds, changes and deletes them, admin also creates
  and deletes ManagedClusterSetBindings in it (with `bind` on the set) and grants roles in it.

What a role covers (the "admin" action reads "change"):
- the set itself, when the user holds a role on it directly or through one of their groups;
- a cluster, when a ManagedCluster of the same hub and name is a member of the set: OCM clusters through
  their own membership, a Fleet MemberCluster through its OCM namesake (a hub that serves only Fleet has
  no sets, so its clusters are for superusers);
- an OCM Placement: seen with the view role on a set bound to its namespace or any role in its namespace;
  changed with the edit or admin role in its namespace only, so the admin of a set bound there cannot
  take over another team's placements;
- a Fleet ClusterResourcePlacement, which is cluster-scoped and cannot be bound, when the set is on the
  placement's hub and has at least one member (the user sees some of the clusters it can pick from);
  a ClusterStagedUpdateStrategy, cluster-scoped too, by the same rule;
- a ManagedClusterSetBinding: seen through the set it names or a role in its namespace; created and
  deleted by who holds both admin of the set and admin in the namespace (`can_bind`);
- an AddOnPlacementScore through the cluster it scores (its namespace), a ClusterSetRole through its
  set, a NamespaceRole through a role in its namespace;
- what belongs to a placement (decisions, bindings, events, history, staged update runs, and approval
  requests through their run) with the placement; such rows without a placement are for superusers;
- a hub, to whoever holds a role on one of its sets or namespaces; its sync runs and rejected objects
  are operator data (hub errors, object names of every team) and for superusers only;
- an audit entry to the user who made it (the log keeps before/after values and source addresses).

Role changes go through `grant`, `change` and `revoke`, on a set or on a `Namespace`: only admins of the
set or the namespace and superusers may make them, each keeps at least one admin unless a superuser
removes it, and each attempt is audited (denied ones too).
"""

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from django.http import Http404, HttpRequest

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
    NamespaceRole,
    RejectedObject,
    SyncRun,
)

Role = ClusterSetRole.Role
VIEW = Role.VIEW
ADMIN = Role.ADMIN
EDIT = NamespaceRole.Role.EDIT
User = AbstractBaseUser | AnonymousUser
# A role on a cluster set or in a namespace (their abstract model, HeldRole, has neither the role nor rows).
RoleRow = ClusterSetRole | NamespaceRole
# The ids of the cluster sets a user holds a role on, as a subquery (`cluster_set_id IN (...)`).
SetIds = QuerySet[ClusterSetRole, Mapping[str, object]]
T = TypeVar("T")
# `restrict` answers the queryset class it is given, so a model's own QuerySet keeps its methods.
_Q = TypeVar("_Q", bound=QuerySet[Any, Any])
_M = TypeVar("_M", bound=models.Model)

# The namespace roles that hold each level: admin includes edit, edit includes view.
NAMESPACE_GRANTING: dict[str, list[str]] = {VIEW: [ADMIN, EDIT, VIEW], EDIT: [ADMIN, EDIT], ADMIN: [ADMIN]}
# The namespace role an action on an OCM Placement needs: seeing it, or changing it (edit, as upstream).
PLACEMENT_LEVEL: dict[str, str] = {VIEW: VIEW, ADMIN: EDIT}


def is_superuser(user: User) -> bool:
    return bool(user.is_active and getattr(user, "is_superuser", False))


def _without_roles(user: User) -> bool | None:
    """What any check answers for `user` whatever roles they hold: yes for superusers, no for anonymous
    and inactive users; None when their roles decide."""
    if is_superuser(user):
        return True
    return None if user.is_authenticated and user.is_active else False


def _granting(action: str) -> list[str]:
    """The set roles that allow `action`: admin allows viewing too."""
    if action not in Role.values:
        raise ValueError(f"unknown action {action!r}; expected one of {Role.values}")
    return [ADMIN] if action == ADMIN else [ADMIN, VIEW]


class Held:
    """The roles `user` holds for one action, as subqueries over their own rows and their groups' (no
    rows are read until the query they join runs)."""

    def __init__(self, user: User, action: str) -> None:
        # Every check answers anonymous users before asking what they hold (_without_roles).
        assert isinstance(user, AbstractBaseUser), "only signed-in users hold roles"
        self.user_pk, self.action = user.pk, action
        groups = get_user_model().groups.through.objects.filter(user_id=user.pk).values("group_id")
        self._principal = Q(user=user.pk) | Q(group__in=groups)
        set_roles = ClusterSetRole.objects.filter(self._principal, role__in=_granting(action))
        # the ids of the sets the user holds a role allowing the action on
        self.sets: SetIds = set_roles.values("cluster_set_id")

    def namespace_roles(self, level: str) -> QuerySet[NamespaceRole]:
        """The user's namespace roles that hold `level` (view, edit or admin)."""
        return NamespaceRole.objects.filter(self._principal, role__in=NAMESPACE_GRANTING[level])

    def in_namespace(self, level: str, hub: Any, namespace: Any) -> Exists:
        """A role holding `level` in `namespace` of `hub` (values or OuterRefs)."""
        return Exists(self.namespace_roles(level).filter(hub_id=hub, namespace=namespace))


def _set_ids(user: User, action: str) -> SetIds:
    """The ids of the sets `user` holds a role allowing `action` on, as a subquery (no rows read)."""
    return Held(user, action).sets


def sets_for(user: User, action: str = VIEW) -> QuerySet[ManagedClusterSet]:
    """The cluster sets `user` may view (view or admin role) or, with action "admin", administer."""
    return restrict(ManagedClusterSet.objects.all(), user, action)


# --- one rule per model: a condition on its rows, given what the user holds for the action


def _covered_cluster(set_ids: SetIds, hub: str, name: str) -> Exists:
    """A ManagedCluster of the row's hub, named by the row's field `name`, is a member of one of the sets."""
    return Exists(
        ClusterSetMembership.objects.filter(
            cluster_set_id__in=set_ids, cluster__hub_id=OuterRef(hub), cluster__name=OuterRef(name)
        )
    )


def _own_membership(set_ids: SetIds) -> Q:
    """An OCM cluster that is itself a member of one of the sets, tried before the namesake match that a
    Fleet MemberCluster needs. As `id IN (members)`, which PostgreSQL hashes once per query even beside
    the OR, where a correlated EXISTS would run once per row of a 10,000-cluster count."""
    return Q(pk__in=ClusterSetMembership.objects.filter(cluster_set_id__in=set_ids).values("cluster_id"))


def _set_named(set_ids: SetIds, name: str) -> Exists:
    """One of the sets is on the row's hub and is named by the row's field `name`."""
    named = ManagedClusterSet.objects.filter(pk__in=set_ids, hub_id=OuterRef("hub_id"), name=OuterRef(name))
    return Exists(named)


def _bound_set_names(set_ids: SetIds) -> QuerySet[ManagedClusterSet, Mapping[str, object]]:
    """Names of the sets on the (outer) binding row's hub: a binding names a set of its own hub."""
    return ManagedClusterSet.objects.filter(pk__in=set_ids, hub_id=OuterRef("hub_id")).values("name")


def _bindings_to(set_ids: SetIds, hub: Any, namespace: Any) -> QuerySet[ManagedClusterSetBinding]:
    """Bindings of `namespace` on `hub` (values or OuterRefs) to one of the sets."""
    return ManagedClusterSetBinding.objects.filter(
        hub_id=hub, namespace=namespace, cluster_set__in=_bound_set_names(set_ids)
    )


def populated_sets_of(set_ids: SetIds, hub: Any) -> QuerySet[ManagedClusterSet]:
    """The sets that are on `hub` (a value or an OuterRef) and have a member. Read from the user's few
    sets to their first member, by the membership index: the other way round, PostgreSQL scanned every
    membership of the fleet (150,000 rows at 50,000 clusters) to find that the user holds none."""
    members = ClusterSetMembership.objects.filter(cluster_set_id=OuterRef("pk"))
    return ManagedClusterSet.objects.filter(Exists(members), pk__in=set_ids, hub_id=hub)


def namespaced_access(held: Held, hub: Any, namespace: Any) -> Q:
    """Seeing a namespaced placement object (an OCM Placement) of `namespace`: a role in it or a viewed
    set bound to it; changing one: edit in it, whatever sets are bound there."""
    access = Q(held.in_namespace(PLACEMENT_LEVEL[held.action], hub, namespace))
    if held.action == VIEW:
        access |= Q(Exists(_bindings_to(held.sets, hub, namespace)))
    return access


def _binding_rule(held: Held) -> Q:
    """Seen through its set or a role in its namespace; changed with both admin roles (`can_bind`)."""
    in_namespace = held.in_namespace(held.action, OuterRef("hub_id"), OuterRef("namespace"))
    through_set = _set_named(held.sets, "cluster_set")
    return Q(through_set) | Q(in_namespace) if held.action == VIEW else Q(through_set) & Q(in_namespace)


def _hub_rule(held: Held) -> Q:
    sets = ManagedClusterSet.objects.filter(pk__in=held.sets, hub_id=OuterRef("pk"))
    namespaces = held.namespace_roles(held.action).filter(hub_id=OuterRef("pk"))
    return Q(Exists(sets)) | Q(Exists(namespaces))


def _superusers_only(held: Held) -> Q:
    return Q(pk__in=[])


# A rule: the condition on a model's rows that the roles a user holds for one action allow.
Rule = Callable[[Held], Q | Exists]
RULES: dict[type[models.Model], Rule] = {
    Hub: _hub_rule,
    SyncRun: _superusers_only,
    RejectedObject: _superusers_only,
    AuditEntry: lambda held: Q(actor_id=held.user_pk),
    ManagedClusterSet: lambda held: Q(pk__in=held.sets),
    ClusterSetRole: lambda held: Q(cluster_set_id__in=held.sets),
    NamespaceRole: lambda held: held.in_namespace(held.action, OuterRef("hub_id"), OuterRef("namespace")),
    ManagedCluster: lambda held: (
        _own_membership(held.sets) | Q(_covered_cluster(held.sets, "hub_id", "name"))
    ),
    AddOnPlacementScore: lambda held: _covered_cluster(held.sets, "hub_id", "namespace"),
    ManagedClusterSetBinding: _binding_rule,
}


def register(model: type[models.Model], rule: Rule) -> None:
    """The rule of a model of an app above inventory (placements and what belongs to them), registered
    when that app is ready."""
    RULES[model] = rule


def decide(user: User, action: str, check: Callable[[Held], bool]) -> bool:
    """`check` on the roles `user` holds for `action`, for an object that does not exist yet; superusers
    pass and anonymous or inactive users fail without it."""
    _granting(action)
    if (known := _without_roles(user)) is not None:
        return known
    return check(Held(user, action))


def restrict(queryset: _Q, user: User, action: str = VIEW) -> _Q:
    """`queryset` narrowed to the rows `user` may see (action "view") or change ("admin")."""
    rule = _rule(queryset.model)
    _granting(action)
    if (known := _without_roles(user)) is not None:
        return queryset if known else queryset.none()
    return queryset.filter(_condition(rule, user.pk, action))


def _rule(model: type[models.Model]) -> Rule:
    if (rule := RULES.get(model)) is None:
        raise TypeError(f"no role rule for {model.__name__}")
    return rule


@functools.lru_cache(maxsize=1024)
def _condition(rule: Rule, user_pk: int, action: str) -> Q | Exists:
    """`rule` for what the user `user_pk` holds for `action`, built once per rule, user and action: the
    condition reads the role rows when its query runs, never while it is built, so it stays right as
    roles change, and building it costs more than the rest of a page's lookup. Every query that uses it
    resolves a copy."""
    return rule(Held(get_user_model()(pk=user_pk), action))


def allows(user: User, action: str, obj: models.Model) -> bool:
    """Whether `user` may view or change one object; one query (none for superusers), its SQL compiled once
    per model, user and action (`_check`)."""
    _granting(action)
    if (known := _without_roles(user)) is not None:
        return known
    alias = obj._state.db or DEFAULT_DB_ALIAS
    sql, params, at = _check(type(obj), user.pk, action, alias)
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, [*params[:at], obj.pk, *params[at + 1 :]])
        return cursor.fetchone() is not None


def get_visible(queryset: QuerySet[_M], user: User, pk: Any) -> _M:
    """The row `pk` of `queryset` if `user` may see it; Http404 otherwise, as if it did not exist. The row
    is read by its key and then checked (`allows`, whose SQL is compiled once per user), where narrowing
    the query (`restrict`) compiles the role rule into it on every request: a placement's lookup went
    from about 6.8 to 4.3 ms, one query more."""
    missing = Http404(f"No {queryset.model._meta.object_name} matches the given query.")
    try:
        found = queryset.get(pk=pk)
    except (ObjectDoesNotExist, TypeError, ValueError, ValidationError):
        raise missing from None
    if not allows(user, VIEW, found):
        raise missing
    return found


# Stands for the object's primary key while a check's SQL is compiled (`_check`): no real key is negative.
_ANY_PK = -7_340_019_251


@functools.lru_cache(maxsize=1024)
def _check(model: type[models.Model], user_pk: int, action: str, alias: str) -> tuple[str, list[Any], int]:
    """The SQL of `allows` for one object of `model`: (statement, parameters, position of the object's key
    among them). Django compiles a rule's nested subqueries in about 5 ms, more than PostgreSQL takes to
    plan and run them, and every page asks several times; like `_condition`, the statement reads the role
    rows when it runs, so it stays right as roles change."""
    rows = model._default_manager.using(alias).filter(pk=_ANY_PK)
    condition = _condition(_rule(model), user_pk, action)
    sql, compiled = rows.filter(condition).values_list("pk")[:1].query.sql_with_params()
    params = list(compiled)
    if params.count(_ANY_PK) != 1:
        raise RuntimeError(f"the {model.__name__} check does not name its object once: {params!r}")
    return sql, params, params.index(_ANY_PK)


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


def places_anywhere(user: User) -> bool:
    """Whether `user` may add any placement at all: the edit role in some namespace or the admin role on
    some set (the "New ..." buttons). One query."""
    if (known := _without_roles(user)) is not None:
        return known
    held = Held(user, ADMIN)
    namespaces = held.namespace_roles(PLACEMENT_LEVEL[ADMIN])
    return Hub.objects.filter(
        Q(Exists(namespaces)) | Q(Exists(ManagedClusterSet.objects.filter(pk__in=held.sets)))
    ).exists()


def can_administer_namespace(user: User, hub: Hub, namespace: str) -> bool:
    """The admin role in the namespace: bind sets into it (with `bind` on the set), grant roles in it."""
    if (known := _without_roles(user)) is not None:
        return known
    return Held(user, ADMIN).namespace_roles(ADMIN).filter(hub_id=hub.pk, namespace=namespace).exists()


def can_bind(user: User, cluster_set: ManagedClusterSet, namespace: str) -> bool:
    """Create or delete a binding of the set in `namespace`: `bind` on the set (its admin role) and the
    admin role in the namespace, both, as upstream; one query. The set's admin alone cannot bind it into
    a namespace of another team and so reach that team's placements."""
    if (known := _without_roles(user)) is not None:
        return known
    held = Held(user, ADMIN)
    in_namespace = held.in_namespace(ADMIN, cluster_set.hub_id, namespace)
    return ManagedClusterSet.objects.filter(in_namespace, pk=cluster_set.pk, id__in=held.sets).exists()


# --- changing roles, on a cluster set or in a namespace


@dataclass(frozen=True)
class Namespace:
    """A namespace of a hub, as NamespaceRoles are held in it (no row of its own is kept here)."""

    hub: Hub
    name: str

    def __str__(self) -> str:
        return f"{self.hub.name}/{self.name}"


Scope = ManagedClusterSet | Namespace


@dataclass(frozen=True)
class _Roles:
    """Where the roles of one scope are kept, what is locked while they change, who administers them and
    how the audit log names them."""

    model: type[RoleRow]
    rows: dict[str, Any]
    lock: QuerySet[Hub] | QuerySet[ManagedClusterSet]
    hub: Hub
    name: str
    noun: str
    administers: Callable[[User], bool]
    audit_target: models.Model
    audit_prefix: str
    audit_detail: dict[str, str]


def _roles_on(scope: Scope) -> _Roles:
    if isinstance(scope, Namespace):
        hub = scope.hub
        return _Roles(
            NamespaceRole, {"hub_id": hub.pk, "namespace": scope.name}, Hub.objects.filter(pk=hub.pk), hub,
            scope.name, "namespace", lambda user: can_administer_namespace(user, hub, scope.name),
            hub, "namespace-role", {"namespace": scope.name},
        )  # fmt: skip
    return _Roles(
        ClusterSetRole, {"cluster_set_id": scope.pk}, ManagedClusterSet.objects.filter(pk=scope.pk),
        scope.hub, scope.name, "set", lambda user: can_administer_set(user, scope), scope, "role", {},
    )  # fmt: skip


def can_manage_roles(user: User, scope: Scope) -> bool:
    """Whether `user` may grant, change and revoke roles on the set or in the namespace: its admins."""
    return _roles_on(scope).administers(user)


def scope_of(row: RoleRow) -> Scope:
    """The set or the namespace a role is held on."""
    if isinstance(row, NamespaceRole):
        return Namespace(row.hub, row.namespace)
    return row.cluster_set


def _label(scope: Scope) -> str:
    if isinstance(scope, Namespace):
        return f"namespace {scope.name} of hub {scope.hub.name}"
    return f"cluster set {scope.name}"


def holders(scope: Scope) -> QuerySet[RoleRow]:
    """The scope's roles with their users and groups, admins first, then by name (the access tab)."""
    on = _roles_on(scope)
    return (
        on.model.objects.filter(**on.rows)
        .select_related("user", "group")
        .annotate(principal_name=Coalesce("user__username", "group__name"))
        .order_by("role", "principal_name", "pk")
    )


def _snapshot(on: _Roles, row: RoleRow) -> dict[str, str]:
    """What the audit log keeps of a role: `{"principal": "user:alice", "role": "view"}` (and the
    namespace of a namespace role)."""
    return {**on.audit_detail, "principal": row.principal, "role": row.role}


def _check_role(on: _Roles, role: str) -> None:
    if role not in (values := on.model.Role.values):
        raise ValidationError({"role": f"role must be one of {', '.join(values)}, not {role!r}."})


def _denied(scope: Scope) -> PermissionDenied:
    return PermissionDenied(f"Only admins of {_label(scope)} can change who has access to it.")


def _record(
    actor: AbstractBaseUser, verb: str, on: _Roles, request: HttpRequest | None, **fields: Any
) -> None:
    audit.record(actor, f"{on.audit_prefix}.{verb}", on.audit_target, hub=on.hub, request=request, **fields)


def authorise(
    actor: AbstractBaseUser, scope: Scope, verb: str, *, request: HttpRequest | None = None
) -> None:
    """PermissionDenied, audited, unless `actor` administers the set or the namespace; `verb` is grant,
    change or revoke.

    Pages call it before reading a form, so a refused user learns nothing from validation errors;
    grant/change/revoke check again under the scope's lock.
    """
    on = _roles_on(scope)
    if not on.administers(actor):
        _record(actor, verb, on, request, outcome=AuditEntry.Outcome.DENIED, after=on.audit_detail or None)
        raise _denied(scope)


def _under_lock(
    actor: AbstractBaseUser, scope: Scope, verb: str, request: HttpRequest | None, work: Callable[[], T]
) -> T:
    """`work()` in a transaction holding the scope's row lock (the set's, or the hub's for a namespace),
    once `actor` is seen to administer the scope under that lock. Role changes of one scope run one at a
    time (PostgreSQL; SQLite serialises writers), so two admins removing each other leave one, and an
    admin removed meanwhile is refused (audited)."""
    on = _roles_on(scope)
    try:
        with transaction.atomic():
            on.lock.select_for_update().exists()
            if not on.administers(actor):
                raise _denied(scope)
            return work()
    except PermissionDenied:
        _record(actor, verb, on, request, outcome=AuditEntry.Outcome.DENIED, after=on.audit_detail or None)
        raise


def _keep_an_admin(actor: AbstractBaseUser, on: _Roles, row: RoleRow) -> None:
    """Refuse to take away a scope's last admin role unless a superuser does it: nobody could grant again."""
    if row.role != ADMIN or is_superuser(actor):
        return
    if not on.model.objects.filter(**on.rows, role=ADMIN).exclude(pk=row.pk).exists():
        last = f"{row.principal} is the last admin of {on.name}"
        raise ValidationError({"role": f"{last}; only a superuser may leave the {on.noun} without one."})


def _fresh(row: RoleRow) -> RoleRow:
    hub = "hub" if isinstance(row, NamespaceRole) else "cluster_set__hub"
    return type(row).objects.select_related("user", "group", hub).get(pk=row.pk)


def grant(
    actor: AbstractBaseUser,
    scope: Scope,
    role: str,
    principal: AbstractBaseUser | Group,
    *,
    request: HttpRequest | None = None,
) -> RoleRow:
    """Give a user or a group `role` on the set or in the namespace; one already holding a role there is
    told to change it."""
    on = _roles_on(scope)
    _check_role(on, role)
    field = "group" if isinstance(principal, Group) else "user"
    row = on.model(**on.rows, role=role, **{field: principal})

    def save() -> RoleRow:
        held = on.model.objects.filter(**on.rows, **{field: principal}).first()
        if held is not None:
            message = f"{row.principal} already has the {held.role} role on {on.name}; change it."
            raise ValidationError({"name": message})
        row.save()
        _record(actor, "grant", on, request, after=_snapshot(on, row))
        return row

    return _under_lock(actor, scope, "grant", request, save)


def change(
    actor: AbstractBaseUser, row: RoleRow, role: str, *, request: HttpRequest | None = None
) -> RoleRow:
    """Give the row's principal another role on its set or in its namespace; the same role again changes
    nothing."""
    scope = scope_of(row)
    on = _roles_on(scope)
    _check_role(on, role)

    def save() -> RoleRow:
        fresh = _fresh(row)
        if fresh.role == role:
            return fresh
        before = _snapshot(on, fresh)
        _keep_an_admin(actor, on, fresh)
        fresh.role = role
        fresh.save(update_fields=["role"])
        _record(actor, "change", on, request, before=before, after=_snapshot(on, fresh))
        return fresh

    return _under_lock(actor, scope, "change", request, save)


def revoke(actor: AbstractBaseUser, row: RoleRow, *, request: HttpRequest | None = None) -> None:
    """Take the row's role away from its principal."""
    scope = scope_of(row)
    on = _roles_on(scope)

    def delete() -> None:
        fresh = _fresh(row)
        _keep_an_admin(actor, on, fresh)
        before = _snapshot(on, fresh)
        fresh.delete()
        _record(actor, "revoke", on, request, before=before)

    _under_lock(actor, scope, "revoke", request, delete)
