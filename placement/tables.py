"""How placements are shown: the list tables, the score table computed from a stored explanation, the charts.

The score table never re-runs the scheduler: every row comes from the placement's stored ClusterRecord
(placement.explanations), so a page of a 10,000-cluster table costs one unpacking of its arrays, a numpy
sort of the key columns and a ScoreRow per shown row.
"""

import heapq
import html
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, overload

import django_tables2 as tables
import numpy as np
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.tables import ListTable, date_text, name_column
from inventory.tables import cluster_link, hub_column
from placement import queries
from placement.history import SelectionPoint
from placement.models import Placement
from placement.scheduler.record import ClusterRecord, Ints

SCORE_COLUMNS_SORTS = ("rank", "name", "total")
# The score chart's bars: the best ranked selected clusters, then the best ranked clusters left out, so
# a placement over 10,000 clusters still draws a chart one can read.
CHART_SELECTED = 30
CHART_OTHERS = 10
# Tick labels and legend entries longer than these are cut (the hover shows the whole name).
CHART_LABEL = 24
CHART_LEGEND = 40
# The height in pixels of the score chart's plot area, without its margins.
CHART_PLOT_HEIGHT = 300
# Roughly the width in pixels of one character of plotly's 12 px tick and legend font.
CHART_CHAR_PX = 7


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


class _Sortable(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def selected(self) -> bool: ...
    @property
    def rank(self) -> int | None: ...


Row = TypeVar("Row", bound=_Sortable)


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """The score table of one run's ClusterRecord: sorted and filtered on its arrays, rows built only when
    read. The placement's family (`Placement.family.score_table`) ranks the rows and reads its own score
    columns; a row has a total exactly when it has a rank."""

    record: ClusterRecord
    ranks: np.ndarray  # int64, 0 where the cluster was not ranked
    totals: Ints
    # one cluster's entry and rank -> its row
    score_row: Callable[[Mapping[str, Any], int | None], ScoreRow]

    def __len__(self) -> int:
        return len(self.record)

    @property
    def scored_count(self) -> int:
        return int(np.count_nonzero(self.ranks))

    def row(self, index: int) -> ScoreRow:
        return self.score_row(self.record.row(index), int(self.ranks[index]) or None)

    def order(self, sort: str) -> np.ndarray:
        """Row positions by `rank`, `name` or `total` (`-` reverses); unscored rows stay last, by name,
        for rank and total."""
        key, descending = sort.lstrip("-"), sort.startswith("-")
        if key == "name":
            order = self.record.name_order
            return order[::-1] if descending else order
        if key == "rank":
            # ranks are distinct: only the unranked rows need their names to break ties
            ranked = self.ranks > 0
            positions = np.flatnonzero(ranked)
            first = positions[np.argsort(self.ranks[positions], kind="stable")]
            rest = np.flatnonzero(~ranked)
            rest = rest[np.argsort(self.record.name_keys(rest), kind="stable")]
        else:
            totals = self.totals
            order = np.lexsort((self.record.name_rank, -totals.values, ~totals.present))
            first, rest = np.split(order, [int(np.count_nonzero(totals.present))])
        return np.concatenate([first[::-1] if descending else first, rest])

    def shown(self, positions: np.ndarray, *, name: str = "", show: str = "") -> np.ndarray:
        """The positions whose name contains `name` (any case) and that `show` keeps: `selected`,
        `scored` or `filtered` (anything else: every row)."""
        keep = {
            "selected": self.record.selected,
            "scored": self.ranks > 0,
            "filtered": self.record.reasons.codes >= 0,
        }.get(show, np.ones(len(self), dtype=bool))
        if name:
            needle = name.lower()
            names = self.record.names
            keep = keep & np.fromiter((needle in n.lower() for n in names), dtype=bool, count=len(names))
        shown: np.ndarray = positions[keep[positions]]
        return shown

    def chart_pick(self, selected: int = CHART_SELECTED, others: int = CHART_OTHERS) -> "ChartPick[ScoreRow]":
        """The score chart's rows (`chart_pick`), picked on the arrays and built for the picked rows only."""
        ranked = self.ranks > 0
        chosen = self.record.selected & ranked
        best = self._best(np.flatnonzero(chosen), selected)
        best_rest = self._best(np.flatnonzero(ranked & ~chosen), others)
        not_shown = int(np.count_nonzero(ranked)) - len(best) - len(best_rest)
        return ChartPick([self.row(p) for p in best], [self.row(p) for p in best_rest], not_shown)

    def _best(self, positions: np.ndarray, count: int) -> list[int]:
        ordered: list[int] = positions[np.argsort(self.ranks[positions], kind="stable")][:count].tolist()
        return ordered


class ScoreRows(Sequence[ScoreRow]):
    """Rows of a ScoreTable at the given positions, built when indexed: a paginator builds one page's rows."""

    def __init__(self, table: ScoreTable, positions: np.ndarray) -> None:
        self.table, self.positions = table, positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, index: int) -> ScoreRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[ScoreRow]: ...
    def __getitem__(self, index: int | slice) -> ScoreRow | list[ScoreRow]:
        if isinstance(index, slice):
            return [self.table.row(p) for p in self.positions[index].tolist()]
        return self.table.row(int(self.positions[index]))

    def __iter__(self) -> Iterator[ScoreRow]:
        return (self.table.row(p) for p in self.positions.tolist())


def _rank_key(row: _Sortable) -> tuple[int, int, str]:
    return (0, row.rank, row.name) if row.rank is not None else (1, 0, row.name)


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

    def __init__(
        self, rows: Sequence[ScoreRow], prioritizers: Sequence[tuple[str, int | None]], placement: Placement
    ) -> None:
        extra = [(f"prioritizer-{i}", _PrioritizerColumn(*p)) for i, p in enumerate(prioritizers)]
        order = ("rank", "name", "total", *(name for name, _ in extra), "filtered_by")
        super().__init__(rows, extra_columns=extra, sequence=order)
        self.placement = placement

    def render_name(self, record: ScoreRow) -> SafeString:
        chip = SafeString(' <span class="chip selected-chip">selected</span>') if record.selected else ""
        name = cluster_link(self.placement.hub_id, self.placement.family.cluster_kind, record.name)
        return format_html("{}{}", name, chip)


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

    def __init__(self, rows: Sequence[FixedCluster], placement: Placement) -> None:
        super().__init__(rows)
        self.placement = placement

    def render_name(self, record: FixedCluster) -> SafeString:
        if record.status == FIXED_NOT_FOUND:  # no such member: nothing to link to
            return format_html("{}", record.name)
        return cluster_link(self.placement.hub_id, self.placement.family.cluster_kind, record.name)

    def render_status(self, value: str) -> SafeString:
        return format_html('<span class="status status-{}">{}</span>', _FIXED_TONES[value], value)


def plotly_text(value: str) -> str:
    """`value` as plotly shows it literally. Plotly reads the text of a figure (trace names, category
    labels, hover text) as a little HTML: `<a href>` makes a link, `<b>` or `<br>` restyle it. Hub objects
    name clusters, stages and prioritizers, so every such string goes through here; plotly turns the
    entities back into the characters on screen."""
    return html.escape(value, quote=False)


@dataclass(frozen=True)
class ChartPick(Generic[Row]):
    """The bars of the score chart: selected clusters and the best of the rest, each by rank, and how many
    scored clusters are left out."""

    selected: list[Row]
    others: list[Row]
    not_shown: int


def chart_pick(
    rows: Iterable[Row], selected: int = CHART_SELECTED, others: int = CHART_OTHERS
) -> ChartPick[Row]:
    """The `selected` best ranked selected rows and the `others` best ranked rows not selected. One pass
    splits the ranked rows and a bounded heap keeps the best of each, so 10,000 rows are never sorted."""
    chosen: list[Row] = []
    rest: list[Row] = []
    for row in rows:
        if row.rank is not None:
            (chosen if row.selected else rest).append(row)
    best = heapq.nsmallest(selected, chosen, key=_rank_key)
    best_rest = heapq.nsmallest(others, rest, key=_rank_key)
    return ChartPick(best, best_rest, len(chosen) + len(rest) - len(best) - len(best_rest))


def short_label(value: str, length: int = CHART_LABEL) -> str:
    """`value` cut to `length` characters in its middle, an ellipsis marking the cut: the names of one fleet
    often share their start and differ at their end."""
    if len(value) <= length:
        return value
    head = (length - 1) // 2
    return f"{value[:head]}…{value[len(value) - (length - 1 - head) :]}"


def chart_summary(pick: ChartPick[ScoreRow]) -> str:
    """What the score chart shows, in words: its text alternative and its note."""
    text = f"{len(pick.selected)} selected cluster{'s' if len(pick.selected) != 1 else ''}"
    if pick.others:
        text += f" and the best {len(pick.others)} not selected"
    if pick.not_shown:
        text += f"; {pick.not_shown:,} more not shown"
    return text


def chart_figure(
    title: str, axis: str, pick: ChartPick[ScoreRow], prioritizers: Sequence[str]
) -> dict[str, Any]:
    """A plotly stacked bar figure (JSON) of the weighted contributions of the picked clusters, selected
    first, titled and with the score axis named as the placement's family has it (`chart_title`,
    `chart_axis`); `summary` is what it shows, in words.

    The legend stands right of the plot, its entries cut to CHART_LEGEND characters, and the tick labels
    are cut to CHART_LABEL characters and slanted, with margins sized for the longest of each, so the
    legend never covers the axis labels."""
    rows = [*pick.selected, *pick.others]
    names = [plotly_text(row.name) for row in rows]
    chosen = ["selected" if row.selected else "not selected" for row in rows]
    traces = [
        {
            "type": "bar",
            "name": plotly_text(short_label(prioritizer, CHART_LEGEND)),
            "meta": plotly_text(prioritizer),
            "x": names,
            "y": [row.contributions.get(prioritizer, 0) for row in rows],
            "customdata": chosen,
            "hovertemplate": "%{x} (%{customdata})<br>%{meta}: %{y}<extra></extra>",
        }
        for prioritizer in prioritizers
    ]
    longest_name = max((len(short_label(row.name)) for row in rows), default=0)
    longest_legend = max((len(short_label(name, CHART_LEGEND)) for name in prioritizers), default=0)
    # slanted by 30 degrees a label takes half its length downwards, then the axis title; upright
    # (narrow bars) the axis grows its margin itself (automargin)
    bottom = 48 + math.ceil(CHART_CHAR_PX * longest_name / 2)
    layout: dict[str, Any] = {
        "barmode": "relative",
        "title": {"text": f"{title}: {chart_summary(pick)}", "x": 0, "xanchor": "left", "font": {"size": 14}},
        "xaxis": {
            "title": {"text": "cluster"},
            "type": "category",
            "tickmode": "array",
            "tickvals": names,
            "ticktext": [plotly_text(short_label(row.name)) for row in rows],
            # plotly slants the labels as far as they need not to run into each other
            "tickangle": "auto",
            "automargin": True,
        },
        "yaxis": {"title": {"text": axis}, "automargin": True},
        "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"},
        "margin": {
            # the title, then room for the note over the line between selected and not
            "t": 60,
            # the legend's swatch and gap, then its text
            "r": 56 + CHART_CHAR_PX * longest_legend,
            "b": bottom,
            "l": 64,
        },
        # the plot keeps its height however long the labels under it are
        "height": CHART_PLOT_HEIGHT + 60 + bottom,
    }
    if pick.selected and pick.others:
        # a dotted line between the selected clusters and the best of the rest
        edge = len(pick.selected) - 0.5
        line = {"type": "line", "xref": "x", "yref": "paper", "x0": edge, "x1": edge, "y0": 0, "y1": 1}
        layout["shapes"] = [line | {"line": {"dash": "dot", "color": "#6b6b6b", "width": 1}}]
        layout["annotations"] = [
            {
                "text": "not selected →",
                "xref": "x",
                "yref": "paper",
                "x": edge,
                "y": 1,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 11, "color": "#6b6b6b"},
            }
        ]
    return {"data": traces, "layout": layout, "summary": chart_summary(pick)}


def history_summary(points: Sequence[SelectionPoint]) -> str:
    """The selected count over time in words: the chart's text alternative and caption."""
    if not points:
        return "No decisions recorded yet."
    counts = [point.selected for point in points]
    last = points[-1]
    text = f"Selected clusters after each of the last {len(points)} changes: now {last.selected}"
    if last.requested is not None:
        text += f" of {last.requested} requested"
    return f"{text}; lowest {min(counts)}, highest {max(counts)}."


def history_figure(points: Sequence[SelectionPoint], now: datetime) -> dict[str, Any]:
    """A plotly step-line figure (JSON) of the selected count after each history entry, held until now,
    and of the requested count where the policy has one; `summary` says it in words."""
    times = [point.at.isoformat() for point in points] + ([now.isoformat()] if points else [])
    held = [*points, *points[-1:]]
    step: dict[str, Any] = {"type": "scatter", "mode": "lines+markers", "line": {"shape": "hv"}, "x": times}
    traces = [step | {"name": "selected", "y": [point.selected for point in held]}]
    if any(point.requested is not None for point in points):
        requested = [point.requested for point in held]
        traces.append(step | {"name": "requested", "y": requested, "line": {"shape": "hv", "dash": "dash"}})
    return {
        "data": traces,
        "layout": {
            "xaxis": {"type": "date", "title": {"text": "time"}, "automargin": True},
            "yaxis": {"title": {"text": "clusters"}, "rangemode": "tozero", "automargin": True},
            # above the plot, clear of both axes' labels
            "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"},
            "margin": {"t": 40, "r": 16, "b": 56, "l": 56},
            "height": 300,
        },
        "summary": history_summary(points),
    }


class PlacementTable(ListTable):
    name = name_column("Placement", "placement:placement-list", orderable=True)
    kind = tables.Column("Kind", orderable=True)
    owner = tables.Column("Owner", orderable=True)
    hub = hub_column(orderable=True)
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
        return f"{record.selected_count} / {record.family.requested(record)}"

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
