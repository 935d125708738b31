"""The rollout pages' URLs (/runs/, /strategies/, /approvals/, and a placement's rollout actions under
/placements/<id>/rollout/, whose page is the placement page's Rollout tab), in their own namespace."""

from django.urls import path

from placement.rollouts import views

app_name = "rollouts"

urlpatterns = [
    path("placements/<int:pk>/rollout/snapshot/", views.placement_rollout, name="placement-rollout"),
    path("placements/<int:pk>/rollout/section/", views.rollout_section, name="rollout-section"),
    path("runs/", views.run_list, name="run-list"),
    path("runs/new/", views.run_create, name="run-create"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/state/", views.run_state, name="run-state"),
    path("runs/<int:pk>/resume/", views.run_resume, name="run-resume"),
    path("strategies/", views.strategy_list, name="strategy-list"),
    path("strategies/new/", views.strategy_create, name="strategy-create"),
    path("approvals/", views.approval_list, name="approval-list"),
    path("approvals/<int:pk>/row/", views.approval_row, name="approval-row"),
    path("approvals/<int:pk>/approve/", views.approval_approve, name="approval-approve"),
]
