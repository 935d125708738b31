"""How placements are shown: list columns, the score table computed from a stored explanation, the chart.

The score table never re-runs the scheduler: every row comes from `Placement.explanation` (the
scheduler's `to_explanation()`: clusters as columns), so a page of a 10,000-cluster table costs one
JSON read, a sort of the key columns and a ScoreRow per shown row.
"""

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar, overload

from core.listing import Column
from placement.scheduler import columns as cluster_columns
from placement.summary import FLEET_CRP

PLACEMENT_COLUMNS = (
    Column("Placement", "name"),
    Column("Kind", "kind"),
    Column("Owner", "owner"),
    Column("Hub", "hub"),
    Column("Selected / requested"),
    Column("Condition"),
    Column("Last change", "changed"),
)

SCORE_COLUMNS_SORTS = ("rank", "name", "total")
CHART_TOP = 20
# Fleet has no weights: its two score columns are already weighted sums (affinity terms) or spread.
AFFINITY, TOPOLOGY = "Affinity", "TopologySpread"


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


def prioritizer_columns(kind: str, explanation: Mapping[str, Any]) -> list[tuple[str, int | None]]:
    """(prioritizer, weight) in name order; Fleet's affinity and spread scores carry no weight."""
    if kind == FLEET_CRP:
        return [(AFFINITY, None), (TOPOLOGY, None)]
    return sorted((explanation.get("weights") or {}).items())


def ocm_row(cluster: Mapping[str, Any], weights: Mapping[str, int]) -> ScoreRow:
    """A row from one OCM `explain()` / report cluster entry."""
    scores = cluster.get("scores") or {}
    return ScoreRow(
        name=cluster["name"],
        selected=bool(cluster.get("selected")),
        filtered_by=cluster.get("filteredBy"),
        scores=dict(scores),
        # upstream adds raw × weight per prioritizer; duplicate AddOn configs share one summed weight
        contributions={name: raw * weights.get(name, 0) for name, raw in scores.items()},
        total=cluster.get("total"),
        rank=cluster.get("rank"),
    )


def fleet_row(cluster: Mapping[str, Any], rank: int | None) -> ScoreRow:
    """A row from one Fleet explanation entry; `rank` is None for a cluster that was not scored."""
    scores = {}
    if rank is not None:
        scores = {AFFINITY: cluster["affinityScore"], TOPOLOGY: cluster["topologySpreadScore"]}
    return ScoreRow(
        name=cluster["name"],
        selected=bool(cluster.get("selected")),
        filtered_by=cluster.get("filteredBy"),
        scores=scores,
        contributions=dict(scores),
        total=sum(scores.values()) if scores else None,
        rank=rank,
    )


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
    """The score table of one explanation, kept as columns: rows are built only when read."""

    kind: str
    columns: Mapping[str, Any]
    weights: Mapping[str, int]
    ranks: Sequence[int | None]
    totals: Sequence[int | None]

    @classmethod
    def of(cls, kind: str, explanation: Mapping[str, Any]) -> "ScoreTable":
        columns = explanation_columns(explanation)
        if kind != FLEET_CRP:
            count = cluster_columns.row_count(columns)
            ocm_ranks = columns.get("rank") or [None] * count
            weights = explanation.get("weights") or {}
            return cls(kind, columns, weights, ocm_ranks, columns.get("total") or ocm_ranks)
        names, reasons = columns.get("name") or [], columns.get("filteredBy") or []
        affinity, topology = columns.get("affinityScore") or [], columns.get("topologySpreadScore") or []
        scored = [i for i in range(len(names)) if reasons[i] is None and affinity[i] is not None]
        # PickN's order: (topology, affinity) descending, ties to the larger name, as KubeFleet picks
        scored.sort(key=lambda i: (topology[i], affinity[i], names[i]), reverse=True)
        ranks: list[int | None] = [None] * len(names)
        totals: list[int | None] = [None] * len(names)
        for rank, i in enumerate(scored, 1):
            ranks[i], totals[i] = rank, affinity[i] + topology[i]
        return cls(kind, columns, {}, ranks, totals)

    def __len__(self) -> int:
        return len(self.ranks)

    def row(self, index: int) -> ScoreRow:
        cluster = cluster_columns.row(self.columns, index)
        if self.kind == FLEET_CRP:
            return fleet_row(cluster, self.ranks[index])
        return ocm_row(cluster, self.weights)

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


def score_rows(kind: str, explanation: Mapping[str, Any]) -> list[ScoreRow]:
    """Every cluster of the explanation as a ScoreRow, ranked first (by rank), then the rest by name."""
    table = ScoreTable.of(kind, explanation)
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


def plotly_text(value: str) -> str:
    """`value` as plotly shows it literally. Plotly reads the text of a figure (trace names, category
    labels, hover text) as a little HTML: `<a href>` makes a link, `<b>` or `<br>` restyle it. Hub objects
    name clusters, stages and prioritizers, so every such string goes through here; plotly turns the
    entities back into the characters on screen."""
    return html.escape(value, quote=False)


def chart_figure(
    kind: str, rows: Sequence[ScoreRow], prioritizers: Sequence[str], top: int = CHART_TOP
) -> dict[str, Any]:
    """A plotly stacked bar figure (JSON) of the weighted contributions of the `top` ranked clusters."""
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
    title = "Affinity and topology spread scores" if kind == FLEET_CRP else "Weighted score contributions"
    return {
        "data": traces,
        "layout": {
            "barmode": "relative",
            "title": {"text": f"{title}, top {len(ranked)} by rank"},
            "xaxis": {"title": {"text": "cluster"}, "type": "category"},
            "yaxis": {"title": {"text": "score × weight" if kind != FLEET_CRP else "score"}},
            "legend": {"orientation": "h"},
            "margin": {"t": 48, "r": 16, "b": 96, "l": 56},
        },
    }
