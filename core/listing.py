"""List pages shared by every app: page sizes and htmx fragments."""

from django.http import HttpRequest, QueryDict

PER_PAGE = 50
MAX_PER_PAGE = 500


def per_page(params: QueryDict, name: str = "per_page", default: int = PER_PAGE) -> int:
    """Page size `name` from the query string: `default` when absent or not a number, at most MAX_PER_PAGE."""
    try:
        wanted = int(params.get(name, default))
    except ValueError:
        return default
    return min(max(wanted, 1), MAX_PER_PAGE)


def is_htmx(request: HttpRequest) -> bool:
    # A history restore wants the whole page, not the fragment.
    return request.headers.get("HX-Request") == "true" and "HX-History-Restore-Request" not in request.headers
