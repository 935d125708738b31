from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from inventory import audit
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
)


@admin.register(Hub)
class HubAdmin(admin.ModelAdmin):
    """Hub changes made here are audited like those of `manage.py hubs` (inventory.audit)."""

    list_display = ["name", "server_url", "serves_ocm", "serves_fleet", "last_synced_at"]
    search_fields = ["name", "server_url"]
    exclude = ["encrypted_credentials", "resource_versions", "sync_lock_until", "sync_lock_owner"]

    def save_model(self, request: HttpRequest, obj: Hub, form: ModelForm, change: bool) -> None:
        before = audit.hub_settings(Hub.objects.get(pk=obj.pk)) if change else None
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            audit.record_hub_saved(request.user, obj, before, request=request)

    def delete_model(self, request: HttpRequest, obj: Hub) -> None:
        self.delete_queryset(request, Hub.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Hub]) -> None:
        with transaction.atomic():
            for hub in queryset:
                audit.record_hub_removed(request.user, hub, request=request)
            super().delete_queryset(request, queryset)


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
