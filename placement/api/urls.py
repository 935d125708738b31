from django.urls import path
from rest_framework.routers import DefaultRouter

from placement.api import views

app_name = "placement-api"

router = DefaultRouter()
router.register("placements", views.PlacementViewSet, basename="placement")

urlpatterns = [
    path("hubs/<int:pk>/argocd-configmap/", views.ArgoCdConfigMapView.as_view(), name="hub-argocd-configmap"),
    *router.urls,
]
