"""Messages for htmx answers: what an action reports reaches the page even when htmx swaps only a fragment.

A full page shows the request's messages in base.html's #notices. An htmx answer is a fragment that
does not include them, so this middleware appends them as an out-of-band swap into #notices; drawing
them consumes them, so they do not show again on the next full page.
"""

from collections.abc import Callable

from django.contrib import messages
from django.contrib.messages.storage.base import BaseStorage
from django.http import HttpResponse
from django.template.loader import render_to_string

from core import listing
from core.requests import HtmxRequest

# Answers after which htmx leaves the page (or swaps nothing): their messages wait for the next page.
_LEAVES_PAGE = ("HX-Redirect", "HX-Location", "HX-Refresh")


def _takes_notices(request: HtmxRequest, response: HttpResponse) -> bool:
    return (
        listing.wants_fragment(request)
        and not response.streaming
        and response.status_code != 204
        and not 300 <= response.status_code < 400
        and response.get("Content-Type", "").startswith("text/html")
        and not any(header in response for header in _LEAVES_PAGE)
    )


class HtmxMessagesMiddleware:
    """Appends the messages an htmx answer left undrawn, as `<div id="notices" hx-swap-oob="beforeend">`."""

    def __init__(self, get_response: Callable[[HtmxRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HtmxRequest) -> HttpResponse:
        response = self.get_response(request)
        if not _takes_notices(request, response):
            return response
        storage = messages.get_messages(request)
        # `used`: the answer drew them itself (a 503 swapped into #notices, say)
        if not isinstance(storage, BaseStorage) or storage.used or not len(storage):
            return response
        notices = render_to_string("_notices.html", {"messages": storage, "oob": True}, request=request)
        response.content += notices.encode(response.charset)
        return response
