from django.urls import path

from placement import views

app_name = "placement"

urlpatterns = [
    path("placements/", views.placement_list, name="placement-list"),
    path("placements/<int:pk>/", views.placement_detail, name="placement-detail"),
]
