"""The base of every list table (django-tables2): rows come sorted, the table pages and draws them.

A list's FilterSet validates `sort` and orders the rows (the API shares it), so a table never orders its
data again: it reads `sort` only to mark the sorted column and to link each header to the other direction.
"""

import functools
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import django_tables2 as tables
from django.core.exceptions import FieldDoesNotExist
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db import models
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.formats import localize
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import template_localtime  # type: ignore[attr-defined]  # not in the stubs
from django_tables2 import utils as tables2_utils
from django_tables2.columns.base import BoundColumn
from django_tables2.data import TableListData, TableQuerysetData
from django_tables2.rows import BoundRow
from django_tables2.utils import Accessor

from core import listing

_inspect_signature = tables2_utils.signature


@functools.lru_cache(maxsize=4096)
def _signature_of(function: Any, bound: bool) -> tuple[tuple[str, ...], str | None]:
    # the parameters of a bound method are those of its function without the first (self)
    names, keywords = _inspect_signature(function)
    return (names[1:] if bound else names), keywords


def _signature(fn: Any) -> tuple[tuple[str, ...], str | None]:
    function = getattr(fn, "__func__", None)
    if function is not None:
        return _signature_of(function, True)
    try:
        return _signature_of(fn, False)
    except TypeError:  # an unhashable callable
        return _inspect_signature(fn)  # type: ignore[no-any-return]


# tables2 asks for the parameters of a render or link function on every cell (`inspect.signature`, about
# 15 µs each: a quarter of a 500-row page's time). They depend on the function alone, so they are read
# once per function; the answer is the same as tables2's own.
tables2_utils.signature = _signature


class _QuerysetRows(TableQuerysetData):  # type: ignore[misc]
    """A queryset the FilterSet has ordered already, counted up to its table's `count_cap`."""

    def order_by(self, aliases: Any) -> None:
        return

    def __len__(self) -> int:
        cap = self.table.count_cap
        if cap is not None and getattr(self, "_length", None) is None:
            # COUNT over `LIMIT cap + 1`, in any order: a bounded count, which still tells whether there
            # are more
            self._length = self.data.order_by()[: cap + 1].count()
        length: int = super().__len__()
        return length


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
    # the most rows a list counts (None: every row); beyond it the count reads "N+" and the pages go as
    # far as the counted rows, so a list of any size costs a bounded count
    count_cap: int | None = None

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

    @property
    def count_capped(self) -> bool:
        """Whether there are more rows than the list counted."""
        return self.count_cap is not None and self.paginator.count > self.count_cap

    @property
    def count_text(self) -> str:
        """The number of rows, or "10,000+" past the cap."""
        return f"{self.count_cap:,}+" if self.count_capped else str(self.paginator.count)

    def shown_rows(self) -> Iterator[tuple[BoundRow, SafeString]]:
        """The shown page's rows, each with its cells as HTML, drawn as tables2's `BoundRow.get_cell` draws
        them and shown as its template shows them. What depends only on the column (its class, render
        function and parameters, accessor, link) is worked out once per draw instead of once per cell,
        and a row's cells are joined here rather than looped over in the template: on a 500-row page
        that per-cell work cost more than the cells themselves."""
        cells = [_Cells(self, column) for column in self.columns]
        for row in self.paginated_rows:
            yield row, SafeString("".join([cell.html(row) for cell in cells]))

    def page_records(self) -> list[Any]:
        """The shown page's records, read once (with their prefetches) so later steps reuse them."""
        shown = self.page.object_list
        records: list[Any] = list(shown.data)
        shown.data = records
        return records


def name_column(
    header: str, list_view: str, *, key: str = "pk", css: str = "name", **kwargs: Any
) -> tables.Column:
    """An object's name, linking to its page `<list>/<key>/` under the named list page (the list's URL
    reversed once per table, not once per row). `key` reads the object's id from the row: `pk` for the
    row itself, `hub_id` for the hub a row belongs to (with `accessor="hub__name"`)."""
    read_key = Accessor(key)

    def link(table: ListTable, record: Any) -> str:
        return f"{table.url(list_view)}{read_key.resolve(record)}/"

    return tables.Column(header, linkify=link, attrs={"td": {"class": css}}, **kwargs)


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


class _Cells:
    """One column's cells, with tables2's rules: the value through the accessor (a choices field shows its
    display text), the column's default for an empty value, the render function with the arguments it
    names, then the column's link."""

    def __init__(self, table: ListTable, bound: BoundColumn) -> None:
        self.table, self.bound, self.column = table, bound, bound.column
        css = bound.attrs["td"].get("class")
        self.opening = format_html('<td class="{}">', css) if css else SafeString("<td>")
        self.accessor = Accessor(bound.accessor)
        self.render = bound.render
        self.names, self.keywords = tables2_utils.signature(self.render)
        # whether the accessor ends at a field with choices: the same for every record of a list
        self.display: bool | None = None

    def _shows_display(self, record: Any) -> bool:
        if self.display is None:
            penultimate, remainder = self.accessor.penultimate(record)
            self.display = False
            if isinstance(penultimate, models.Model):
                try:
                    field = self.accessor.get_field(record)
                except FieldDoesNotExist:
                    field = None
                has_display = hasattr(penultimate, f"get_{remainder}_display")
                self.display = bool(getattr(field, "choices", ())) and has_display
        return self.display

    def draw(self, row: BoundRow) -> Any:
        record = row.record
        if self._shows_display(record):
            penultimate, remainder = self.accessor.penultimate(record)
            value = getattr(penultimate, f"get_{remainder}_display")()
        else:
            try:
                value = self.accessor.resolve(record)
            except Exception:  # tables2 shows the column's default for a value it cannot read
                value = None
        if value in self.column.empty_values:
            return self.bound.default
        arguments = {
            "value": value,
            "record": record,
            "column": self.column,
            "bound_column": self.bound,
            "bound_row": row,
            "table": self.table,
        }
        wanted = arguments if self.keywords else {name: arguments[name] for name in self.names}
        content = self.render(**wanted)
        return self.bound.link(content, **arguments) if self.bound.link else content

    def html(self, row: BoundRow) -> str:
        """The cell as the template shows a value: localised and escaped unless marked safe."""
        return f"{self.opening}{conditional_escape(localize(template_localtime(self.draw(row))))}</td>"
