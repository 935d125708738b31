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
    path("placements/<int:pk>/tolerations/", views.placement_tolerations, name="placement-tolerations"),
]
