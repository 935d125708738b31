"""REST API routes of placements, approvals, staged update runs, strategies and Argo CD config."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from placement.api import views

app_name = "placement-api"

router = SimpleRouter()
router.register("placements", views.PlacementViewSet, basename="placement")

urlpatterns = [
    path("hubs/<int:pk>/argocd-configmap/", views.ArgoCdConfigMapView.as_view(), name="hub-argocd-configmap"),
    *router.urls,
]
