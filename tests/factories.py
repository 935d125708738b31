"""factory-boy factories for the dashboard's models."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from demohub import DemoHub
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
    SyncRun,
)
from inventory.sync import sync_hub
from placement.models import (
    ClusterResourceBinding,
    DecisionChange,
    Placement,
    PlacementDecision,
    PlacementEvent,
    StagedUpdateRun,
    StagedUpdateStrategy,
)

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class HubFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Hub
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"hub-{n}")
    server_url = factory.LazyAttribute(lambda hub: f"https://{hub.name}.example.com:6443")


class ManagedClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ManagedCluster

    hub = factory.SubFactory(HubFactory)
    name = factory.Sequence(lambda n: f"cluster-{n:04d}")
    labels = factory.LazyAttribute(lambda c: {"name": c.name, "region": "us-east-1", "vendor": "OpenShift"})
    allocatable = factory.LazyFunction(lambda: {"cpu": "8", "memory": "32Gi"})
    capacity = factory.LazyFunction(lambda: {"cpu": "10", "memory": "40Gi"})
    availability = ManagedCluster.Availability.AVAILABLE


class PlacementFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Placement

    hub = factory.SubFactory(HubFactory)
    kind = Placement.Kind.PLACEMENT
    namespace = "default"
    name = factory.Sequence(lambda n: f"placement-{n}")
    spec = factory.LazyFunction(lambda: {"numberOfClusters": 2})


class DemoHubRowFactory(HubFactory):
    """A Hub row pointing at a running DemoHub (pass server_url=demo_hub.url); any token is accepted."""

    class Meta:
        skip_postgeneration_save = True

    serves_fleet = True

    @factory.post_generation
    def token(hub: Hub, create: bool, extracted: str | None, **kwargs: object) -> None:
        hub.set_credentials({"token": extracted or "demo-token"})
        if create:
            hub.save(update_fields=["encrypted_credentials"])


class ManagedClusterSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ManagedClusterSet

    hub = factory.SubFactory(HubFactory)
    name = factory.Sequence(lambda n: f"set-{n}")


class ClusterSetMembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClusterSetMembership

    cluster_set = factory.SubFactory(ManagedClusterSetFactory)
    cluster = factory.SubFactory(ManagedClusterFactory, hub=factory.SelfAttribute("..cluster_set.hub"))


class ManagedClusterSetBindingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ManagedClusterSetBinding

    hub = factory.SubFactory(HubFactory)
    namespace = "default"
    name = factory.Sequence(lambda n: f"set-{n}")
    cluster_set = factory.SelfAttribute("name")


class AddOnPlacementScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AddOnPlacementScore

    hub = factory.SubFactory(HubFactory)
    namespace = factory.Sequence(lambda n: f"cluster-{n:04d}")
    name = "resource-usage-score"
    scores = factory.LazyFunction(lambda: [{"name": "cpuAvailable", "value": 66}])


class PlacementDecisionFactory(factory.django.DjangoModelFactory):
    """`clusters=[names]` fills status.decisions."""

    class Meta:
        model = PlacementDecision

    class Params:
        clusters: list[str] = []

    placement = factory.SubFactory(PlacementFactory)
    hub = factory.SelfAttribute("placement.hub")
    namespace = factory.SelfAttribute("placement.namespace")
    name = factory.LazyAttribute(lambda d: f"{d.placement.name}-decision-1")
    decisions = factory.LazyAttribute(lambda d: [{"clusterName": name, "reason": ""} for name in d.clusters])


class ClusterResourceBindingFactory(factory.django.DjangoModelFactory):
    """`target` names the MemberCluster; `state` is Scheduled, Bound or Unscheduled."""

    class Meta:
        model = ClusterResourceBinding

    class Params:
        target = "member-1"
        state = "Bound"

    placement = factory.SubFactory(
        PlacementFactory, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace=""
    )
    hub = factory.SelfAttribute("placement.hub")
    name = factory.LazyAttribute(lambda b: f"{b.placement.name}-{b.target}")
    spec = factory.LazyAttribute(lambda b: {"targetCluster": b.target, "state": b.state})


class SyncRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SyncRun

    hub = factory.SubFactory(HubFactory)
    trigger = SyncRun.Trigger.MANUAL
    state = SyncRun.State.SUCCEEDED


def synced_demo_hub_row(demo_hub: DemoHub) -> Hub:
    """Hub "demo" for a running DemoHub, synced once (the starting point of sync, watch and hook tests)."""
    hub = DemoHubRowFactory(name="demo", server_url=demo_hub.url)
    sync_hub(hub, trigger="command")
    return hub


class PlacementEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PlacementEvent

    placement = factory.SubFactory(PlacementFactory)
    at = factory.LazyFunction(timezone.now)
    reason = "DecisionCreate"
    message = factory.LazyAttribute(lambda e: f"Decision {e.placement.name}-decision-1 is created")


class DecisionChangeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DecisionChange

    placement = factory.SubFactory(PlacementFactory)
    at = factory.LazyFunction(timezone.now)
    trigger = "cluster label changed"
    added = factory.LazyFunction(lambda: ["cluster-0001"])
    removed = factory.LazyFunction(list)
    selected = factory.LazyAttribute(lambda c: list(c.added))


class GroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "auth.Group"
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"group-{n}")


class ClusterSetRoleFactory(factory.django.DjangoModelFactory):
    """A user's role on a set (`user=`); pass `group=` and `user=None` for a group's."""

    class Meta:
        model = ClusterSetRole

    cluster_set = factory.SubFactory(ManagedClusterSetFactory)
    role = ClusterSetRole.Role.VIEW
    user = factory.SubFactory(UserFactory)
    group = None


class NamespaceRoleFactory(factory.django.DjangoModelFactory):
    """A user's role in a namespace of a hub (`user=`); pass `group=` and `user=None` for a group's."""

    class Meta:
        model = NamespaceRole

    hub = factory.SubFactory(HubFactory)
    namespace = factory.Sequence(lambda n: f"team-{n}")
    role = NamespaceRole.Role.VIEW
    user = factory.SubFactory(UserFactory)
    group = None


class StagedUpdateStrategyFactory(factory.django.DjangoModelFactory):
    """One stage `all` selecting every cluster, unless `spec=` says otherwise."""

    class Meta:
        model = StagedUpdateStrategy

    hub = factory.SubFactory(HubFactory)
    name = factory.Sequence(lambda n: f"strategy-{n}")
    spec = factory.LazyFunction(lambda: {"stages": [{"name": "all", "labelSelector": {}}]})


class StagedUpdateRunFactory(factory.django.DjangoModelFactory):
    """A run of `placement` (its hub and name) with `strategy`'s name; state Initialize, no status."""

    class Meta:
        model = StagedUpdateRun

    placement = factory.SubFactory(
        PlacementFactory, kind=Placement.Kind.CLUSTER_RESOURCE_PLACEMENT, namespace=""
    )
    hub = factory.SelfAttribute("placement.hub")
    name = factory.Sequence(lambda n: f"run-{n}")
    spec = factory.LazyAttribute(
        lambda r: {
            "placementName": r.placement.name,
            "stagedRolloutStrategyName": "strategy",
            "state": "Initialize",
        }
    )


class AuditEntryFactory(factory.django.DjangoModelFactory):
    """An entry by user "auditor" about `of` (a row with a hub; default cluster-0001 of hub east, by name).

    The application writes entries through inventory.audit.record; this makes rows for pages to read.
    """

    class Meta:
        model = AuditEntry

    class Params:
        of = None

    # one user for every entry, made without a password (hashing one per entry makes big logs slow)
    actor = factory.LazyFunction(lambda: get_user_model().objects.get_or_create(username="auditor")[0])
    actor_name = factory.LazyAttribute(lambda e: e.actor.get_username() if e.actor else "manage.py sync")
    action = "cluster.taints"
    target_type = factory.Maybe(
        "of", factory.LazyAttribute(lambda e: e.of._meta.label_lower), "inventory.managedcluster"
    )
    target_id = factory.Maybe("of", factory.LazyAttribute(lambda e: str(e.of.pk)), "")
    target = factory.Maybe("of", factory.LazyAttribute(lambda e: str(e.of)), "cluster-0001")
    hub = factory.Maybe("of", factory.SelfAttribute("of.hub"), factory.SubFactory(HubFactory, name="east"))
    outcome = AuditEntry.Outcome.OK


def placement_role(
    hub: Hub,
    namespaces: tuple[str, ...] = (),
    *,
    role: str = ClusterSetRole.Role.ADMIN,
    user: AbstractBaseUser | None = None,
    **user_fields: object,
) -> AbstractBaseUser:
    """A user (`user`, or a new one from `user_fields`) holding `role` on the cluster sets through which
    placement.access lets them see (view) or change (admin) placements of `hub`:

    - with `namespaces`: every set bound to one of them, and the same role in each namespace (changing
      an OCM Placement needs a role in its namespace, which admin holds); a namespace without a binding
      is an error, since binding a set here would change what the placements select;
    - without: a set of the hub that has members (Fleet CRPs, strategies and runs); a hub without one gets
      a set `placement-team` holding one of its clusters (a new ManagedCluster if it has none).
    """
    user = user or UserFactory(**user_fields)
    if namespaces:
        bound = ManagedClusterSetBinding.objects.filter(hub=hub, namespace__in=namespaces)
        if unbound := set(namespaces) - set(bound.values_list("namespace", flat=True)):
            raise ValueError(f"namespaces {sorted(unbound)} have no set bound on hub {hub.name}")
        sets = ManagedClusterSet.objects.filter(hub=hub, name__in=bound.values("cluster_set"))
        for namespace in namespaces:
            NamespaceRole.objects.get_or_create(
                hub=hub, namespace=namespace, user=user, defaults={"role": role}
            )
    else:
        populated = ManagedClusterSet.objects.filter(hub=hub, memberships__isnull=False).order_by("name")
        sets = [populated.first() or _team_set(hub)]
    for cluster_set in sets:
        ClusterSetRole.objects.get_or_create(cluster_set=cluster_set, user=user, defaults={"role": role})
    return user


def _team_set(hub: Hub) -> ManagedClusterSet:
    clusters = ManagedCluster.objects.filter(hub=hub).order_by("name")
    cluster = clusters.first() or ManagedClusterFactory(hub=hub)
    team, _ = ManagedClusterSet.objects.get_or_create(hub=hub, name="placement-team")
    ClusterSetMembership.objects.get_or_create(cluster=cluster, cluster_set=team)
    return team
