"""List pages shared by every app: page sizes and htmx fragments."""

from django.http import QueryDict
from django.views.decorators.vary import vary_on_headers

from core.requests import HtmxRequest

PER_PAGE = 50
MAX_PER_PAGE = 500


def per_page(params: QueryDict, name: str = "per_page", default: int = PER_PAGE) -> int:
    """Page size `name` from the query string: `default` when absent or not a number, at most MAX_PER_PAGE."""
    try:
        wanted = int(params.get(name, default))
    except ValueError:
        return default
    return min(max(wanted, 1), MAX_PER_PAGE)


# The headers `wants_fragment` reads: an answer that depends on them says so (Vary), so that a cache
# never hands a fragment to a page load or a page to an htmx swap.
HTMX_HEADERS = ("HX-Request", "HX-History-Restore-Request")
# For a view that chooses between the fragment and the page (or a redirect) itself.
varies_with_htmx = vary_on_headers(*HTMX_HEADERS)


def wants_fragment(request: HtmxRequest) -> bool:
    """htmx swaps in a fragment; a history restore (htmx reloading a page it no longer has) wants the
    whole page, as a plain request does."""
    return bool(request.htmx) and not request.htmx.history_restore_request
