"""FilterSets of the approvals inbox, the runs and the strategies, shared by their pages and the API."""

import django_filters
from django.db.models import Q, QuerySet

from inventory.filtersets import ID_RANGE, HubScopedFilterSet, SortFilter
from placement.models import ApprovalRequest, Owner, StagedUpdateRun, StagedUpdateStrategy
from placement.rollouts import runs
from placement.rollouts.approvals import OPEN_STATES


class ApprovalRequestFilterSet(HubScopedFilterSet):
    """The approvals inbox and `/api/approvals/`: without `state`, the open requests (not accepted yet)."""

    ALL = "all"

    q = django_filters.CharFilter(
        method="filter_text", label="Search", help_text="request or run name contains"
    )
    state = django_filters.ChoiceFilter(
        method="filter_state",
        label="State",
        empty_label="open (pending or approved)",
        choices=[*ApprovalRequest.State.choices, (ALL, "all")],
    )

    class Meta:
        model = ApprovalRequest
        fields: list[str] = []

    @property
    def qs(self) -> QuerySet[ApprovalRequest]:
        queryset: QuerySet[ApprovalRequest] = super().qs
        # an absent or empty state means "open"; filter methods run only for non-empty values
        return queryset if self.form.cleaned_data.get("state") else queryset.filter(state__in=OPEN_STATES)

    def filter_text(self, qs: QuerySet[ApprovalRequest], name: str, value: str) -> QuerySet[ApprovalRequest]:
        # the run's name from the request itself: its run may not be synced (yet)
        run = Q(spec__parentStageRollout__icontains=value)
        return qs.filter(Q(name__icontains=value) | run) if value else qs

    def filter_state(self, qs: QuerySet[ApprovalRequest], name: str, value: str) -> QuerySet[ApprovalRequest]:
        return qs if value == self.ALL else qs.filter(state=value)


class StagedUpdateRunFilterSet(HubScopedFilterSet):
    """The runs page and `/api/runs/`: hub- and dashboard-owned staged update runs."""

    q = django_filters.CharFilter(
        method="filter_text", label="Search", help_text="run, placement or strategy name contains"
    )
    owner = django_filters.MultipleChoiceFilter(choices=Owner.choices)
    state = django_filters.MultipleChoiceFilter(
        field_name="spec__state", label="State", choices=[(s, s) for s in runs.HUB_STATES]
    )
    placement_id = django_filters.NumberFilter(label="Placement id", **ID_RANGE)
    progress = django_filters.ChoiceFilter(
        method="filter_progress", label="Progress", choices=runs.PROGRESS_CHOICES
    )
    sort = SortFilter(
        fields=(("name", "name"), ("hub__name", "hub"), ("owner", "owner"), ("created", "created")),
        tiebreak=("name", "hub__name", "pk"),
    )

    class Meta:
        model = StagedUpdateRun
        fields: list[str] = []

    def filter_text(self, qs: QuerySet[StagedUpdateRun], name: str, value: str) -> QuerySet[StagedUpdateRun]:
        if not value:
            return qs
        return qs.filter(
            Q(name__icontains=value)
            | Q(spec__placementName__icontains=value)
            | Q(spec__stagedRolloutStrategyName__icontains=value)
        )

    def filter_progress(
        self, qs: QuerySet[StagedUpdateRun], name: str, value: str
    ) -> QuerySet[StagedUpdateRun]:
        return runs.filter_progress(qs, value) if value else qs


class StagedUpdateStrategyFilterSet(HubScopedFilterSet):
    """The strategies page and `/api/strategies/`."""

    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search")
    owner = django_filters.MultipleChoiceFilter(choices=Owner.choices)
    sort = SortFilter(
        fields=(("name", "name"), ("hub__name", "hub"), ("owner", "owner")),
        tiebreak=("name", "hub__name", "pk"),
    )

    class Meta:
        model = StagedUpdateStrategy
        fields: list[str] = []
