"""The base of every list table (django-tables2): rows come sorted, the table pages and draws them.

A list's FilterSet validates `sort` and orders the rows (the API shares it), so a table never orders its
data again: it reads `sort` only to mark the sorted column and to link each header to the other direction.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import django_tables2 as tables
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django_tables2.data import TableListData, TableQuerysetData

from core import listing


class _QuerysetRows(TableQuerysetData):  # type: ignore[misc]
    """A queryset the FilterSet has ordered already."""

    def order_by(self, aliases: Any) -> None:
        return


class _SequenceRows(TableListData):  # type: ignore[misc]
    """Any sequence with a length and slices, kept as it is (tables2 would copy it into a list), so rows
    built on demand are built for the shown page only."""

    def order_by(self, aliases: Any) -> None:
        return


class LenientPaginator(Paginator):  # type: ignore[type-arg]
    """A page number that is not a number shows the first page, one past the end the last, as
    `Paginator.get_page` does."""

    def page(self, number: int | str) -> Page[Any]:
        try:
            number = self.validate_number(number)
        except PageNotAnInteger:
            number = 1
        except EmptyPage:
            number = self.num_pages
        return super().page(number)


class ListTable(tables.Table):  # type: ignore[misc]
    """A sortable, paged list; `pager_label` names the list in the pager's aria-label."""

    pager_label = ""
    default_per_page = listing.PER_PAGE

    class Meta:
        template_name = "table.html"
        attrs = {"class": "table"}
        order_by_field = "sort"
        page_field = "page"
        per_page_field = "per_page"
        # only the columns the FilterSet sorts by say orderable=True
        orderable = False
        default = ""

    def __init__(self, data: Sequence[Any] | Any, **kwargs: Any) -> None:
        rows = _QuerysetRows(data) if TableQuerysetData.validate(data) else _SequenceRows(data)
        # order_by=(): the rows' own order stands until configure() reads `sort`
        super().__init__(rows, order_by=(), **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, view: str) -> str:
        """The URL of a view without arguments, reversed once per table."""
        if view not in self._urls:
            self._urls[view] = reverse(view)
        return self._urls[view]

    def configure(self, request: HttpRequest) -> "ListTable":
        """Mark the requested sort and take the requested page (`per_page` at most MAX_PER_PAGE)."""
        self.request = request
        self.order_by = request.GET.getlist(self.prefixed_order_by_field)
        self.paginate(
            paginator_class=LenientPaginator,
            per_page=listing.per_page(request.GET, self.prefixed_per_page_field, self.default_per_page),
            page=request.GET.get(self.prefixed_page_field) or 1,
        )
        return self

    def page_records(self) -> list[Any]:
        """The shown page's records, read once (with their prefetches) so later steps reuse them."""
        shown = self.page.object_list
        records: list[Any] = list(shown.data)
        shown.data = records
        return records


def name_column(header: str, list_view: str, **kwargs: Any) -> tables.Column:
    """The object's name, linking to its page `<list>/<pk>/` under the named list page (the list's URL
    reversed once per table, not once per row)."""

    def link(table: ListTable, record: Any) -> str:
        return f"{table.url(list_view)}{record.pk}/"

    return tables.Column(header, linkify=link, attrs={"td": {"class": "name"}}, **kwargs)


def date_text(value: datetime, shown: str = "Y-m-d H:i:s") -> str:
    """`value` in the current time zone, as the `date` filter shows it."""
    return date_format(timezone.localtime(value), shown)


def time_html(value: datetime | None, shown: str = "Y-m-d H:i:s") -> SafeString:
    """A `<time>` in the current time zone; empty for None."""
    if value is None:
        return SafeString("")
    return format_html('<time datetime="{}">{}</time>', date_text(value, "c"), date_text(value, shown))


def chips(values: Iterable[object]) -> SafeString:
    return format_html_join("", '<span class="chip">{}</span>', ((value,) for value in values))
