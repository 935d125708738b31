"""Request ids: each request carries one (the caller's X-Request-ID when sane, else a new one), echoed
in the response and kept in audit entries, so an audit row can be matched to the logs of its request.

Server timing: every response says how long the application took to produce it (`Server-Timing:
app;dur=<ms>`), which browsers' developer tools show and bench/pages.py --load reads under load.
"""

import re
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

HEADER = "X-Request-ID"
_SANE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        sent = request.headers.get(HEADER, "")
        request.request_id = sent if _SANE.match(sent) else uuid.uuid4().hex  # type: ignore[attr-defined]
        response = self.get_response(request)
        response[HEADER] = request.request_id  # type: ignore[attr-defined]
        return response


class ServerTimingMiddleware:
    """First in the chain: the time every other middleware and the view took, in milliseconds."""

    HEADER = "Server-Timing"

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        response[self.HEADER] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
        return response


class RequestSizeLimitMiddleware:
    """A body larger than DATA_UPLOAD_MAX_MEMORY_SIZE answers 413 with a message before anything reads it.

    Django refuses such bodies only when a form or `request.body` reads them, with its generic 400
    page, and file uploads are not counted at all (they spool to disk); one limit on the declared
    length covers every form, upload and API call. Without a Content-Length the WSGI body is empty.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is None or length <= limit:
            return self.get_response(request)
        message = f"the request body is {length} bytes; at most {limit} bytes are accepted"
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=413)
        return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
