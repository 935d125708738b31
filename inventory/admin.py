from django.contrib import admin

from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)


@admin.register(Hub)
class HubAdmin(admin.ModelAdmin):
    list_display = ["name", "server_url", "serves_ocm", "serves_fleet", "last_synced_at"]
    search_fields = ["name", "server_url"]


@admin.register(ManagedCluster)
class ManagedClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "hub", "kind", "availability", "stale", "synced_at"]
    list_filter = ["hub", "kind", "availability", "stale"]
    list_select_related = ["hub"]
    search_fields = ["name", "uid"]


@admin.register(ManagedClusterSet)
class ManagedClusterSetAdmin(admin.ModelAdmin):
    list_display = ["name", "hub", "selector_type"]
    list_filter = ["hub", "selector_type"]
    list_select_related = ["hub"]


@admin.register(ManagedClusterSetBinding)
class ManagedClusterSetBindingAdmin(admin.ModelAdmin):
    list_display = ["name", "namespace", "cluster_set", "hub"]
    list_filter = ["hub"]
    list_select_related = ["hub"]


@admin.register(AddOnPlacementScore)
class AddOnPlacementScoreAdmin(admin.ModelAdmin):
    list_display = ["name", "namespace", "hub", "valid_until"]
    list_filter = ["hub"]
    list_select_related = ["hub"]
