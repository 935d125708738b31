"""How placements are shown: the list tables, the score table computed from a stored explanation, the chart.

The score table never re-runs the scheduler: every row comes from `Placement.explanation` (the
scheduler's `to_explanation()`: clusters as columns), so a page of a 10,000-cluster table costs one
JSON read, a sort of the key columns and a ScoreRow per shown row.
"""

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol, TypeVar, overload
from urllib.parse import urlencode

import django_tables2 as tables
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.tables import ListTable, date_text, name_column
from placement import queries
from placement.models import Placement, StagedUpdateRun, StagedUpdateStrategy
from placement.scheduler import columns as cluster_columns
from placement.scheduler.timeutil import DurationError, format_time, parse_go_duration, parse_time
from placement.summary import FLEET_CRP

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


# --- staged update runs (placement.rollouts) -------------------------------------------------------

# How a stage, cluster or task is doing, as the run page words it (also its CSS status class).
NOT_STARTED, UPDATING, WAITING = "not started", "updating", "waiting"
STOPPING, STOPPED, SUCCEEDED, SKIPPED, FAILED = "stopping", "stopped", "succeeded", "skipped", "failed"
ELAPSED, APPROVED = "elapsed", "approved"
# the CSS status class (status-<tone>) of each state, and of run conditions by status and reason
STATE_TONES = {
    SUCCEEDED: "ok",
    SKIPPED: "ok",
    ELAPSED: "ok",
    APPROVED: "ok",
    FAILED: "failing",
    UPDATING: "running",
    WAITING: "running",
    STOPPING: "running",
    STOPPED: "never",
    NOT_STARTED: "never",
}
FAILURE_REASONS = frozenset({"UpdateRunFailed", "UpdateRunInitializedFailed", "UpdateRunStuck"})
_STAGE_WAITING_REASONS = {
    "StageUpdatingWaiting": WAITING,
    "StageUpdatingStopping": STOPPING,
    "StageUpdatingStopped": STOPPED,
}


def find_condition(holder: Mapping[str, Any] | None, kind: str) -> Mapping[str, Any] | None:
    """The condition of type `kind` in `holder["conditions"]`, or None."""
    return next((c for c in (holder or {}).get("conditions") or () if c.get("type") == kind), None)


def _true(holder: Mapping[str, Any] | None, kind: str) -> bool:
    return (find_condition(holder, kind) or {}).get("status") == "True"


def _at(condition: Mapping[str, Any] | None) -> datetime | None:
    return parse_time((condition or {}).get("lastTransitionTime"))


def condition_tone(condition: Mapping[str, Any] | None) -> str:
    """ok (True), failing (False for a failure), running (False otherwise: waiting, stopped...), or ""."""
    if condition is None:
        return ""
    if condition.get("reason") in FAILURE_REASONS:
        return "failing"
    return "ok" if condition.get("status") == "True" else "running"


@dataclass(frozen=True)
class RunSummary:
    """A run's three conditions and the stage it works on, for lists and headers."""

    initialized: Mapping[str, Any] | None
    progressing: Mapping[str, Any] | None
    succeeded: Mapping[str, Any] | None
    current_stage: str

    @property
    def chips(self) -> list[tuple[str, Mapping[str, Any] | None, str, str]]:
        """(type, condition, tone, short reason) of Initialized, Progressing and Succeeded, in that order;
        the short reason drops the "UpdateRun" every run reason starts with."""
        named = (
            ("Initialized", self.initialized),
            ("Progressing", self.progressing),
            ("Succeeded", self.succeeded),
        )
        return [
            (kind, c, condition_tone(c), str((c or {}).get("reason", "")).removeprefix("UpdateRun"))
            for kind, c in named
        ]

    @classmethod
    def of(cls, status: Mapping[str, Any]) -> "RunSummary":
        return cls(
            find_condition(status, "Initialized"),
            find_condition(status, "Progressing"),
            find_condition(status, "Succeeded"),
            current_stage(status),
        )

    @property
    def finished(self) -> bool:
        """Succeeded (True or False) or dead at initialisation: nothing happens to it any more."""
        failed_init = (self.initialized or {}).get("status") == "False"
        return failed_init or (self.succeeded or {}).get("status") in ("True", "False")

    @property
    def started(self) -> bool:
        return self.progressing is not None or self.succeeded is not None


def current_stage(status: Mapping[str, Any]) -> str:
    """The first stage that has not succeeded (the delete stage after the others); "" when none is left."""
    stages = [*(status.get("stagesStatus") or ()), status.get("deletionStageStatus")]
    return next((s.get("stageName", "") for s in stages if s is not None and not _true(s, "Succeeded")), "")


class _Toned:
    state: str

    @property
    def tone(self) -> str:
        return STATE_TONES.get(self.state, "never")


@dataclass(frozen=True)
class ClusterRow(_Toned):
    name: str
    state: str
    started_at: datetime | None = None
    finished_at: datetime | None = None
    message: str = ""


def duration_text(value: timedelta | None) -> str:
    """ "1h 2m 3s" (units that are 0 left out, "0s" for nothing); "" for None."""
    if value is None:
        return ""
    seconds = int(value.total_seconds())
    parts = [(seconds // 3600, "h"), (seconds // 60 % 60, "m"), (seconds % 60, "s")]
    return " ".join(f"{amount}{unit}" for amount, unit in parts if amount) or "0s"


@dataclass(frozen=True)
class TaskRow(_Toned):
    """A before- or after-stage task: an approval (its request and that request's state) or a TimedWait."""

    when: str
    type: str
    state: str
    request_name: str = ""
    request_state: str = ""
    wait_time: timedelta | None = None
    remaining: timedelta | None = None

    @property
    def wait_text(self) -> str:
        return duration_text(self.wait_time)

    @property
    def remaining_text(self) -> str:
        return duration_text(self.remaining)


@dataclass(frozen=True)
class StageRow(_Toned):
    name: str
    state: str
    started_at: datetime | None
    finished_at: datetime | None
    clusters: tuple[ClusterRow, ...]
    tasks: tuple[TaskRow, ...]
    message: str = ""


def _cluster_row(cluster: Mapping[str, Any]) -> ClusterRow:
    started, succeeded = find_condition(cluster, "Started"), find_condition(cluster, "Succeeded")
    if succeeded is not None and succeeded.get("status") in ("True", "False"):
        state = SUCCEEDED if succeeded["status"] == "True" else FAILED
    else:
        state = UPDATING if (started or {}).get("status") == "True" else NOT_STARTED
    message = (succeeded or {}).get("message", "") if state == FAILED else ""
    return ClusterRow(str(cluster.get("clusterName", "")), state, _at(started), _at(succeeded), message)


def _stage_state(stage: Mapping[str, Any]) -> tuple[str, str]:
    succeeded, progressing = find_condition(stage, "Succeeded"), find_condition(stage, "Progressing")
    if succeeded is not None and succeeded.get("status") == "True":
        skipped = succeeded.get("reason") == "StageUpdatingSkippedNoClusters"
        return (SKIPPED if skipped else SUCCEEDED), ""
    if succeeded is not None and succeeded.get("status") == "False":
        return FAILED, str(succeeded.get("message", ""))
    if progressing is None:
        return NOT_STARTED, ""
    if progressing.get("status") == "True":
        return UPDATING, ""
    return _STAGE_WAITING_REASONS.get(str(progressing.get("reason")), WAITING), ""


def _wait_times(status: Mapping[str, Any]) -> dict[str, timedelta]:
    """Each stage's TimedWait from the run's strategy snapshot (the task status does not repeat it)."""
    waits = {}
    for stage in (status.get("stagedUpdateStrategySnapshot") or {}).get("stages") or ():
        for task in stage.get("afterStageTasks") or ():
            if task.get("type") == "TimedWait" and task.get("waitTime"):
                try:
                    waits[stage.get("name", "")] = parse_go_duration(task["waitTime"])
                except DurationError:
                    continue
    return waits


def _timed_wait(
    when: str,
    task: Mapping[str, Any],
    stage: Mapping[str, Any],
    state: str,
    wait: timedelta | None,
    now: datetime,
) -> TaskRow:
    """A TimedWait counts from the stage's Progressing=False (its last cluster finished)."""
    if _true(task, "WaitTimeElapsed"):
        return TaskRow(when, "TimedWait", ELAPSED, wait_time=wait)
    if state != WAITING:
        return TaskRow(when, "TimedWait", NOT_STARTED, wait_time=wait)
    since = _at(find_condition(stage, "Progressing"))
    remaining = max(since + wait - now, timedelta(0)) if since is not None and wait is not None else None
    return TaskRow(when, "TimedWait", WAITING, wait_time=wait, remaining=remaining)


def _approval(when: str, task: Mapping[str, Any], requests: Mapping[str, str]) -> TaskRow:
    name = str(task.get("approvalRequestName") or "")
    if _true(task, "ApprovalRequestApproved"):
        state = APPROVED
    else:
        state = WAITING if _true(task, "ApprovalRequestCreated") else NOT_STARTED
    return TaskRow(when, "Approval", state, name, requests.get(name, ""))


def _task_rows(
    stage: Mapping[str, Any], state: str, wait: timedelta | None, requests: Mapping[str, str], now: datetime
) -> tuple[TaskRow, ...]:
    rows = []
    for when, key in (("before", "beforeStageTaskStatus"), ("after", "afterStageTaskStatus")):
        for task in stage.get(key) or ():
            if task.get("type") == "TimedWait":
                rows.append(_timed_wait(when, task, stage, state, wait, now))
            else:
                rows.append(_approval(when, task, requests))
    return tuple(rows)


def stage_rows(status: Mapping[str, Any], requests: Mapping[str, str], now: datetime) -> list[StageRow]:
    """Every stage of a run's status (the delete stage last) with its clusters and tasks;
    `requests`: the state of each approval request by name."""
    waits = _wait_times(status)
    stages = [*(status.get("stagesStatus") or ())]
    if status.get("deletionStageStatus"):
        stages.append(status["deletionStageStatus"])
    rows = []
    for stage in stages:
        state, message = _stage_state(stage)
        name = str(stage.get("stageName", ""))
        rows.append(
            StageRow(
                name=name,
                state=state,
                started_at=parse_time(stage.get("startTime")),
                finished_at=parse_time(stage.get("endTime")),
                clusters=tuple(_cluster_row(c) for c in stage.get("clusters") or ()),
                tasks=_task_rows(stage, state, waits.get(name), requests, now),
                message=message,
            )
        )
    return rows


_TIMELINE_COLOURS = {
    UPDATING: "#d08a00",
    WAITING: "#1a5fd0",
    STOPPING: "#8e5bd0",
    STOPPED: "#6b6b6b",
    SUCCEEDED: "#2e7d32",
    SKIPPED: "#9e9e9e",
    FAILED: "#c62828",
}


def _bar(label: str, start: datetime, end: datetime, state: str) -> dict[str, Any]:
    duration = (end - start) / timedelta(milliseconds=1)
    return {"y": plotly_text(label), "base": format_time(start), "x": duration, "state": state}


def timeline_figure(stages: Sequence[StageRow], now: datetime) -> dict[str, Any]:
    """A plotly Gantt figure (JSON): one bar per started stage and per started cluster, from its start to
    its end (or now), coloured by state, one trace per state so the legend names them."""
    bars = []
    for stage in stages:
        if stage.started_at is not None:
            bars.append(_bar(f"stage {stage.name}", stage.started_at, stage.finished_at or now, stage.state))
        for cluster in stage.clusters:
            if cluster.started_at is not None:
                end = cluster.finished_at or now
                bars.append(_bar(f"{stage.name} · {cluster.name}", cluster.started_at, end, cluster.state))
    traces = []
    for state, colour in _TIMELINE_COLOURS.items():
        group = [bar for bar in bars if bar["state"] == state]
        if group:
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "name": state,
                    "y": [bar["y"] for bar in group],
                    "base": [bar["base"] for bar in group],
                    "x": [bar["x"] for bar in group],
                    "marker": {"color": colour},
                }
            )
    labels = [bar["y"] for bar in bars]
    return {
        "data": traces,
        "layout": {
            "barmode": "overlay",
            "title": {"text": "Stages and clusters over time"},
            "xaxis": {"type": "date", "title": {"text": "time (UTC)"}},
            "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": labels[::-1]},
            "legend": {"orientation": "h"},
            "margin": {"t": 48, "r": 16, "b": 48, "l": 260},
            "height": max(240, 96 + 28 * len(labels)),
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
        return "OCM" if record.kind == Placement.Kind.PLACEMENT else "Fleet"

    def render_owner(self, record: Placement) -> SafeString:
        return _owner_html(record.owner)

    def render_selected(self, record: "queries.PlacementForList") -> str:
        return f"{queries.selected_count(record)} / {queries.requested(record)}"

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


class RunTable(ListTable):
    name = name_column("Run", "placement:run-list", orderable=True)
    hub = tables.Column("Hub", accessor="hub__name", orderable=True)
    owner = tables.Column("Owner", orderable=True)
    placement = tables.Column("Placement", accessor="placement_name")
    strategy = tables.Column("Strategy", accessor="strategy_name")
    state = tables.Column("State", accessor="pk")
    current_stage = tables.Column("Current stage", accessor="pk")
    initialized = tables.Column("Initialized", accessor="pk")
    progressing = tables.Column("Progressing", accessor="pk")
    succeeded = tables.Column("Succeeded", accessor="pk")
    pending = tables.Column(
        "Pending approvals", accessor="pending_approvals", attrs={"td": {"class": "number"}}
    )
    created = tables.Column("Created", orderable=True)
    pager_label = "Runs"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "runs"}

    def render_owner(self, record: StagedUpdateRun) -> SafeString:
        return _owner_html(record.owner)

    def render_placement(self, record: StagedUpdateRun) -> SafeString | str:
        if record.placement_id is None:
            return record.placement_name
        link = f"{self.url('placement:placement-list')}{record.placement_id}/"
        return format_html('<a href="{}">{}</a>', link, record.placement_name)

    def render_state(self, record: StagedUpdateRun) -> str:
        return str(record.spec.get("state") or "Initialize")

    def render_current_stage(self, record: StagedUpdateRun) -> str:
        return RunSummary.of(record.status or {}).current_stage or "—"

    def _chip(self, record: StagedUpdateRun, index: int) -> SafeString:
        _, condition, tone, short = RunSummary.of(record.status or {}).chips[index]
        if condition is None:
            return SafeString('<span class="empty">—</span>')
        title = f"{condition.get('reason', '')}: {condition.get('message', '')}"
        status = condition.get("status", "")
        return format_html(
            '<span class="status status-{}" title="{}">{} · {}</span>', tone, title, status, short
        )

    def render_initialized(self, record: StagedUpdateRun) -> SafeString:
        return self._chip(record, 0)

    def render_progressing(self, record: StagedUpdateRun) -> SafeString:
        return self._chip(record, 1)

    def render_succeeded(self, record: StagedUpdateRun) -> SafeString:
        return self._chip(record, 2)

    def render_pending(self, record: StagedUpdateRun, value: int) -> SafeString | int:
        if not value:
            return 0
        link = f"{self.url('placement:approval-list')}?{urlencode({'q': record.name})}"
        return format_html('<a href="{}">{}</a>', link, value)

    def render_created(self, value: datetime) -> str:
        return date_text(value, "Y-m-d H:i")


class StrategyTable(ListTable):
    """Strategies; `run_count` and `spec_yaml` are set on each shown row by the view."""

    name = tables.Column("Strategy", attrs={"td": {"class": "name"}}, orderable=True)
    hub = tables.Column("Hub", accessor="hub__name", orderable=True)
    owner = tables.Column("Owner", orderable=True)
    stages = tables.Column("Stages", accessor="pk")
    runs = tables.Column("Runs", accessor="run_count", attrs={"td": {"class": "number"}})
    pager_label = "Strategies"

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "strategies"}

    def render_name(self, record: StagedUpdateStrategy) -> SafeString:
        spec = record.spec_yaml
        return format_html(
            '<details><summary>{}</summary><pre class="yaml">{}</pre></details>', record.name, spec
        )

    def render_owner(self, record: StagedUpdateStrategy) -> SafeString:
        return _owner_html(record.owner)

    def render_stages(self, record: StagedUpdateStrategy) -> SafeString:
        stages = (record.spec or {}).get("stages") or ()
        return format_html_join(
            " → ", '<span class="chip">{}</span>', ((stage.get("name"),) for stage in stages)
        )

    def render_runs(self, record: StagedUpdateStrategy, value: int) -> SafeString | int:
        if not value:
            return 0
        query = urlencode({"q": record.name, "hub": record.hub.name})
        return format_html('<a href="{}?{}">{}</a>', self.url("placement:run-list"), query, value)


class ApprovalTable(ListTable):
    """The approvals inbox: the view sets `entries` (the shown page's inbox rows) and `denied` (why a
    user may not approve); each row is drawn by the inbox row template the page also polls."""

    name = tables.Column("Request")
    hub = tables.Column("Hub")
    run = tables.Column("Run")
    stage = tables.Column("Stage")
    task = tables.Column("Task")
    clusters = tables.Column("Clusters in the stage")
    waiting = tables.Column("Waiting since")
    state = tables.Column("State")
    actions = tables.Column("Actions")
    pager_label = "Approval requests"
    entries: Sequence[Any] = ()
    denied = ""

    class Meta(ListTable.Meta):
        attrs = {"class": "table", "id": "approvals"}
        template_name = "placement/_approval_rows.html"


def _owner_html(owner: str) -> SafeString:
    return format_html('<span class="owner owner-{}">{}</span>', owner, owner)
