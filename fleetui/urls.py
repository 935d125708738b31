"""Root URLs: home, health, login, admin, the API schema and docs, and the apps' pages and APIs."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic.base import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from fleetui import views
from fleetui.api import api_root

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    # browsers ask for /favicon.ico on pages without a <link rel="icon">, such as the API's JSON answers
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", api_root, name="api-root"),
    path("api/", include("inventory.api.urls")),
    path("api/", include("placement.api.urls")),
    path("api/", include("placement.rollouts.api.urls")),
    path("", include("inventory.urls")),
    path("", include("placement.urls")),
    path("", include("placement.rollouts.urls")),
]
