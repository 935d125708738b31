"""API representations of placements, their decisions, bindings and history."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.api.serializers import HubScopedSerializer, NamedField
from inventory.models import Hub
from placement import explanations, publishing, queries
from placement.models import (
    ClusterResourceBinding,
    DecisionChange,
    Placement,
    PlacementDecision,
    PlacementEvent,
)
from placement.scheduler.untrusted import NUL_REFUSED, holds_nul


class SpecField(serializers.JSONField):
    """An object's spec as JSON."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if holds_nul(value):  # PostgreSQL cannot store it: a 400 here, not a database error
            raise serializers.ValidationError(NUL_REFUSED)
        return value


class HubField(NamedField[Hub]):
    """A hub, by name."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(slug_field="name", queryset=Hub.objects.all(), **kwargs)


class PlacementSerializer(HubScopedSerializer[Placement]):
    """A placement; `hub` (by name), `kind`, `namespace` and `name` are set once, at creation."""

    hub = HubField()
    owner = serializers.CharField(read_only=True)
    # DRF's serializer metaclass takes declared fields off the class: this never replaces Field.read_only
    read_only = serializers.BooleanField(read_only=True)  # type: ignore[assignment]
    status = serializers.JSONField(read_only=True)
    spec = SpecField()
    requested = serializers.SerializerMethodField()
    selected_count = serializers.IntegerField(read_only=True)
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
    """The placement's explanation as the scheduler's report has it, its clusters as `to_report()` rows
    built from the stored record (placement.explanations): the API answers the shape it always has."""

    def to_representation(self, value: Any) -> Any:
        # source="*": the value is the placement itself, whose record the rows are built from
        return super().to_representation(explanations.full(value))


class PublishedSerializer(serializers.Serializer[PlacementEvent]):
    """How the placement's last publishing went: `Normal` with what was written, `Warning` with the hub's
    reason."""

    at = serializers.DateTimeField()
    type = serializers.CharField()
    message = serializers.CharField()


class PlacementDetailSerializer(PlacementSerializer):
    explanation = ExplanationField(source="*", read_only=True)
    published = serializers.SerializerMethodField()

    class Meta(PlacementSerializer.Meta):
        fields = [*PlacementSerializer.Meta.fields, "explanation", "published"]

    @extend_schema_field(PublishedSerializer(allow_null=True))
    def get_published(self, placement: Placement) -> dict[str, Any] | None:
        """Null when the placement does not publish, or before its first publishing."""
        event = publishing.last_outcome(placement)
        return None if event is None else PublishedSerializer(event).data


class PlacementDecisionSerializer(serializers.ModelSerializer[PlacementDecision]):
    class Meta:
        model = PlacementDecision
        fields = ["id", "namespace", "name", "owner", "labels", "decisions"]


class ClusterResourceBindingSerializer(serializers.ModelSerializer[ClusterResourceBinding]):
    class Meta:
        model = ClusterResourceBinding
        fields = ["id", "name", "owner", "labels", "annotations", "spec", "status"]


class DecisionChangeSerializer(serializers.ModelSerializer[DecisionChange]):
    actor = serializers.CharField(source="actor_display", read_only=True)

    class Meta:
        model = DecisionChange
        fields = ["id", "at", "trigger", "actor", "added", "removed", "selected", "spec_before", "spec_after"]
