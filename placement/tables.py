"""How placements are shown: the list tables, the score table computed from a stored explanation, the chart.

The score table never re-runs the scheduler: every row comes from `Placement.explanation` (the
scheduler's `to_explanation()`: clusters as columns), so a page of a 10,000-cluster table costs one
JSON read, a sort of the key columns and a ScoreRow per shown row.
"""

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar, overload

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.tables import ListTable, date_text, name_column
from placement import queries
from placement.models import Placement
from placement.scheduler import columns as cluster_columns

SCORE_COLUMNS_SORTS = ("rank", "name", "total")
CHART_TOP = 20


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One candidate cluster: why it was filtered, or its raw scores, weighted contributions, total, rank."""

    name: str
    selected: bool
    filtered_by: str | None
    scores: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    rank: int | None = None

    def cells(self, prioritizers: Sequence[str]) -> list[tuple[int | None, int | None]]:
        """(raw, weighted) per prioritizer in column order; None where the cluster has no score."""
        return [(self.scores.get(name), self.contributions.get(name)) for name in prioritizers]


def explanation_columns(explanation: Mapping[str, Any]) -> Mapping[str, Any]:
    """The stored explanation's clusters as columns; an explanation stored as rows (before the next
    reschedule rewrites it) is converted, so every reader accepts both shapes."""
    clusters = explanation.get("clusters") or {}
    return clusters if isinstance(clusters, Mapping) else cluster_columns.from_rows(clusters)


def explanation_rows(explanation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stored explanation's clusters as `to_report()` rows (the API's contract), from either shape."""
    return cluster_columns.rows(explanation_columns(explanation))


class RowKey(NamedTuple):
    """The sort and filter fields of one row of the columns, and where it is."""

    position: int
    name: str
    selected: bool
    filtered_by: str | None
    total: int | None
    rank: int | None


class _Sortable(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def selected(self) -> bool: ...
    @property
    def filtered_by(self) -> str | None: ...
    @property
    def total(self) -> int | None: ...
    @property
    def rank(self) -> int | None: ...


Row = TypeVar("Row", bound=_Sortable)


@dataclass(frozen=True)
class ScoreTable:
    """The score table of one explanation, kept as columns: rows are built only when read. The placement's
    family (`Placement.family.score_table`) ranks the rows and reads its own score columns."""

    columns: Mapping[str, Any]
    ranks: Sequence[int | None]
    totals: Sequence[int | None]
    # one cluster's entry and rank -> its row
    score_row: Callable[[Mapping[str, Any], int | None], ScoreRow]

    def __len__(self) -> int:
        return len(self.ranks)

    def row(self, index: int) -> ScoreRow:
        return self.score_row(cluster_columns.row(self.columns, index), self.ranks[index])

    def keys(self) -> list[RowKey]:
        """Every row's sort and filter fields, from the columns (no ScoreRow built)."""
        names = self.columns.get("name") or []
        selected = self.columns.get("selected") or []
        reasons = self.columns.get("filteredBy") or []
        fields = zip(range(len(self)), names, selected, reasons, self.totals, self.ranks, strict=True)
        return [RowKey(*row) for row in fields]

    def top(self, count: int) -> list[ScoreRow]:
        """The rows of the `count` best ranks, by rank."""
        ranked = sort_rows([key for key in self.keys() if key.rank is not None], "rank")
        return [self.row(key.position) for key in ranked[:count]]


class ScoreRows(Sequence[ScoreRow]):
    """Rows of a ScoreTable in a given order, built when indexed: a paginator builds one page's rows."""

    def __init__(self, table: ScoreTable, keys: Sequence[RowKey]) -> None:
        self.table, self.keys = table, keys

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, index: int) -> ScoreRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[ScoreRow]: ...
    def __getitem__(self, index: int | slice) -> ScoreRow | list[ScoreRow]:
        if isinstance(index, slice):
            return [self.table.row(key.position) for key in self.keys[index]]
        return self.table.row(self.keys[index].position)

    def __iter__(self) -> Iterator[ScoreRow]:
        return (self.table.row(key.position) for key in self.keys)


def score_rows(table: ScoreTable) -> list[ScoreRow]:
    """Every cluster of the table as a ScoreRow, ranked first (by rank), then the rest by name."""
    return [table.row(key.position) for key in sort_rows(table.keys(), "rank")]


def _rank_key(row: _Sortable) -> tuple[int, int, str]:
    return (0, row.rank, row.name) if row.rank is not None else (1, 0, row.name)


def _total_key(row: _Sortable) -> tuple[int, int, str]:
    return (0, -row.total, row.name) if row.total is not None else (1, 0, row.name)


_SORT_KEYS = {"rank": _rank_key, "name": lambda row: row.name, "total": _total_key}


def sort_rows(rows: list[Row], sort: str) -> list[Row]:
    """Rows by `rank`, `name` or `total` (`-` reverses); unscored rows stay last for rank and total."""
    key = _SORT_KEYS[sort.lstrip("-")]
    ordered = sorted(rows, key=key)
    if not sort.startswith("-"):
        return ordered
    if sort == "-name":
        return ordered[::-1]
    scored = [row for row in ordered if row.rank is not None or row.total is not None]
    return scored[::-1] + ordered[len(scored) :]


def filter_rows(rows: Sequence[Row], *, name: str = "", show: str = "") -> list[Row]:
    """`name` contains; `show` = `selected`, `scored` or `filtered` (anything else: every row)."""
    shows: dict[str, Callable[[Row], bool]] = {
        "selected": lambda row: row.selected,
        "scored": lambda row: row.rank is not None,
        "filtered": lambda row: row.filtered_by is not None,
    }
    wanted: Callable[[Row], bool] = shows.get(show, lambda row: True)
    needle = name.lower()
    return [row for row in rows if wanted(row) and needle in row.name.lower()]


class _PrioritizerColumn(tables.Column):  # type: ignore[misc]
    """One prioritizer's raw score and, where the weight changes it, its weighted contribution."""

    def __init__(self, prioritizer: str, weight: int | None) -> None:
        header = prioritizer
        if weight is not None:
            header = format_html('{}<br><span class="kind">raw × {}</span>', prioritizer, weight)
        super().__init__(
            header,
            accessor="name",
            attrs={"th": {"class": "number"}, "td": {"class": "number"}},
        )
        self.prioritizer = prioritizer

    def render(self, record: ScoreRow) -> SafeString | str:
        [(raw, weighted)] = record.cells([self.prioritizer])
        if raw is None:
            return ""
        if weighted == raw:
            return str(raw)
        return format_html('{} <span class="weighted">→ {}</span>', raw, weighted)


class ScoreRowTable(ListTable):
    """The score table's page: rank, cluster, total, one column per prioritizer, why it was filtered.
    Its rows come sorted and filtered (`sort_rows`, `filter_rows`) and are built for the shown page only."""

    rank = tables.Column("Rank", attrs={"td": {"class": "number rank"}}, default="—", orderable=True)
    name = tables.Column("Cluster", attrs={"td": {"class": "name"}}, orderable=True)
    total = tables.Column("Total", attrs={"td": {"class": "number total"}}, orderable=True)
    filtered_by = tables.Column("Filtered by", attrs={"td": {"class": "reason"}})
    pager_label = "Score table"

    class Meta(ListTable.Meta):
        attrs = {"class": "table score-table", "id": "scores"}
        row_attrs = {
            "class": lambda record: " ".join(
                css for css, on in (("selected", record.selected), ("filtered", record.filtered_by)) if on
            )
        }

    def __init__(self, rows: Sequence[ScoreRow], prioritizers: Sequence[tuple[str, int | None]]) -> None:
        extra = [(f"prioritizer-{i}", _PrioritizerColumn(*p)) for i, p in enumerate(prioritizers)]
        order = ("rank", "name", "total", *(name for name, _ in extra), "filtered_by")
        super().__init__(rows, extra_columns=extra, sequence=order)

    def render_name(self, record: ScoreRow) -> SafeString:
        chip = SafeString(' <span class="chip selected-chip">selected</span>') if record.selected else ""
        return format_html("{}{}", record.name, chip)


class FixedCluster(NamedTuple):
    """One cluster a PickFixed placement lists: whether it was selected, is not eligible or not found."""

    name: str
    status: str
    reason: str


FIXED_SELECTED, FIXED_NOT_ELIGIBLE, FIXED_NOT_FOUND = "selected", "not eligible", "not found"
_FIXED_TONES = {FIXED_SELECTED: "ok", FIXED_NOT_ELIGIBLE: "failing", FIXED_NOT_FOUND: "unknown"}


class FixedClusterTable(ListTable):
    """A PickFixed placement's listed clusters, in the scheduler's order (selected, not eligible, not
    found), instead of a score table: that policy scores nothing, and every other member is only "not
    listed"."""

    name = tables.Column("Cluster", attrs={"td": {"class": "name"}})
    status = tables.Column("Status")
    reason = tables.Column("Reason", attrs={"td": {"class": "reason"}})
    pager_label = "Listed clusters"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "fixed-clusters"}
        row_attrs = {"data-status": lambda record: record.status}

    def render_status(self, value: str) -> SafeString:
        return format_html('<span class="status status-{}">{}</span>', _FIXED_TONES[value], value)


def plotly_text(value: str) -> str:
    """`value` as plotly shows it literally. Plotly reads the text of a figure (trace names, category
    labels, hover text) as a little HTML: `<a href>` makes a link, `<b>` or `<br>` restyle it. Hub objects
    name clusters, stages and prioritizers, so every such string goes through here; plotly turns the
    entities back into the characters on screen."""
    return html.escape(value, quote=False)


def chart_figure(
    title: str, axis: str, rows: Sequence[ScoreRow], prioritizers: Sequence[str], top: int = CHART_TOP
) -> dict[str, Any]:
    """A plotly stacked bar figure (JSON) of the weighted contributions of the `top` ranked clusters,
    titled and with the score axis named as the placement's family has it (`chart_title`, `chart_axis`)."""
    ranked = [row for row in rows if row.rank is not None]
    ranked.sort(key=_rank_key)
    ranked = ranked[:top]
    names = [plotly_text(row.name) for row in ranked]
    traces = [
        {
            "type": "bar",
            "name": plotly_text(prioritizer),
            "x": names,
            "y": [row.contributions.get(prioritizer, 0) for row in ranked],
        }
        for prioritizer in prioritizers
    ]
    return {
        "data": traces,
        "layout": {
            "barmode": "relative",
            "title": {"text": f"{title}, top {len(ranked)} by rank"},
            "xaxis": {"title": {"text": "cluster"}, "type": "category"},
            "yaxis": {"title": {"text": axis}},
            "legend": {"orientation": "h"},
            "margin": {"t": 48, "r": 16, "b": 96, "l": 56},
        },
    }


class PlacementTable(ListTable):
    name = name_column("Placement", "placement:placement-list", orderable=True)
    kind = tables.Column("Kind", orderable=True)
    owner = tables.Column("Owner", orderable=True)
    hub = tables.Column("Hub", accessor="hub__name", orderable=True)
    selected = tables.Column("Selected / requested", accessor="pk", attrs={"td": {"class": "number"}})
    condition = tables.Column("Condition", accessor="pk")
    changed = tables.Column("Last change", accessor="last_change", default="—", orderable=True)
    pager_label = "Placements"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "placements"}

    def render_name(self, record: Placement) -> str:
        return f"{record.namespace}/{record.name}" if record.namespace else record.name

    # tables2 hands a choice field's display text as `value`: these cells read the stored value
    def render_kind(self, record: Placement) -> str:
        return record.family.label

    def render_owner(self, record: Placement) -> SafeString:
        return owner_cell(record.owner)

    def render_selected(self, record: "queries.PlacementForList") -> str:
        return f"{record.family.selected_count(record)} / {record.family.requested(record)}"

    def render_condition(self, record: Placement) -> SafeString:
        condition = queries.condition(record)
        if condition is None:
            return SafeString('<span class="empty">not scheduled yet</span>')
        tone = "ok" if condition.get("status") == "True" else "failing"
        return format_html(
            '<span class="status status-{}" title="{}">{}</span>',
            tone,
            condition.get("message", ""),
            condition.get("reason") or condition.get("status"),
        )

    def render_changed(self, value: datetime) -> str:
        return date_text(value)


def owner_cell(owner: str) -> SafeString:
    """The owner (dashboard or hub) as a chip styled by owner."""
    return format_html('<span class="owner owner-{}">{}</span>', owner, owner)
