"""How placements are shown: list columns, the score table computed from a stored explanation, the chart.

The score table never re-runs the scheduler: every row comes from `Placement.explanation` (the
scheduler's `to_report()`), so a page of a 10,000-cluster table costs one JSON read and a sort.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleetui.listing import Column
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


def _fleet_rows(clusters: Sequence[Mapping[str, Any]]) -> list[ScoreRow]:
    scored = [c for c in clusters if c.get("filteredBy") is None and c.get("affinityScore") is not None]
    # PickN's order: (topology, affinity) descending, ties to the larger name, as KubeFleet picks
    scored.sort(key=lambda c: (c["topologySpreadScore"], c["affinityScore"], c["name"]), reverse=True)
    ranks = {c["name"]: rank for rank, c in enumerate(scored, 1)}
    return [fleet_row(cluster, ranks.get(cluster["name"])) for cluster in clusters]


def score_rows(kind: str, explanation: Mapping[str, Any]) -> list[ScoreRow]:
    """Every cluster of the explanation as a ScoreRow, ranked first (by rank), then the rest by name."""
    clusters = explanation.get("clusters") or []
    if kind == FLEET_CRP:
        rows = _fleet_rows(clusters)
    else:
        weights = explanation.get("weights") or {}
        rows = [ocm_row(cluster, weights) for cluster in clusters]
    return sort_rows(rows, "rank")


def _rank_key(row: ScoreRow) -> tuple[int, int, str]:
    return (0, row.rank, row.name) if row.rank is not None else (1, 0, row.name)


def _total_key(row: ScoreRow) -> tuple[int, int, str]:
    return (0, -row.total, row.name) if row.total is not None else (1, 0, row.name)


_SORT_KEYS = {"rank": _rank_key, "name": lambda row: row.name, "total": _total_key}


def sort_rows(rows: list[ScoreRow], sort: str) -> list[ScoreRow]:
    """Rows by `rank`, `name` or `total` (`-` reverses); unscored rows stay last for rank and total."""
    key = _SORT_KEYS[sort.lstrip("-")]
    ordered = sorted(rows, key=key)
    if not sort.startswith("-"):
        return ordered
    if sort == "-name":
        return ordered[::-1]
    scored = [row for row in ordered if row.rank is not None or row.total is not None]
    return scored[::-1] + ordered[len(scored):]


def filter_rows(rows: Sequence[ScoreRow], *, name: str = "", show: str = "") -> list[ScoreRow]:
    """`name` contains; `show` = `selected`, `scored` or `filtered` (anything else: every row)."""
    wanted = {
        "selected": lambda row: row.selected,
        "scored": lambda row: row.rank is not None,
        "filtered": lambda row: row.filtered_by is not None,
    }.get(show, lambda row: True)
    needle = name.lower()
    return [row for row in rows if wanted(row) and needle in row.name.lower()]


def chart_figure(
    kind: str, rows: Sequence[ScoreRow], prioritizers: Sequence[str], top: int = CHART_TOP
) -> dict[str, Any]:
    """A plotly stacked bar figure (JSON) of the weighted contributions of the `top` ranked clusters."""
    ranked = [row for row in rows if row.rank is not None]
    ranked.sort(key=_rank_key)
    ranked = ranked[:top]
    names = [row.name for row in ranked]
    traces = [
        {
            "type": "bar",
            "name": prioritizer,
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
