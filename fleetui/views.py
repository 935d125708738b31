from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from inventory.models import ManagedCluster
from placement.models import Placement

PAGE_SIZE = 25


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Loaded clusters and placements, each paged on its own query parameter."""
    clusters = Paginator(ManagedCluster.objects.for_listing(), PAGE_SIZE)
    placements = Paginator(Placement.objects.for_listing(), PAGE_SIZE)
    return render(
        request,
        "home.html",
        {
            "clusters": clusters.get_page(request.GET.get("clusters_page")),
            "placements": placements.get_page(request.GET.get("placements_page")),
        },
    )
