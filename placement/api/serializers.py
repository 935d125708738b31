"""API representations of placements, their decisions, bindings and history."""

from typing import Any, cast

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.api.serializers import HubScopedSerializer
from inventory.models import Hub
from placement import approvals, queries, tables
from placement.models import (
    ApprovalRequest,
    ClusterResourceBinding,
    DecisionChange,
    Placement,
    PlacementDecision,
    StagedUpdateRun,
    StagedUpdateStrategy,
)
from placement.scheduler.untrusted import NUL_REFUSED, holds_nul
from placement.tables import explanation_rows


class SpecField(serializers.JSONField):
    """An object's spec as JSON."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if holds_nul(value):  # PostgreSQL cannot store it: a 400 here, not a database error
            raise serializers.ValidationError(NUL_REFUSED)
        return value


class HubField(serializers.SlugRelatedField[Hub]):
    """A hub, by name."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="name", queryset=Hub.objects.all(), **kwargs)

    def to_internal_value(self, data: Any) -> Hub:
        if holds_nul(data):
            raise serializers.ValidationError(NUL_REFUSED)
        return super().to_internal_value(data)


class PlacementSerializer(HubScopedSerializer[Placement]):
    """A placement; `hub` (by name), `kind`, `namespace` and `name` are set once, at creation."""

    hub = HubField()
    owner = serializers.CharField(read_only=True)
    # DRF's serializer metaclass takes declared fields off the class: this never replaces Field.read_only
    read_only = serializers.BooleanField(read_only=True)  # type: ignore[assignment]
    status = serializers.JSONField(read_only=True)
    spec = SpecField()
    requested = serializers.SerializerMethodField()
    selected_count = serializers.SerializerMethodField()
    condition = serializers.SerializerMethodField()
    last_change = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = Placement
        fields = [
            "id",
            "hub",
            "hub_id",
            "kind",
            "owner",
            "read_only",
            "namespace",
            "name",
            "spec",
            "status",
            "requested",
            "selected_count",
            "condition",
            "last_change",
            "last_scheduled_at",
        ]
        read_only_fields = ["last_scheduled_at"]
        # Uniqueness is the service's to check (it answers with the field), not a second query here.
        validators: list[Any] = []

    def get_requested(self, placement: Placement) -> str:
        return placement.family.requested(placement)

    def get_selected_count(self, placement: Placement) -> int:
        # the API reads its placements through queries.for_list, which counts the live bindings
        return placement.family.selected_count(cast("queries.PlacementForList", placement))

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_condition(self, placement: Placement) -> dict[str, Any] | None:
        return queries.condition(placement)

    def validate_spec(self, spec: Any) -> Any:
        if not isinstance(spec, dict):
            raise serializers.ValidationError("must be an object")
        return spec

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None:
            for name in ("hub", "kind", "namespace", "name"):
                if name in attrs and attrs[name] != getattr(self.instance, name):
                    raise serializers.ValidationError({name: "cannot be changed; create another placement"})
        return attrs


class ExplanationField(serializers.JSONField):
    """The stored explanation with its per-cluster columns turned back into `to_report()` rows: the
    API answers the shape it always has."""

    def to_representation(self, value: Any) -> Any:
        explanation = dict(value or {})
        if "clusters" in explanation:
            explanation["clusters"] = explanation_rows(explanation)
        return super().to_representation(explanation)


class PlacementDetailSerializer(PlacementSerializer):
    explanation = ExplanationField(read_only=True)

    class Meta(PlacementSerializer.Meta):
        fields = [*PlacementSerializer.Meta.fields, "explanation"]


class PlacementDecisionSerializer(serializers.ModelSerializer[PlacementDecision]):
    class Meta:
        model = PlacementDecision
        fields = ["id", "namespace", "name", "owner", "labels", "decisions"]


class ClusterResourceBindingSerializer(serializers.ModelSerializer[ClusterResourceBinding]):
    class Meta:
        model = ClusterResourceBinding
        fields = ["id", "name", "owner", "labels", "spec", "status"]


class DecisionChangeSerializer(serializers.ModelSerializer[DecisionChange]):
    actor = serializers.CharField(source="actor_display", read_only=True)

    class Meta:
        model = DecisionChange
        fields = ["id", "at", "trigger", "actor", "added", "removed", "selected", "spec_before", "spec_after"]


class ApprovalRequestSerializer(HubScopedSerializer[ApprovalRequest]):
    """A ClusterApprovalRequest with what the inbox shows: its run, stage, task, the stage's clusters,
    since when it waits and whether the caller may approve it."""

    owner = serializers.CharField(read_only=True)
    run = serializers.CharField(source="run_name", read_only=True)
    run_id = serializers.IntegerField(read_only=True, allow_null=True)
    stage = serializers.CharField(source="stage_name", read_only=True)
    task = serializers.SerializerMethodField(help_text='"before" or "after" the stage')
    clusters = serializers.SerializerMethodField()
    waiting_since = serializers.SerializerMethodField()
    can_approve = serializers.SerializerMethodField()

    class Meta:
        model = ApprovalRequest
        fields = [
            "id",
            "hub",
            "hub_id",
            "owner",
            "name",
            "run",
            "run_id",
            "stage",
            "task",
            "clusters",
            "waiting_since",
            "state",
            "can_approve",
            "generation",
            "resource_version",
            "labels",
            "spec",
            "status",
        ]
        read_only_fields = fields

    def get_task(self, row: ApprovalRequest) -> str:
        return approvals.task_kind(row)

    def get_clusters(self, row: ApprovalRequest) -> list[str]:
        return list(approvals.stage_clusters(row))

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_waiting_since(self, row: ApprovalRequest) -> str | None:
        since = approvals.waiting_since(row)
        return serializers.DateTimeField().to_representation(since) if since else None

    def get_can_approve(self, row: ApprovalRequest) -> bool:
        # a list view decides for its whole page at once (context "approvable"); one row asks alone
        approvable: dict[int, bool] | None = self.context.get("approvable")
        if approvable is not None and row.pk in approvable:
            return approvable[row.pk]
        return approvals.can_approve(self.context["request"].user, row)


class ApprovalResultSerializer(serializers.Serializer[approvals.ApprovalResult]):
    """The answer to an Approve: `outcome` ok or no-op, the new `state`, and the request as stored."""

    outcome = serializers.CharField()
    state = serializers.CharField()
    message = serializers.CharField()
    approval = ApprovalRequestSerializer(source="request")


class StagedUpdateStrategySerializer(HubScopedSerializer[StagedUpdateStrategy]):
    """A ClusterStagedUpdateStrategy; `hub` (by name), `name` and `spec` are set at creation."""

    hub = HubField()
    owner = serializers.CharField(read_only=True)
    # DRF's serializer metaclass takes declared fields off the class: this never replaces Field.read_only
    read_only = serializers.BooleanField(read_only=True)  # type: ignore[assignment]
    spec = SpecField()

    class Meta:
        model = StagedUpdateStrategy
        fields = ["id", "hub", "hub_id", "owner", "read_only", "name", "spec", "created", "updated"]
        # names and specs are the service's to check, with upstream's messages
        validators: list[Any] = []
        extra_kwargs: dict[str, dict[str, Any]] = {"name": {"validators": []}}


class StagedUpdateRunSerializer(HubScopedSerializer[StagedUpdateRun]):
    """A ClusterStagedUpdateRun with what the runs page shows: its state, current stage, conditions and
    pending approvals. `hub` (by name), `name` and `spec` are set at creation."""

    hub = HubField()
    owner = serializers.CharField(read_only=True)
    # DRF's serializer metaclass takes declared fields off the class: this never replaces Field.read_only
    read_only = serializers.BooleanField(read_only=True)  # type: ignore[assignment]
    spec = SpecField()
    state = serializers.SerializerMethodField()
    current_stage = serializers.SerializerMethodField()
    initialized = serializers.SerializerMethodField()
    progressing = serializers.SerializerMethodField()
    succeeded = serializers.SerializerMethodField()
    pending_approvals = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = StagedUpdateRun
        fields = [
            "id",
            "hub",
            "hub_id",
            "owner",
            "read_only",
            "name",
            "placement_id",
            "spec",
            "state",
            "generation",
            "current_stage",
            "initialized",
            "progressing",
            "succeeded",
            "pending_approvals",
            "requeue_at",
            "last_error",
            "attempts",
            "created",
            "updated",
        ]
        read_only_fields = ["placement_id", "generation", "requeue_at", "last_error", "attempts"]
        validators: list[Any] = []
        extra_kwargs: dict[str, dict[str, Any]] = {"name": {"validators": []}}

    def get_state(self, run: StagedUpdateRun) -> str:
        return str(run.spec.get("state") or "Initialize")

    def get_current_stage(self, run: StagedUpdateRun) -> str:
        return tables.current_stage(run.status or {})

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_initialized(self, run: StagedUpdateRun) -> dict[str, Any] | None:
        return _condition(run, "Initialized")

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_progressing(self, run: StagedUpdateRun) -> dict[str, Any] | None:
        return _condition(run, "Progressing")

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_succeeded(self, run: StagedUpdateRun) -> dict[str, Any] | None:
        return _condition(run, "Succeeded")


def _condition(run: StagedUpdateRun, kind: str) -> dict[str, Any] | None:
    found = tables.find_condition(run.status or {}, kind)
    return dict(found) if found is not None else None


class StagedUpdateRunDetailSerializer(StagedUpdateRunSerializer):
    """The run with its whole status (stagesStatus, deletionStageStatus, conditions...)."""

    status = serializers.JSONField(read_only=True)

    class Meta(StagedUpdateRunSerializer.Meta):
        fields = [*StagedUpdateRunSerializer.Meta.fields, "status"]


class RunStateSerializer(serializers.Serializer[Any]):
    """The state to set: Initialize, Run or Stop."""

    state = serializers.CharField()
