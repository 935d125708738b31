"""Hub objects mirrored into the database, in the field's own words.

JSON columns hold the Kubernetes shapes unchanged (labels, claims, taints, quantities, conditions)
so the scheduler adapters can read them back exactly as a hub serves them.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from inventory import availability, credentials


class Hub(models.Model):
    """A Kubernetes API server that serves OCM and/or KubeFleet kinds."""

    name = models.SlugField(max_length=63, unique=True)
    server_url = models.URLField(max_length=500)
    serves_ocm = models.BooleanField("serves OCM", default=True)
    serves_fleet = models.BooleanField("serves Fleet", default=False)
    sync_interval_seconds = models.PositiveIntegerField(default=60)
    # Namespace where decisions are published for Argo CD and others; blank = do not publish.
    publish_namespace = models.CharField(max_length=253, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_sync_error = models.TextField(blank=True)
    # Set only by a sync that listed every kind; stale rows show their age from it.
    last_good_sync_at = models.DateTimeField(null=True, blank=True)
    # A Fernet token of a JSON dict (inventory.credentials); never rendered, logged or sent to a task.
    encrypted_credentials = models.TextField(blank=True)
    # Compare-and-set lock so two syncs of one hub never overlap; expires if its worker dies.
    sync_lock_until = models.DateTimeField(null=True, blank=True)
    sync_lock_owner = models.CharField(max_length=64, blank=True)
    # kind -> resourceVersion of its last complete list, where watches resume.
    resource_versions = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:hub-detail", args=[self.pk])

    @property
    def credentials(self) -> dict[str, Any]:
        """The decrypted credentials; only hub clients read them."""
        return credentials.decrypt(self.encrypted_credentials)

    def set_credentials(self, value: dict[str, Any]) -> None:
        """Encrypt and keep `value` (token/ca_data/insecure or kubeconfig/context); the caller saves."""
        self.encrypted_credentials = credentials.encrypt(value)

    @property
    def state(self) -> str:
        """The sync state: "never" before the first sync, "failing" while the last one fails, else "ok"."""
        if self.last_synced_at is None:
            return "never"
        return "failing" if self.last_sync_error else "ok"

    @property
    def kinds(self) -> list[str]:
        return [name for name, served in (("OCM", self.serves_ocm), ("Fleet", self.serves_fleet)) if served]


class SyncRun(models.Model):
    """One sync of one hub; written page by page so the UI can show progress."""

    class Trigger(models.TextChoices):
        PERIODIC = "periodic"
        MANUAL = "manual"
        COMMAND = "command"
        WATCH_RELIST = "watch-relist", "watch re-list"

    class State(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="sync_runs")
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=12, choices=State.choices, default=State.RUNNING)
    # The run's last sign of life: written when it starts and with every page. A run still "running"
    # long after it is one whose worker died (inventory.tasks.fail_lost_runs).
    heartbeat_at = models.DateTimeField(default=timezone.now)
    pages = models.PositiveIntegerField(default=0)
    added = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    removed = models.PositiveIntegerField(default=0)
    # kind -> {"listed", "added", "updated", "removed", "rejected", "done"}: every kind the run lists, from
    # its start, counted as the pages arrive; "done" once the kind's last page is stored; "error" (the
    # hub's reason) when the hub refused to list the kind.
    kinds = models.JSONField(default=dict, blank=True)
    # Objects the hub served that failed validation (inventory.RejectedObject rows), skipped, not stored.
    rejected = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["hub", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.hub} {self.trigger} {self.started_at:%Y-%m-%d %H:%M:%S}"

    @property
    def duration_seconds(self) -> float | None:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else None

    @property
    def kinds_total(self) -> int:
        """The kinds this run lists (all of them are in `kinds` from its start)."""
        return len(self.kinds)

    @property
    def kinds_done(self) -> int:
        return sum(1 for counts in self.kinds.values() if counts.get("done"))

    @property
    def kind_errors(self) -> list[tuple[str, str]]:
        """(kind, why) of each kind the hub refused to list in this run; the other kinds synced."""
        return [(kind, counts["error"]) for kind, counts in self.kinds.items() if counts.get("error")]

    @property
    def objects_listed(self) -> int:
        """The objects listed so far, over every kind."""
        return sum(counts.get("listed", 0) for counts in self.kinds.values())


class RejectedObject(models.Model):
    """A hub object that failed validation and was not stored, with why: one row per object (kind,
    namespace, name), replaced when it is seen again and removed once a valid version arrives or it is
    deleted. `sync_run` is the sync that last saw it (none when the watcher did)."""

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="rejected_objects")
    sync_run = models.ForeignKey(
        SyncRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="rejected_objects"
    )
    kind = models.CharField(max_length=64)
    # sha256 of namespace/name: hostile names can be any length; the shown ones are cut to fit
    identity = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    reason = models.TextField()
    first_seen = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["kind", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["hub", "kind", "identity"], name="rejectedobject_unique_identity")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}: {self.reason}"


class Owner(models.TextChoices):
    """Who owns a row of a kind both a hub and the dashboard write (placements and what belongs to
    them): the hub, whose object the row mirrors read-only, or the dashboard, which decides it."""

    HUB = "hub", "hub (read-only mirror)"
    DASHBOARD = "dashboard"


class HubObject(models.Model):
    """Fields every object read from a hub carries."""

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="%(class)ss")
    uid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=253)
    resource_version = models.CharField(max_length=64, blank=True)
    synced_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name


class ManagedClusterQuerySet(models.QuerySet["ManagedCluster"]):
    def for_listing(self) -> "ManagedClusterQuerySet":
        return self.select_related("hub").order_by("name", "hub__name", "kind")


@dataclass(frozen=True)
class ClusterKind:
    """What differs between the two kinds of cluster rows, asked of `ManagedCluster.cluster_kind` instead
    of comparing kinds."""

    # the family shown beside a cluster's name in lists ("": none, the default OCM)
    badge: str
    # OCM ManagedClusters belong to ManagedClusterSets (inventory.memberships)
    in_cluster_sets: bool
    # OCM add-on agents score ManagedClusters (AddOnPlacementScore)
    has_add_on_scores: bool
    # Fleet members report properties and resource usage
    reports_properties: bool
    # the taint editor's sentence on what the effects do to placements
    taint_effects: str


class ManagedCluster(HubObject):
    """An OCM ManagedCluster or a KubeFleet MemberCluster; `kind` says which, `cluster_kind` what differs."""

    class Kind(models.TextChoices):
        MANAGED_CLUSTER = "ManagedCluster"
        MEMBER_CLUSTER = "MemberCluster"

    class Availability(models.TextChoices):
        AVAILABLE = availability.AVAILABLE
        UNAVAILABLE = availability.UNAVAILABLE
        UNKNOWN = availability.UNKNOWN

    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.MANAGED_CLUSTER)
    labels = models.JSONField(default=dict, blank=True)
    # OCM status.clusterClaims: [{name, value}]
    claims = models.JSONField(default=list, blank=True)
    # spec.taints: OCM [{key, value, effect, timeAdded}], Fleet [{key, value, effect}]
    taints = models.JSONField(default=list, blank=True)
    allocatable = models.JSONField(default=dict, blank=True)
    capacity = models.JSONField(default=dict, blank=True)
    conditions = models.JSONField(default=list, blank=True)
    # Derived from conditions/agent_status when stored, so lists can filter on it.
    availability = models.CharField(max_length=12, choices=Availability.choices, default=Availability.UNKNOWN)
    deletion_timestamp = models.DateTimeField(null=True, blank=True)
    stale = models.BooleanField(default=False)
    # Fleet MemberCluster only: status.properties, status.resourceUsage, status.agentStatus.
    properties = models.JSONField(default=dict, blank=True)
    resource_usage = models.JSONField(default=dict, blank=True)
    agent_status = models.JSONField(default=list, blank=True)
    # Fleet MemberCluster only: a digest of the mirrored fields but the heartbeat's, which tells a
    # heartbeat from the stored row without decoding it (inventory.relevance.fields_digest); "": none yet.
    fields_digest = models.CharField(max_length=32, blank=True, default="")
    # Denormalised for filtering and sorting: ",key1,key2," so icontains(",key,") matches one key.
    TAINT_KEYS_MAX = 2000
    taint_keys = models.CharField(max_length=TAINT_KEYS_MAX, blank=True)
    # Go's AsApproximateFloat64 of allocatable (Fleet: status.resourceUsage.allocatable).
    cpu_allocatable = models.FloatField(null=True, blank=True)
    memory_allocatable = models.FloatField(null=True, blank=True)
    # Not stored: what the cluster table shows of a row, set by inventory.views.
    placement_count: int

    objects = ManagedClusterQuerySet.as_manager()

    class Meta:
        # One hub may serve both an OCM ManagedCluster and a Fleet MemberCluster of the same name.
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "kind", "name"], name="managedcluster_unique_hub_kind_name"
            )
        ]
        indexes = [
            models.Index(fields=["hub", "name"]),
            models.Index(fields=["hub", "uid"]),
            models.Index(fields=["availability"]),
            models.Index(fields=["hub", "stale"]),
            # the cluster list's order (`for_listing`): its first page is read in index order, not sorted
            models.Index(fields=["name", "kind", "hub"]),
        ]

    def get_absolute_url(self) -> str:
        return reverse("inventory:cluster-detail", args=[self.pk])

    @property
    def cluster_kind(self) -> ClusterKind:
        return CLUSTER_KINDS[self.kind]

    def label_chips(self, limit: int = 4) -> list[str]:
        """`key=value` for the first labels by key, for compact lists."""
        return [f"{key}={value}" for key, value in sorted(self.labels.items())[:limit]]

    def hidden_label_count(self, limit: int = 4) -> int:
        return max(len(self.labels) - limit, 0)


CLUSTER_KINDS: dict[str, ClusterKind] = {
    ManagedCluster.Kind.MANAGED_CLUSTER: ClusterKind(
        badge="",
        in_cluster_sets=True,
        has_add_on_scores=True,
        reports_properties=False,
        taint_effects=(
            "NoSelect keeps the cluster from placements that do not tolerate the taint, NoSelectIfNew only "
            "from those not holding it yet; PreferNoSelect has no effect on scheduling today. The hub "
            "stamps the time a taint is added or changed."
        ),
    ),
    ManagedCluster.Kind.MEMBER_CLUSTER: ClusterKind(
        badge="Fleet",
        in_cluster_sets=False,
        has_add_on_scores=False,
        reports_properties=True,
        taint_effects="NoSchedule keeps the cluster from new placements that do not tolerate the taint.",
    ),
}


class ManagedClusterSet(HubObject):
    class SelectorType(models.TextChoices):
        EXCLUSIVE_CLUSTER_SET_LABEL = "ExclusiveClusterSetLabel"
        LABEL_SELECTOR = "LabelSelector"

    selector_type = models.CharField(
        max_length=32, choices=SelectorType.choices, default=SelectorType.EXCLUSIVE_CLUSTER_SET_LABEL
    )
    # Only for LabelSelector; null (matches nothing) is different from {} (matches every cluster).
    label_selector = models.JSONField(null=True, blank=True)
    # Not stored: the namespaces the cluster set table shows a row bound to, set by inventory.views.
    namespaces: list[str]

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hub", "name"], name="managedclusterset_unique_hub_name")
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def get_absolute_url(self) -> str:
        return reverse("inventory:clusterset-detail", args=[self.pk])


class ManagedClusterSetBinding(HubObject):
    namespace = models.CharField(max_length=253)
    # spec.clusterSet by name: a binding may name a set that does not exist (then it is not valid).
    cluster_set = models.CharField(max_length=253)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "namespace", "name"], name="managedclustersetbinding_unique_hub_ns_name"
            )
        ]
        indexes = [models.Index(fields=["hub", "name"])]


class AddOnPlacementScore(HubObject):
    # The namespace is the cluster's name on the hub.
    namespace = models.CharField(max_length=253)
    # status.scores: [{name, value}]
    scores = models.JSONField(default=list, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "namespace", "name"], name="addonplacementscore_unique_hub_ns_name"
            )
        ]
        indexes = [models.Index(fields=["hub", "name"])]


class ClusterSetMembership(models.Model):
    """An OCM ManagedCluster in a ManagedClusterSet, as the scheduler's set code computes it."""

    cluster = models.ForeignKey(ManagedCluster, on_delete=models.CASCADE, related_name="memberships")
    cluster_set = models.ForeignKey(ManagedClusterSet, on_delete=models.CASCADE, related_name="memberships")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "cluster_set"], name="clustersetmembership_unique")
        ]
        # the members of a user's sets, read from the index alone by every role check of a cluster row
        indexes = [models.Index(fields=["cluster_set", "cluster"])]

    def __str__(self) -> str:
        return f"{self.cluster} in {self.cluster_set}"


class AuditEntry(models.Model):
    """One mutation, append-only: who did what to which object, before/after, and what the hub said.

    Written through `inventory.audit.record`; rows are never updated or deleted by the application.
    """

    class Outcome(models.TextChoices):
        OK = "ok"
        NO_OP = "no-op"
        DENIED = "denied"
        FAILED = "failed"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The username at the time (kept when the user is deleted), or the command / task that acted.
    actor_name = models.CharField(max_length=150)
    # dotted verb, e.g. "approval.approve", "placement.spec", "run.state"
    action = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64, blank=True)
    target = models.CharField(max_length=300)
    hub = models.ForeignKey(Hub, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.OK)
    # What the hub answered (e.g. the condition it wrote back, or its error), blank without a hub call.
    hub_answer = models.TextField(blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    source_address = models.GenericIPAddressField(null=True, blank=True)
    # Not stored: what the audit log shows of a row, set by inventory.tables.audit_rows.
    target_url: str
    before_json: str
    after_json: str

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["target_type", "target_id", "-at"])]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.target}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("audit entries are append-only")
        super().save(*args, **kwargs)


class HeldRole(models.Model):
    """A role held by exactly one of a user and a group (a check constraint on each concrete model)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    group = models.ForeignKey("auth.Group", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    # Not stored: what the access tab shows of a row, set by inventory.access.tab_context.
    errors: list[str]
    role_label: str
    change_url: str
    remove_url: str

    class Meta:
        abstract = True

    @property
    def principal(self) -> str:
        """`user:<name>` or `group:<name>`, as the access tab and the audit log name it."""
        if self.user is not None:
            return f"user:{self.user.get_username()}"
        assert self.group is not None, "a role is held by a user or a group (the check constraint)"
        return f"group:{self.group.name}"


class ClusterSetRole(HeldRole):
    """A user's or a group's role on one cluster set, as the hub's per-set ClusterRoles.

    Exactly one of `user` and `group` is set; a principal holds one role per set, and `change` swaps it.
    Read through `inventory.roles`, written only by its grant/change/revoke (which audit every change).
    """

    class Role(models.TextChoices):
        ADMIN = "admin"
        VIEW = "view"

    cluster_set = models.ForeignKey(ManagedClusterSet, on_delete=models.CASCADE, related_name="roles")
    role = models.CharField(max_length=8, choices=Role.choices)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="clustersetrole_user_xor_group",
            ),
            models.UniqueConstraint(
                fields=["cluster_set", "user"],
                condition=Q(user__isnull=False),
                name="clustersetrole_unique_user",
            ),
            models.UniqueConstraint(
                fields=["cluster_set", "group"],
                condition=Q(group__isnull=False),
                name="clustersetrole_unique_group",
            ),
        ]
        indexes = [models.Index(fields=["user", "role"]), models.Index(fields=["group", "role"])]

    def __str__(self) -> str:
        return f"{self.principal} {self.role} on {self.cluster_set}"


class NamespaceRole(HeldRole):
    """A user's or a group's role in one namespace of a hub, as Kubernetes RBAC scopes namespaced kinds.

    - view: sees the namespace's placements;
    - edit: adds, changes and deletes placements in the namespace;
    - admin: edit, plus binds cluster sets into the namespace (with admin of the set, which grants the
      set's `bind`) and grants roles in the namespace.
    Exactly one of `user` and `group` is set; a principal holds one role per namespace.
    """

    class Role(models.TextChoices):
        ADMIN = "admin"
        EDIT = "edit"
        VIEW = "view"

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="namespace_roles")
    namespace = models.CharField(max_length=63)
    role = models.CharField(max_length=8, choices=Role.choices)

    class Meta:
        ordering = ["hub", "namespace", "role"]
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, group__isnull=True)
                | Q(user__isnull=True, group__isnull=False),
                name="namespacerole_user_xor_group",
            ),
            models.UniqueConstraint(
                fields=["hub", "namespace", "user"],
                condition=Q(user__isnull=False),
                name="namespacerole_unique_user",
            ),
            models.UniqueConstraint(
                fields=["hub", "namespace", "group"],
                condition=Q(group__isnull=False),
                name="namespacerole_unique_group",
            ),
        ]
        indexes = [models.Index(fields=["user", "role"]), models.Index(fields=["group", "role"])]

    def __str__(self) -> str:
        return f"{self.principal} {self.role} in {self.hub}/{self.namespace}"
