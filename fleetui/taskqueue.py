"""The Celery broker seen from the web: a broker that is down is an answer, not a crash.

Page and API actions queue Celery tasks ("Sync now", reschedules, publishing, run steps, rolling
rounds). When the broker cannot be reached, queueing raises; this module turns that into a 503 with a
message, once for every page (`TaskQueueUnavailableMiddleware`) and once for every API endpoint
(`api_unavailable`, which the API's exception handler answers with), so no view handles it on its own.
"""

import logging
from collections.abc import Callable

import kombu.exceptions
import redis.exceptions
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from rest_framework import status
from rest_framework.response import Response

from core import listing
from core.requests import HtmxRequest

logger = logging.getLogger(__name__)

# Queueing a task raises kombu's OperationalError once Celery's publish retries give up on the broker;
# a Redis client error can also surface unwrapped from the connection kombu hands out.
BROKER_DOWN: tuple[type[Exception], ...] = (
    kombu.exceptions.OperationalError,
    redis.exceptions.ConnectionError,
)
PAGE_MESSAGE = "Task queue unavailable, try again."
API_DETAIL = "task queue unavailable, try again"
# Pages that load htmx (inventory/_htmx.html) swap a 503 into this element of base.html.
NOTICES = "#notices"


def _log(request: HttpRequest, exc: Exception) -> None:
    logger.warning("%s %s: the task queue is unavailable: %s", request.method, request.path, exc)


def _back(request: HttpRequest) -> str:
    """The page the action was sent from, when it is one of this site's; the home page otherwise."""
    referer = request.headers.get("Referer", "")
    safe = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return referer if safe else "/"


class TaskQueueUnavailableMiddleware:
    """A page action whose task cannot be queued answers 503 with a message instead of a server error.

    htmx requests get the message as a fragment swapped into the page's notices (the element they
    target, such as a table row, stays as it was); plain form posts get a page with the message and a
    link back.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HtmxRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, BROKER_DOWN):
            return None
        _log(request, exception)
        messages.error(request, PAGE_MESSAGE)
        if listing.wants_fragment(request):
            response = render(request, "_notices.html", status=status.HTTP_503_SERVICE_UNAVAILABLE)
            response["HX-Retarget"] = NOTICES
            response["HX-Reswap"] = "innerHTML"
        else:
            response = render(
                request,
                "task_queue_unavailable.html",
                {"back": _back(request)},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        patch_vary_headers(response, listing.HTMX_HEADERS)
        return response


def api_unavailable(request: HttpRequest, exc: Exception) -> Response:
    """The API's answer to a broker that is down: 503 {"detail": "task queue unavailable, ..."}."""
    _log(request, exc)
    return Response({"detail": API_DETAIL}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
