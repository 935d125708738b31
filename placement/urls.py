"""Placement pages: placements, their rollout and tolerations, runs, strategies, approvals."""

from django.urls import path

from placement import views

app_name = "placement"

urlpatterns = [
    path("placements/", views.placement_list, name="placement-list"),
    path("placements/new/", views.placement_create, name="placement-create"),
    path("placements/upload/", views.placement_upload, name="placement-upload"),
    path("placements/<int:pk>/", views.placement_detail, name="placement-detail"),
    path("placements/<int:pk>/edit/", views.placement_edit, name="placement-edit"),
    path("placements/<int:pk>/whatif/apply/", views.placement_whatif_apply, name="placement-whatif-apply"),
    path("placements/<int:pk>/rollout/", views.placement_rollout, name="placement-rollout"),
    path("placements/<int:pk>/rollout/section/", views.rollout_section, name="rollout-section"),
    path("placements/<int:pk>/tolerations/", views.placement_tolerations, name="placement-tolerations"),
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
