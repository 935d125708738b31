"""List pages shared by every app: sortable columns, page sizes, filtered pages and htmx fragments."""

from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django_filters import FilterSet

_Row = TypeVar("_Row")

PER_PAGE = 50
MAX_PER_PAGE = 500


@dataclass(frozen=True)
class Column:
    header: str
    # The `sort` value of the column's FilterSet; blank when the column does not sort.
    sort: str = ""


def per_page(params: QueryDict, name: str = "per_page", default: int = PER_PAGE) -> int:
    """Page size `name` from the query string: `default` when absent or not a number, at most MAX_PER_PAGE."""
    try:
        wanted = int(params.get(name, default))
    except ValueError:
        return default
    return min(max(wanted, 1), MAX_PER_PAGE)


def sort_links(columns: tuple[Column, ...], params: QueryDict) -> list[dict[str, str]]:
    """Per column: its header, the query string that sorts by it (toggling direction), and aria-sort."""
    current = params.get("sort", "")
    links = []
    for column in columns:
        link = {"header": column.header, "query": "", "aria_sort": "none"}
        if column.sort:
            query = params.copy()
            query.pop("page", None)
            query["sort"] = f"-{column.sort}" if current == column.sort else column.sort
            link["query"] = query.urlencode()
            if current in (column.sort, f"-{column.sort}"):
                link["aria_sort"] = "descending" if current.startswith("-") else "ascending"
        links.append(link)
    return links


def page_query(params: QueryDict, number: int) -> str:
    """The query string of page `number` with every other parameter kept."""
    query = params.copy()
    query["page"] = str(number)
    return query.urlencode()


def is_htmx(request: HttpRequest) -> bool:
    # A history restore wants the whole page, not the fragment.
    return request.headers.get("HX-Request") == "true" and "HX-History-Restore-Request" not in request.headers


def filtered_page(request: HttpRequest, filterset: FilterSet) -> Page[Any] | None:
    """The requested page of a valid filterset; None (the form shows why) when a filter is invalid."""
    if not filterset.is_valid():
        return None
    paginator = Paginator(filterset.qs, per_page(request.GET))
    return paginator.get_page(request.GET.get("page"))


def page_queries(request: HttpRequest, page: Page[Any] | None) -> dict[str, str]:
    if page is None:
        return {}
    links = {}
    if page.has_previous():
        links["previous"] = page_query(request.GET, page.previous_page_number())
    if page.has_next():
        links["next"] = page_query(request.GET, page.next_page_number())
    return links


def render_list(request: HttpRequest, template: str, fragment: str, context: dict[str, Any]) -> HttpResponse:
    status = 200 if context["page"] is not None else 400
    return render(request, fragment if is_htmx(request) else template, context, status=status)


def materialise(page: Page[_Row] | None) -> list[_Row]:
    """The page's rows as a list, fetched once (with their prefetches) so later steps reuse them."""
    if page is None:
        return []
    rows = list(page.object_list)
    page.object_list = rows
    return rows
