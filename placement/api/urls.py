"""REST API routes of placements, approvals, staged update runs, strategies and Argo CD config."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from placement.api import views

app_name = "placement-api"

router = SimpleRouter()
router.register("placements", views.PlacementViewSet, basename="placement")
router.register("approvals", views.ApprovalRequestViewSet, basename="approval")
router.register("runs", views.StagedUpdateRunViewSet, basename="run")
router.register("strategies", views.StagedUpdateStrategyViewSet, basename="strategy")

urlpatterns = [
    path("hubs/<int:pk>/argocd-configmap/", views.ArgoCdConfigMapView.as_view(), name="hub-argocd-configmap"),
    path("placements/<int:pk>/rollout/", views.PlacementRolloutView.as_view(), name="placement-rollout"),
    *router.urls,
]
