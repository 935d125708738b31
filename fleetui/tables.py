"""The home page's tables: the clusters and the placements the user's roles show, each paged on its own."""

import django_tables2 as tables
from django.utils.safestring import SafeString

from core.tables import ListTable
from inventory.models import ManagedCluster
from inventory.tables import availability_html, labels_html
from placement.models import Placement

PAGE_SIZE = 25


class HomeClusterTable(ListTable):
    name = tables.Column("Name", attrs={"td": {"class": "name"}})
    hub = tables.Column("Hub", accessor="hub__name")
    kind = tables.Column("Kind")
    labels = tables.Column("Labels", accessor="pk")
    availability = tables.Column("Availability")
    pager_label = "Clusters"
    default_per_page = PAGE_SIZE

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "clusters"}
        prefix = "clusters_"

    def render_kind(self, record: ManagedCluster) -> str:
        # the stored kind, not the display text tables2 would hand as `value`
        return record.kind

    def render_labels(self, record: ManagedCluster) -> SafeString:
        return labels_html(record)

    def render_availability(self, record: ManagedCluster) -> SafeString:
        return availability_html(record)


class HomePlacementTable(ListTable):
    kind = tables.Column("Kind")
    name = tables.Column("Name", accessor="pk", attrs={"td": {"class": "name"}})
    hub = tables.Column("Hub", accessor="hub__name", default="dashboard")
    policy = tables.Column("Policy", accessor="policy_summary")
    pager_label = "Placements"
    default_per_page = PAGE_SIZE

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "placements"}
        prefix = "placements_"

    def render_name(self, record: Placement) -> str:
        return str(record)
