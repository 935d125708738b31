"""The Django admin pages of placements, their OCM decisions and their Fleet bindings."""

from django.contrib import admin

from placement.models import ClusterResourceBinding, Placement, PlacementDecision


@admin.register(Placement)
class PlacementAdmin(admin.ModelAdmin[Placement]):
    list_display = ["name", "namespace", "kind", "hub", "updated"]
    list_filter = ["kind", "hub"]
    list_select_related = ["hub"]
    search_fields = ["name", "namespace"]


@admin.register(PlacementDecision)
class PlacementDecisionAdmin(admin.ModelAdmin[PlacementDecision]):
    list_display = ["name", "namespace", "placement", "hub"]
    list_filter = ["hub"]
    list_select_related = ["hub", "placement"]


@admin.register(ClusterResourceBinding)
class ClusterResourceBindingAdmin(admin.ModelAdmin[ClusterResourceBinding]):
    list_display = ["name", "placement", "hub"]
    list_filter = ["hub"]
    list_select_related = ["hub", "placement"]
