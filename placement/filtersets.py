"""The Placement FilterSet, shared by the placements page and the REST API (NetBox style)."""

import django_filters
from django.db.models import Q, QuerySet

from inventory.filtersets import HubScopedFilterSet, SortFilter
from placement import queries
from placement.models import Owner, Placement


class PlacementFilterSet(HubScopedFilterSet):
    q = django_filters.CharFilter(
        method="filter_text", label="Search", help_text="namespace or name contains"
    )
    kind = django_filters.MultipleChoiceFilter(choices=Placement.Kind.choices)
    owner = django_filters.MultipleChoiceFilter(choices=Owner.choices)
    namespace = django_filters.CharFilter()
    satisfied = django_filters.BooleanFilter(method="filter_satisfied", label="Satisfied")
    reported = django_filters.BooleanFilter(method="filter_reported", label="Condition reported")
    misconfigured = django_filters.BooleanFilter(method="filter_misconfigured", label="Misconfigured")
    rollout = django_filters.ChoiceFilter(
        method="filter_rollout", label="Rolling update", choices=queries.ROLLOUT_STATES
    )
    sort = SortFilter(
        fields=(
            ("name", "name"),
            ("kind", "kind"),
            ("owner", "owner"),
            ("hub__name", "hub"),
            ("last_change", "changed"),
        ),
        tiebreak=("namespace", "name", "hub__name", "kind", "pk"),
    )

    class Meta:
        model = Placement
        fields = ["namespace"]

    def filter_text(self, qs: QuerySet[Placement], name: str, value: str) -> QuerySet[Placement]:
        return qs.filter(Q(name__icontains=value) | Q(namespace__icontains=value)) if value else qs

    def filter_satisfied(self, qs: QuerySet[Placement], name: str, value: bool | None) -> QuerySet[Placement]:
        return qs if value is None else queries.filter_satisfied(qs, value)

    def filter_reported(self, qs: QuerySet[Placement], name: str, value: bool | None) -> QuerySet[Placement]:
        return qs if value is None else queries.filter_reported(qs, value)

    def filter_misconfigured(
        self, qs: QuerySet[Placement], name: str, value: bool | None
    ) -> QuerySet[Placement]:
        return qs if value is None else queries.filter_misconfigured(qs, value)

    def filter_rollout(self, qs: QuerySet[Placement], name: str, value: str) -> QuerySet[Placement]:
        return queries.filter_rollout(qs, value) if value else qs
