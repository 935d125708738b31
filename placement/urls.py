"""Placement pages: placements, their rollout and tolerations, runs, strategies, approvals."""

from django.urls import path

from placement import views

app_name = "placement"

urlpatterns = [
    path("placements/", views.placement_list, name="placement-list"),
    path("placements/new/", views.placement_create, name="placement-create"),
    path("placements/upload/", views.placement_upload, name="placement-upload"),
    # the placement page's tabs
    path("placements/<int:pk>/", views.placement_tab, {"tab": "decisions"}, name="placement-detail"),
    path("placements/<int:pk>/scores/", views.placement_tab, {"tab": "scores"}, name="placement-scores"),
    path("placements/<int:pk>/whatif/", views.placement_tab, {"tab": "whatif"}, name="placement-whatif"),
    path("placements/<int:pk>/rollout/", views.placement_tab, {"tab": "rollout"}, name="placement-rollout"),
    path("placements/<int:pk>/tolerations/", views.placement_tolerations, name="placement-tolerations"),
    path("placements/<int:pk>/history/", views.placement_tab, {"tab": "history"}, name="placement-history"),
    path("placements/<int:pk>/yaml/", views.placement_tab, {"tab": "yaml"}, name="placement-yaml"),
    path("placements/<int:pk>/yaml/download/", views.placement_yaml_download, name="placement-yaml-download"),
    path("placements/<int:pk>/edit/", views.placement_edit, name="placement-edit"),
    path("placements/<int:pk>/whatif/apply/", views.placement_whatif_apply, name="placement-whatif-apply"),
]
