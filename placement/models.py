"""Placements (OCM Placement and KubeFleet ClusterResourcePlacement) and what they decided.

Every placement belongs to a hub (its inventory, and where its decisions are published). `owner` says
who decides: `hub` rows (and their decisions and bindings) mirror the hub's objects, read-only;
`dashboard` rows were created here or with `apply`, and the dashboard's scheduler writes their
decisions. spec/status are stored exactly as the Kubernetes objects carry them.
"""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.functional import cached_property

from core.fields import CompressedJSONField
from inventory.models import Hub
from inventory.models import Owner as Owner  # the sync reads it too; placement code names it from here

if TYPE_CHECKING:
    from placement.families import Family

PLACEMENT_LABEL = "cluster.open-cluster-management.io/placement"
CRP_LABEL = "kubernetes-fleet.io/parent-CRP"


def _owner_field() -> models.CharField[str, str]:
    return models.CharField(max_length=16, choices=Owner.choices, default=Owner.HUB)


class PlacementQuerySet(models.QuerySet["Placement"]):
    def for_listing(self) -> "PlacementQuerySet":
        return self.select_related("hub").order_by("kind", "namespace", "name", "pk")


class InventoryNames(models.Model):
    """The cluster names of one inventory, packed (`placement.scheduler.record.NameTable`): the records of
    runs on the inventory hold positions into these names and refer to them by `digest`, so the names
    are stored once per inventory rather than once per placement (placement.nametables writes and
    prunes them)."""

    digest = models.CharField(max_length=32, primary_key=True)
    packed = models.BinaryField()
    count = models.PositiveIntegerField()
    # When a run last stored a record referring to these names (refreshed when older than
    # nametables.REFRESH): names no record refers to and unused for nametables.UNUSED are pruned.
    used = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "inventory names"

    def __str__(self) -> str:
        return f"{self.count} names ({self.digest})"


class Placement(models.Model):
    class Kind(models.TextChoices):
        PLACEMENT = "Placement", "OCM Placement"
        CLUSTER_RESOURCE_PLACEMENT = "ClusterResourcePlacement", "Fleet ClusterResourcePlacement"

    Owner = Owner

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="placements")
    owner = _owner_field()
    kind = models.CharField(max_length=32, choices=Kind.choices)
    # Blank for a ClusterResourcePlacement (cluster-scoped).
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(max_length=64, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    # The OCM scheduler honours cluster.open-cluster-management.io/experimental-scheduling-disable.
    annotations = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    status = models.JSONField(default=dict, blank=True)
    # The last scheduler report without its per-cluster entries (`to_explanation()`): selection, weights,
    # conditions, decisions, events. An explanation written before `cluster_record` existed, or by a test,
    # may still hold them as `clusters` (placement.explanations reads both).
    explanation = CompressedJSONField(default=dict, blank=True)
    # What the last run computed per cluster, packed (`placement.scheduler.record.ClusterRecord.pack`):
    # pages and the API build the explanation rows they show from it (placement.explanations).
    cluster_record = models.BinaryField(default=b"", blank=True)
    # The inventory's names the record's name column refers to (None: no record, or one that holds its
    # names or its table itself, as records built from a listing explanation or packed before did).
    name_table = models.ForeignKey(
        InventoryNames, on_delete=models.PROTECT, null=True, blank=True, related_name="placements"
    )
    # A digest of the stored explanation and cluster record (`placement.explanations.digest`): a run that
    # would store the same, with the same status and decisions, writes nothing but `last_scheduled_at`.
    run_digest = models.CharField(max_length=32, blank=True, default="")
    last_scheduled_at = models.DateTimeField(null=True, blank=True)
    # When a timed run (toleration or add-on score expiry) is due; one timed run per moment.
    requeue_at = models.DateTimeField(null=True, blank=True)
    # Set while a reschedule is queued, so a burst of changes enqueues one run (placement.tasks).
    reschedule_queued_at = models.DateTimeField(null=True, blank=True)
    # The queued run is one of those a change cannot alter, queued behind the others: a change that may
    # alter the placement queues a run of its own instead of waiting for that one.
    reschedule_queued_later = models.BooleanField(default=False)
    # Set (with the trigger text) while a hub change still owes this placement a reschedule: written with
    # the change and cleared when a run that started after it succeeds, so a reschedule that could not be
    # queued (broker down) or failed in-process is done later by placement.tasks.sweep_pending_reschedules.
    reschedule_pending_since = models.DateTimeField(null=True, blank=True, db_index=True)
    reschedule_pending_trigger = models.CharField(max_length=200, blank=True)
    # The claim of the runner executing a rolling-update round of a dashboard-owned CRP (placement.claims):
    # one runner at a time, on SQLite as on PostgreSQL; a claim past its time belongs to a dead runner.
    rollout_claimed_until = models.DateTimeField(null=True, blank=True)
    rollout_claim_owner = models.CharField(max_length=32, blank=True)
    # Set while a round asked for by a change (the hub's reports on the bindings, a reschedule) is queued,
    # so a burst of reports on one CRP's bindings queues one round (placement.rollouts.rolling).
    round_queued_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = PlacementQuerySet.as_manager()

    class Meta:
        constraints = [
            # Regardless of owner: decisions find their placement by (namespace, name) on the hub.
            models.UniqueConstraint(
                fields=["hub", "kind", "namespace", "name"], name="placement_unique_hub_kind_ns_name"
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def get_absolute_url(self) -> str:
        return reverse("placement:placement-detail", args=[self.pk])

    @property
    def family(self) -> "Family":
        """The adapter of the placement's API family: what differs between OCM and Fleet."""
        # the adapters use the service, which uses these models: they are loaded on first use
        from placement.families import family

        return family(self.kind)

    @property
    def read_only(self) -> bool:
        """Hub-owned placements are changed on their hub, never here."""
        return self.owner == Owner.HUB

    @property
    def policy_summary(self) -> str:
        return self.family.policy_summary(self.spec)

    @property
    def requested(self) -> str:
        """How many clusters it asks for: a number, or "all"."""
        return self.family.requested(self)

    @cached_property
    def selected_count(self) -> int:
        """How many clusters it selects, as every page and the API count them (one query; the lists'
        rows carry it already, from `placement.queries.for_list`)."""
        from placement.queries import selected_count  # the queries read this module

        count: int = Placement.objects.filter(pk=self.pk).values_list(selected_count(), flat=True).get()
        return count


class PlacementDecision(models.Model):
    """An OCM PlacementDecision; existing ones are the scheduler's input for Balance, Steady and taints."""

    placement = models.ForeignKey(
        Placement, on_delete=models.SET_NULL, null=True, blank=True, related_name="decisions"
    )
    hub = models.ForeignKey(
        Hub, on_delete=models.CASCADE, null=True, blank=True, related_name="placement_decisions"
    )
    # dashboard: written by our scheduler for a dashboard-owned placement; the sync never touches it.
    owner = _owner_field()
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    # status.decisions: [{clusterName, reason}]
    decisions = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "namespace", "name"],
                condition=Q(owner=Owner.HUB),
                name="placementdecision_unique_hub_ns_name",
            ),
            # A published copy mirrored back from the hub may share the name; it is a hub row.
            models.UniqueConstraint(
                fields=["placement", "name"],
                condition=Q(owner=Owner.DASHBOARD),
                name="placementdecision_unique_owned_name",
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class ClusterResourceBinding(models.Model):
    """A KubeFleet ClusterResourceBinding: one per (CRP, cluster); existing ones feed PickN/PickAll."""

    placement = models.ForeignKey(
        Placement, on_delete=models.SET_NULL, null=True, blank=True, related_name="bindings"
    )
    hub = models.ForeignKey(
        Hub, on_delete=models.CASCADE, null=True, blank=True, related_name="resource_bindings"
    )
    owner = _owner_field()
    name = models.CharField(max_length=253)
    labels = models.JSONField(default=dict, blank=True)
    # the scheduler keeps an Unscheduled binding's earlier state in one (previous-binding-state)
    annotations = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    status = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hub", "name"],
                condition=Q(owner=Owner.HUB),
                name="clusterresourcebinding_unique_hub_name",
            ),
            models.UniqueConstraint(
                fields=["placement", "name"],
                condition=Q(owner=Owner.DASHBOARD),
                name="clusterresourcebinding_unique_owned_name",
            ),
        ]
        indexes = [models.Index(fields=["hub", "name"])]

    def __str__(self) -> str:
        return self.name


class PlacementEvent(models.Model):
    """A Kubernetes-style event about a placement (DecisionCreate, ScoreUpdate, ...), newest first."""

    # Events kept per placement; older ones are pruned when new ones are recorded.
    KEEP = 100

    class Type(models.TextChoices):
        NORMAL = "Normal"
        WARNING = "Warning"

    placement = models.ForeignKey(Placement, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField()
    type = models.CharField(max_length=8, choices=Type.choices, default=Type.NORMAL)
    reason = models.CharField(max_length=64)
    message = models.TextField(blank=True)
    # The object the event is also about, e.g. the PlacementDecision a DecisionCreate names.
    related = models.CharField(max_length=253, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["placement", "-at"])]

    def __str__(self) -> str:
        return f"{self.type} {self.reason}: {self.message[:60]}"


class DecisionChange(models.Model):
    """One change of a placement's selected clusters (or of its spec), with what triggered it."""

    placement = models.ForeignKey(Placement, on_delete=models.CASCADE, related_name="history")
    at = models.DateTimeField()
    # e.g. "cluster label changed", "weights edited", "taint toleration expired", "spec edited"
    trigger = models.CharField(max_length=200)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Who or what made the change when it was not a user of the site (e.g. "apply -f demo.yaml").
    actor_name = models.CharField(max_length=150, blank=True)
    added = models.JSONField(default=list, blank=True)
    removed = models.JSONField(default=list, blank=True)
    selected = models.JSONField(default=list, blank=True)
    spec_before = models.JSONField(null=True, blank=True)
    spec_after = models.JSONField(null=True, blank=True)
    # Identifies the change (placement.history.change_key): a second writer of the same change, e.g. a
    # double-submitted Apply or a reschedule racing it, finds it recorded instead of adding a copy. NULL
    # (not "") for entries recorded before keys existed: NULLs never collide in the unique constraint.
    key = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["placement", "-at"])]
        constraints = [models.UniqueConstraint(fields=["placement", "key"], name="decisionchange_unique_key")]

    def __str__(self) -> str:
        return f"{self.placement} {self.trigger}: +{len(self.added)} -{len(self.removed)}"

    @property
    def actor_display(self) -> str:
        return self.actor.get_username() if self.actor is not None else self.actor_name


class HubInventoryVersion(models.Model):
    """Bumped whenever a hub's scheduling inputs change, so cached inventories know they are stale."""

    hub = models.OneToOneField(Hub, on_delete=models.CASCADE, primary_key=True, related_name="+")
    version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.hub_id}@{self.version}"


class HubChangeEntry(models.Model):
    """One scheduler input a recorded hub change touched, under the inventory version that change made.

    Written in the transaction that writes the rows and bumps the version, so a process that sees a
    version sees its entries: a process holding an older snapshot reads the entries after its version
    and reloads only the rows they name (`placement.service.hub_snapshot`). Every version has at least
    one entry (`NOTHING` when the change touched no input), so a missing version tells that entries were
    pruned and the snapshot must be built again.
    """

    class Kind(models.TextChoices):
        CLUSTER = "cluster", "ManagedCluster"
        MEMBER_CLUSTER = "member", "MemberCluster"
        CLUSTER_SET = "set", "ManagedClusterSet"
        BINDING = "binding", "ManagedClusterSetBinding"
        SCORE = "score", "AddOnPlacementScore"
        DECISION = "decision", "PlacementDecision"
        RESOURCE_BINDING = "crb", "ClusterResourceBinding"
        # which PlacementDecisions count as the hub's may have changed: read them all again
        DECISIONS = "decisions", "every PlacementDecision"
        EVERYTHING = "all", "everything (build the snapshot again)"
        NOTHING = "none", "no scheduler input"

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="+")
    version = models.BigIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    namespace = models.CharField(max_length=253, blank=True)
    name = models.CharField(max_length=253, blank=True)

    class Meta:
        indexes = [models.Index(fields=["hub", "version"], name="placement_change_hub_version")]

    def __str__(self) -> str:
        return f"{self.hub_id}@{self.version} {self.kind} {self.namespace}/{self.name}"


class RolloutObject(models.Model):
    """Fields every rollout kind shares: its hub, who owns it, and the object as Kubernetes stores it."""

    hub = models.ForeignKey(Hub, on_delete=models.CASCADE, related_name="+")
    owner = _owner_field()
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    resource_version = models.CharField(max_length=64, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    status = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.name

    @property
    def read_only(self) -> bool:
        return self.owner == Owner.HUB


def _unique_per_hub(model: str) -> list[models.BaseConstraint]:
    # Regardless of owner, like placements: a run finds its strategy and approvals by name on the hub.
    return [models.UniqueConstraint(fields=["hub", "name"], name=f"{model}_unique_hub_name")]


class StagedUpdateStrategy(RolloutObject):
    """A KubeFleet ClusterStagedUpdateStrategy: the ordered stages a staged update run follows."""

    # Not stored: what the strategy table shows of a row (how many runs use it, its spec as YAML), set by
    # placement.views.
    run_count: int
    spec_yaml: str

    class Meta:
        constraints = _unique_per_hub("stagedupdatestrategy")
        ordering = ["hub", "name"]


class StagedUpdateRun(RolloutObject):
    """A KubeFleet ClusterStagedUpdateRun; dashboard-owned runs are executed here (placement.rollouts)."""

    # Resolved from spec.placementName on the same hub; None while that CRP is not known here.
    placement = models.ForeignKey(
        Placement, on_delete=models.SET_NULL, null=True, blank=True, related_name="update_runs"
    )
    generation = models.BigIntegerField(default=1)
    # When the next reconcile of a dashboard-owned run is due (None: finished, or nothing to do until a
    # change requests a step). A failed step keeps it set, to now + its backoff.
    requeue_at = models.DateTimeField(null=True, blank=True)
    # The claim of the runner stepping the run (placement.claims): one at a time, on SQLite too.
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_owner = models.CharField(max_length=32, blank=True)
    # The last step's failure ("" after a step succeeds) and how many steps in a row have failed.
    last_error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = _unique_per_hub("stagedupdaterun")
        ordering = ["hub", "name"]

    def get_absolute_url(self) -> str:
        return reverse("rollouts:run-detail", args=[self.pk])

    @property
    def placement_name(self) -> str:
        return str(self.spec.get("placementName") or "")

    @property
    def strategy_name(self) -> str:
        return str(self.spec.get("stagedRolloutStrategyName") or "")


class ApprovalRequest(RolloutObject):
    """A KubeFleet ClusterApprovalRequest: one stage's before- or after-stage Approval task of a run."""

    class State(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved", "approved, waiting for acceptance"
        ACCEPTED = "accepted"

    run = models.ForeignKey(
        StagedUpdateRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="approval_requests"
    )
    # metadata.generation: an approval counts only when its observedGeneration equals it.
    generation = models.BigIntegerField(default=1)
    # approval_state(object), kept as a column so the inbox and its count are one indexed query.
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)

    class Meta:
        constraints = _unique_per_hub("approvalrequest")
        indexes = [models.Index(fields=["state"])]
        ordering = ["hub", "name"]

    @property
    def run_name(self) -> str:
        return str(self.spec.get("parentStageRollout") or "")

    @property
    def stage_name(self) -> str:
        return str(self.spec.get("targetStage") or "")

    @property
    def task_type(self) -> str:
        return str(self.labels.get("kubernetes-fleet.io/taskType") or "")
