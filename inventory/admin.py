"""Django admin of the inventory models; hub and namespace-role changes made here are audited."""

from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from core.requests import signed_in
from inventory import audit, roles
from inventory.models import (
    AddOnPlacementScore,
    Hub,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    NamespaceRole,
)


@admin.register(Hub)
class HubAdmin(admin.ModelAdmin[Hub]):
    """Hub changes made here are audited like those of `manage.py hubs` (inventory.audit)."""

    list_display = ["name", "server_url", "serves_ocm", "serves_fleet", "last_synced_at"]
    search_fields = ["name", "server_url"]
    exclude = ["encrypted_credentials", "resource_versions", "sync_lock_until", "sync_lock_owner"]

    def save_model(self, request: HttpRequest, obj: Hub, form: ModelForm[Hub], change: bool) -> None:
        before = audit.hub_settings(Hub.objects.get(pk=obj.pk)) if change else None
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            audit.record_hub_saved(signed_in(request.user), obj, before, request=request)

    def delete_model(self, request: HttpRequest, obj: Hub) -> None:
        self.delete_queryset(request, Hub.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Hub]) -> None:
        with transaction.atomic():
            for hub in queryset:
                audit.record_hub_removed(signed_in(request.user), hub, request=request)
            super().delete_queryset(request, queryset)


@admin.register(ManagedCluster)
class ManagedClusterAdmin(admin.ModelAdmin[ManagedCluster]):
    list_display = ["name", "hub", "kind", "availability", "stale", "synced_at"]
    list_filter = ["hub", "kind", "availability", "stale"]
    list_select_related = ["hub"]
    search_fields = ["name", "uid"]


@admin.register(ManagedClusterSet)
class ManagedClusterSetAdmin(admin.ModelAdmin[ManagedClusterSet]):
    list_display = ["name", "hub", "selector_type"]
    list_filter = ["hub", "selector_type"]
    list_select_related = ["hub"]


@admin.register(ManagedClusterSetBinding)
class ManagedClusterSetBindingAdmin(admin.ModelAdmin[ManagedClusterSetBinding]):
    list_display = ["name", "namespace", "cluster_set", "hub"]
    list_filter = ["hub"]
    list_select_related = ["hub"]


@admin.register(AddOnPlacementScore)
class AddOnPlacementScoreAdmin(admin.ModelAdmin[AddOnPlacementScore]):
    list_display = ["name", "namespace", "hub", "valid_until"]
    list_filter = ["hub"]
    list_select_related = ["hub"]


@admin.register(NamespaceRole)
class NamespaceRoleAdmin(admin.ModelAdmin[NamespaceRole]):
    """Namespace roles, changed by superusers only and through inventory.roles, so each change is audited
    like one made on a namespace's access page; the principal and the namespace of a role stay."""

    list_display = ["hub", "namespace", "role", "user", "group"]
    list_filter = ["hub", "role"]
    list_select_related = ["hub", "user", "group"]
    search_fields = ["namespace", "user__username", "group__name"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return roles.is_superuser(request.user)

    def has_change_permission(self, request: HttpRequest, obj: NamespaceRole | None = None) -> bool:
        return roles.is_superuser(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: NamespaceRole | None = None) -> bool:
        return roles.is_superuser(request.user)

    def get_readonly_fields(self, request: HttpRequest, obj: NamespaceRole | None = None) -> list[str]:
        return ["hub", "namespace", "user", "group"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: NamespaceRole, form: ModelForm[NamespaceRole], change: bool
    ) -> None:
        actor = signed_in(request.user)
        if change:
            roles.change(actor, obj, obj.role, request=request)
            return
        namespace = roles.Namespace(obj.hub, obj.namespace)
        principal = obj.user or obj.group
        assert principal is not None, "the form checked the model's constraint: a user or a group"
        obj.pk = roles.grant(actor, namespace, obj.role, principal, request=request).pk

    def delete_model(self, request: HttpRequest, obj: NamespaceRole) -> None:
        roles.revoke(signed_in(request.user), obj, request=request)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[NamespaceRole]) -> None:
        for row in queryset:
            roles.revoke(signed_in(request.user), row, request=request)
