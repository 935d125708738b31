from django.urls import path

from inventory import views

app_name = "inventory"

urlpatterns = [
    path("hubs/", views.hub_list, name="hub-list"),
    path("hubs/<int:pk>/row/", views.hub_row, name="hub-row"),
    path("hubs/<int:pk>/sync/", views.hub_sync, name="hub-sync"),
    path("clusters/", views.cluster_list, name="cluster-list"),
    path("clusters/<int:pk>/", views.cluster_detail, name="cluster-detail"),
    path("clustersets/", views.clusterset_list, name="clusterset-list"),
    path("clustersets/<int:pk>/", views.clusterset_detail, name="clusterset-detail"),
]
