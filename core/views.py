"""The list view every list page uses: a FilterSet parses the query, a ListTable shows its page.

A filter the FilterSet refuses answers 400 with the form showing why (no table); htmx requests get only the
list's fragment (core.listing).
"""

from collections.abc import Callable, Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_filters import FilterSet

from core import listing
from core.requests import HtmxRequest
from core.tables import ListTable

# What a list adds to its shown page's rows (counts, links read in one query per page), and any context
# those rows give.
RowsStep = Callable[[list[Any]], Mapping[str, Any] | None]


def table_context(
    request: HttpRequest,
    filterset: FilterSet,
    table_class: type[ListTable],
    rows: RowsStep | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The filter form and the requested page of the table (None when a filter is invalid); `rows` runs
    on the shown page's records; `extra` joins the context (it may replace `hidden_filters`)."""
    context: dict[str, Any] = {"filterset": filterset, "table": None, "hidden_filters": ["hub_id"]}
    if filterset.is_valid():
        table = context["table"] = table_class(filterset.qs).configure(request)
        if rows is not None:
            context |= rows(table.page_records()) or {}
    return context | dict(extra or {})


def table_page(
    request: HtmxRequest,
    filterset: FilterSet,
    table_class: type[ListTable],
    template: str,
    fragment: str,
    rows: RowsStep | None = None,
    extra: Mapping[str, Any] | None = None,
) -> HttpResponse:
    """A list page: the whole page, or only `fragment` for htmx; 400 when a filter is invalid."""
    return render_table(
        request, template, fragment, table_context(request, filterset, table_class, rows, extra)
    )


def render_table(request: HtmxRequest, template: str, fragment: str, context: dict[str, Any]) -> HttpResponse:
    """The page of a `table_context`, or its fragment for htmx; 400 when a filter is invalid."""
    status = 200 if context["table"] is not None else 400
    chosen = fragment if listing.wants_fragment(request) else template
    response = render(request, chosen, context, status=status)
    patch_vary_headers(response, listing.HTMX_HEADERS)
    return response
