from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from inventory import roles
from inventory.models import ManagedCluster
from placement.models import Placement

PAGE_SIZE = 25


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """The clusters and placements the user's roles show, each paged on its own query parameter."""
    clusters = Paginator(roles.restrict(ManagedCluster.objects.for_listing(), request.user), PAGE_SIZE)
    placements = Paginator(roles.restrict(Placement.objects.for_listing(), request.user), PAGE_SIZE)
    return render(
        request,
        "home.html",
        {
            "clusters": clusters.get_page(request.GET.get("clusters_page")),
            "placements": placements.get_page(request.GET.get("placements_page")),
        },
    )


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers, docker healthchecks and `make up`: the site answers and reaches its
    database. No login, no data beyond ok/error."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return JsonResponse({"status": "error", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok"})
