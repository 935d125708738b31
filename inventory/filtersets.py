"""One FilterSet per inventory model, shared by the pages and the REST API (NetBox style).

A bad value is a form error naming the parameter: the pages show it, the API answers 400 with it.
"""

from collections.abc import Sequence
from typing import Any, TypedDict, TypeVar

import django_filters
from django import forms
from django.apps import apps
from django.db.models import Exists, F, Model, OuterRef, Q, QuerySet
from django.db.models.expressions import OrderBy
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from inventory import queries, roles
from inventory.forms import AuditFilterForm, LabelSelectorField, TaintKeyField
from inventory.models import (
    AddOnPlacementScore,
    AuditEntry,
    ClusterSetMembership,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    RejectedObject,
    SyncRun,
)
from placement.scheduler.labels import LabelSelector

_M = TypeVar("_M", bound=Model)


class SortFilter(django_filters.OrderingFilter):
    """`sort=name`, `sort=-cpu`: empty values sort last either way; `tiebreak` keeps paging stable."""

    def __init__(self, *args: Any, tiebreak: Sequence[str] = ("pk",), **kwargs: Any) -> None:
        self.tiebreak = tuple(tiebreak)
        kwargs.setdefault("label", "Sort")
        super().__init__(*args, **kwargs)

    def _order_by(self, param: str) -> OrderBy:
        field_name = self.get_ordering_value(param)
        if field_name.startswith("-"):
            return F(field_name[1:]).desc(nulls_last=True)
        return F(field_name).asc(nulls_last=True)

    def filter(self, qs: QuerySet[_M], value: list[str] | None) -> QuerySet[_M]:
        if not value:
            return qs
        return qs.order_by(*[self._order_by(param) for param in value if param], *self.tiebreak)


@extend_schema_field(OpenApiTypes.STR)
class LabelSelectorFilter(django_filters.Filter):
    field_class = LabelSelectorField

    def filter(self, qs: QuerySet[_M], value: LabelSelector | None) -> QuerySet[_M]:
        return qs if value is None else qs.filter(queries.selector_q(value))


class TaintKeyFilter(django_filters.CharFilter):
    """Clusters with a taint of this key, on the denormalised `,key1,key2,` column."""

    field_class = TaintKeyField

    def filter(self, qs: QuerySet[_M], value: str) -> QuerySet[_M]:
        return qs.filter(taint_keys__icontains=f",{value},") if value else qs


class IdRange(TypedDict):
    """Field options, spelled out so that `**ID_RANGE` type-checks option by option."""

    min_value: int
    max_value: int


# The ids a database integer column can hold: larger ones would fail in the driver, not match nothing.
ID_RANGE: IdRange = {"min_value": -(2**63), "max_value": 2**63 - 1}


class IdsField(django_filters.fields.ModelMultipleChoiceField):
    """Row ids; one beyond a 64-bit integer is refused like any other invalid id (SQLite raises
    OverflowError and PostgreSQL "out of range" if such a value reaches them)."""

    def _check_values(self, value: Sequence[object]) -> QuerySet[Any]:
        for pk in value:
            try:
                number = int(str(pk))
            except ValueError:
                continue  # Django's own check names it
            if not ID_RANGE["min_value"] <= number <= ID_RANGE["max_value"]:
                invalid = self.error_messages["invalid_pk_value"]
                raise forms.ValidationError(invalid, code="invalid_pk_value", params={"pk": pk})
        # Django's own check, private and so absent from its type stubs
        checked: QuerySet[Any] = super()._check_values(value)  # type: ignore[misc]
        return checked


class IdsFilter(django_filters.ModelMultipleChoiceFilter):
    """Rows by id, repeatable (`hub_id=1&hub_id=2`)."""

    field_class = IdsField


@extend_schema_field(OpenApiTypes.STR)
class HubNameFilter(django_filters.ModelMultipleChoiceFilter):
    """Hubs by name, repeatable (`hub=a&hub=b`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(field_name="hub__name", to_field_name="name", queryset=Hub.objects.all(), **kwargs)


class HubScopedFilterSet(django_filters.FilterSet):
    """`hub` (names) and `hub_id` (ids), each repeatable, for every model read from a hub. Given the
    request, filters naming rows (hubs, sets) take only those its user may see: a hidden row is refused
    as an unknown one is, so no filter tells which rows exist."""

    hub = HubNameFilter()
    hub_id = IdsFilter(field_name="hub", queryset=Hub.objects.all())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.request is None:
            return
        for field in self.filters.values():
            if isinstance(field, django_filters.ModelMultipleChoiceFilter) and field.queryset is not None:
                field.queryset = roles.restrict(field.queryset, self.request.user)


class HubFilterSet(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    ocm = django_filters.BooleanFilter(field_name="serves_ocm")
    fleet = django_filters.BooleanFilter(field_name="serves_fleet")
    state = django_filters.ChoiceFilter(
        method="filter_state", label="Sync state", choices=queries.HUB_SYNC_STATES
    )

    class Meta:
        model = Hub
        fields = ["name"]

    def filter_state(self, qs: QuerySet[Hub], name: str, value: str) -> QuerySet[Hub]:
        return qs.filter(queries.hub_sync_state(value)) if value else qs


class ClusterFilterSet(HubScopedFilterSet):
    q = LabelSelectorFilter(
        label="Label selector", help_text="kubectl syntax: region=eu,vendor in (A,B),!spot"
    )
    name = django_filters.CharFilter(lookup_expr="icontains")
    cluster_set = django_filters.CharFilter(method="filter_cluster_set", label="Cluster set")
    cluster_set_id = IdsFilter(
        method="filter_cluster_set_id", queryset=ManagedClusterSet.objects.all(), label="Cluster set (id)"
    )
    kind = django_filters.MultipleChoiceFilter(choices=ManagedCluster.Kind.choices)
    availability = django_filters.MultipleChoiceFilter(choices=ManagedCluster.Availability.choices)
    taint = TaintKeyFilter(label="Taint key")
    reporting = django_filters.BooleanFilter(
        method="filter_reporting",
        label="Reporting",
        help_text="no: availability unknown (no heartbeat) or stale (the hub's last sync failed)",
    )
    sort = SortFilter(
        fields=(
            ("name", "name"),
            ("hub__name", "hub"),
            ("availability", "availability"),
            ("cpu_allocatable", "cpu"),
            ("memory_allocatable", "memory"),
        ),
        tiebreak=("name", "hub__name", "kind", "pk"),
    )

    class Meta:
        model = ManagedCluster
        fields = ["stale"]

    def filter_cluster_set(
        self, qs: QuerySet[ManagedCluster], name: str, value: str
    ) -> QuerySet[ManagedCluster]:
        # Exists, not a join: a cluster in several matching sets stays one row.
        member = ClusterSetMembership.objects.filter(cluster=OuterRef("pk"), cluster_set__name=value)
        return qs.filter(Exists(member)) if value else qs

    def filter_cluster_set_id(
        self, qs: QuerySet[ManagedCluster], name: str, value: list[ManagedClusterSet]
    ) -> QuerySet[ManagedCluster]:
        member = ClusterSetMembership.objects.filter(cluster=OuterRef("pk"), cluster_set__in=value)
        return qs.filter(Exists(member)) if value else qs

    def filter_reporting(
        self, qs: QuerySet[ManagedCluster], name: str, value: bool | None
    ) -> QuerySet[ManagedCluster]:
        if value is None:
            return qs
        return qs.exclude(queries.NOT_REPORTING) if value else qs.filter(queries.NOT_REPORTING)


class ClusterSetFilterSet(HubScopedFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    selector_type = django_filters.MultipleChoiceFilter(choices=ManagedClusterSet.SelectorType.choices)
    sort = SortFilter(
        fields=(("name", "name"), ("hub__name", "hub"), ("member_count", "members")),
        tiebreak=("name", "hub__name", "pk"),
    )

    class Meta:
        model = ManagedClusterSet
        fields = ["name", "selector_type"]


class ClusterSetBindingFilterSet(HubScopedFilterSet):
    class Meta:
        model = ManagedClusterSetBinding
        fields = ["namespace", "cluster_set"]


class AddOnPlacementScoreFilterSet(HubScopedFilterSet):
    # AddOnPlacementScores live in the namespace named after their cluster.
    cluster = django_filters.CharFilter(field_name="namespace")
    expired = django_filters.BooleanFilter(method="filter_expired")

    class Meta:
        model = AddOnPlacementScore
        fields = ["name"]

    def filter_expired(
        self, qs: QuerySet[AddOnPlacementScore], name: str, value: bool | None
    ) -> QuerySet[AddOnPlacementScore]:
        if value is None:
            return qs
        expired = Q(valid_until__lt=timezone.now())
        return qs.filter(expired) if value else qs.exclude(expired)


class SyncRunFilterSet(HubScopedFilterSet):
    state = django_filters.MultipleChoiceFilter(choices=SyncRun.State.choices)
    trigger = django_filters.MultipleChoiceFilter(choices=SyncRun.Trigger.choices)

    class Meta:
        model = SyncRun
        fields = ["state", "trigger"]


class RejectedObjectFilterSet(HubScopedFilterSet):
    kind = django_filters.CharFilter()
    sync_run = django_filters.NumberFilter(field_name="sync_run_id")

    class Meta:
        model = RejectedObject
        fields = ["kind", "sync_run"]


# Entries name their object by its model's label (audit.record); these apps' models are the ones audited.
AUDITED_APPS = ("inventory", "placement")


def audit_target_types() -> list[tuple[str, str]]:
    models = (model for app in AUDITED_APPS for model in apps.get_app_config(app).get_models())
    choices = ((model._meta.label_lower, str(model._meta.verbose_name).capitalize()) for model in models)
    return sorted(choices, key=lambda choice: choice[1])


def _datetime_filter(lookup: str, label: str) -> django_filters.DateTimeFilter:
    # Typed text, not a datetime-local picker: a rejected value stays visible next to its error.
    widget = forms.DateTimeInput(attrs={"placeholder": "YYYY-MM-DD HH:MM"})
    return django_filters.DateTimeFilter(field_name="at", lookup_expr=lookup, label=label, widget=widget)


class AuditEntryFilterSet(HubScopedFilterSet):
    """The audit log; newest first always (the model's ordering), so there is no `sort`."""

    actor = django_filters.CharFilter(
        field_name="actor_name", lookup_expr="icontains", max_length=150, label="Actor contains"
    )
    # Free text (an action not logged yet matches nothing); the page offers the logged ones in a datalist.
    action = django_filters.CharFilter(
        max_length=64,
        widget=forms.TextInput(attrs={"list": "audit-actions", "placeholder": "e.g. role.grant"}),
    )
    target_type = django_filters.ChoiceFilter(choices=audit_target_types, label="Target type")
    target_id = django_filters.CharFilter(max_length=64, label="Target id")
    target = django_filters.CharFilter(lookup_expr="icontains", max_length=300, label="Target contains")
    outcome = django_filters.MultipleChoiceFilter(choices=AuditEntry.Outcome.choices)
    since = _datetime_filter("gte", "Since (UTC)")
    until = _datetime_filter("lte", "Until (UTC)")

    class Meta:
        model = AuditEntry
        fields: list[str] = []
        form = AuditFilterForm
