"""Inventory pages: hubs, clusters, cluster sets and their access, rejected objects, the audit log."""

from django.urls import path

from inventory import views

app_name = "inventory"

urlpatterns = [
    path("hubs/", views.hub_list, name="hub-list"),
    path("hubs/<int:pk>/", views.hub_detail, name="hub-detail"),
    path("hubs/<int:pk>/row/", views.hub_row, name="hub-row"),
    path("hubs/<int:pk>/sync/", views.hub_sync, name="hub-sync"),
    path("hubs/<int:pk>/sync/progress/", views.hub_sync_progress, name="hub-sync-progress"),
    path("clusters/", views.cluster_list, name="cluster-list"),
    path("clusters/<int:pk>/", views.cluster_detail, name="cluster-detail"),
    path(
        "clusters/named/<int:hub_pk>/<str:kind>/<path:name>/", views.cluster_by_name, name="cluster-by-name"
    ),
    path("clusters/<int:pk>/taints/", views.cluster_taints, name="cluster-taints"),
    path("clustersets/", views.clusterset_list, name="clusterset-list"),
    path("clustersets/<int:pk>/", views.clusterset_detail, name="clusterset-detail"),
    path("clustersets/<int:pk>/bindings/", views.clusterset_bind, name="clusterset-bind"),
    path(
        "clustersets/<int:pk>/bindings/<int:binding_pk>/delete/",
        views.clusterset_unbind,
        name="clusterset-unbind",
    ),
    path("clustersets/<int:pk>/access/", views.clusterset_access, name="clusterset-access"),
    path(
        "clustersets/<int:pk>/access/<int:role_pk>/",
        views.clusterset_access_change,
        name="clusterset-access-change",
    ),
    path(
        "clustersets/<int:pk>/access/<int:role_pk>/remove/",
        views.clusterset_access_remove,
        name="clusterset-access-remove",
    ),
    path("hubs/<int:pk>/namespaces/<str:namespace>/access/", views.namespace_access, name="namespace-access"),
    path(
        "hubs/<int:pk>/namespaces/<str:namespace>/access/<int:role_pk>/",
        views.namespace_access_change,
        name="namespace-access-change",
    ),
    path(
        "hubs/<int:pk>/namespaces/<str:namespace>/access/<int:role_pk>/remove/",
        views.namespace_access_remove,
        name="namespace-access-remove",
    ),
    path("rejected/", views.rejected_list, name="rejected-list"),
    path("audit/", views.audit_list, name="audit-list"),
]
