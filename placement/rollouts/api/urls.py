"""The rollouts' API URLs: /api/approvals/, /api/runs/, /api/strategies/ and a placement's /rollout/."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from placement.rollouts.api import views

app_name = "rollouts-api"

router = SimpleRouter()
router.register("approvals", views.ApprovalRequestViewSet, basename="approval")
router.register("runs", views.StagedUpdateRunViewSet, basename="run")
router.register("strategies", views.StagedUpdateStrategyViewSet, basename="strategy")

urlpatterns = [
    path("placements/<int:pk>/rollout/", views.PlacementRolloutView.as_view(), name="placement-rollout"),
    *router.urls,
]
