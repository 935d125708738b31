"""How staged update runs are shown: list tables, their summary, stage rows, the timeline chart, and the
progress bars of a run's stages and of a rolling update."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import django_tables2 as tables
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.tables import ListTable, date_text, name_column
from inventory.tables import hub_column
from placement.models import StagedUpdateRun, StagedUpdateStrategy
from placement.scheduler.rollout.rolling import IN_PROGRESS_REASONS
from placement.scheduler.timeutil import DurationError, format_time, parse_go_duration, parse_time
from placement.tables import owner_cell, plotly_text

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


# The parts of a progress bar, in the order they are drawn: (key, what the text calls it).
PROGRESS_PARTS = (
    ("updated", "updated"),
    ("in_progress", "in progress"),
    ("waiting", "waiting"),
    ("failed", "failed"),
)
# A cluster's state in a run -> its part of the stage's progress
_PROGRESS_OF_STATE = {SUCCEEDED: "updated", UPDATING: "in_progress", NOT_STARTED: "waiting", FAILED: "failed"}


@dataclass(frozen=True)
class ProgressPart:
    """One part of a progress bar: its count, and where it starts and how wide it is (percent, as SVG
    attribute text)."""

    key: str
    label: str
    count: int
    x: str
    width: str


@dataclass(frozen=True)
class Progress:
    """How many clusters of a stage or of a rolling update are updated, in progress, waiting or failed."""

    updated: int = 0
    in_progress: int = 0
    waiting: int = 0
    failed: int = 0

    @classmethod
    def of(cls, parts: Iterable[str]) -> "Progress":
        """Counted from each cluster's part (a key of PROGRESS_PARTS)."""
        counted = dict.fromkeys((key for key, _ in PROGRESS_PARTS), 0)
        for part in parts:
            counted[part] += 1
        return cls(**counted)

    @property
    def total(self) -> int:
        return self.updated + self.in_progress + self.waiting + self.failed

    @property
    def parts(self) -> list[ProgressPart]:
        """The bar's parts that hold clusters, laid out left to right over 100 units."""
        shown, start = [], 0
        for key, label in PROGRESS_PARTS:
            count = getattr(self, key)
            if count:
                width = 100 * count / self.total
                shown.append(ProgressPart(key, label, count, f"{start:.2f}", f"{width:.2f}"))
                start += width
        return shown

    @property
    def text(self) -> str:
        """ "2 of 5 updated, 1 in progress, 1 waiting, 1 failed": the bar in words."""
        rest = ", ".join(f"{getattr(self, key)} {label}" for key, label in PROGRESS_PARTS[1:])
        return f"{self.updated} of {self.total} updated, {rest}"


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

    @property
    def progress(self) -> Progress:
        return Progress.of(_PROGRESS_OF_STATE.get(cluster.state, "waiting") for cluster in self.clusters)


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


def _condition_is(conditions: Mapping[str, Any], kind: str, status: str) -> bool:
    return (conditions.get(kind) or {}).get("status") == status


def _binding_part(cluster: Mapping[str, Any], latest: str | None) -> str:
    """One binding's part of a rolling update: failed (the last round's verdict, or Applied or Available
    False for a reason other than work under way), updated (Available on the latest snapshot), in progress
    (its rollout started on it) or waiting. `latest`: the snapshot to reach, None for a hub mirror, whose
    conditions are about the hub's own latest snapshot."""
    conditions = cluster.get("conditions") or {}
    failing = any(
        _condition_is(conditions, kind, "False")
        and (conditions.get(kind) or {}).get("reason") not in IN_PROGRESS_REASONS
        for kind in ("Applied", "Available")
    )
    if cluster.get("verdict") == "failed" or failing:
        return "failed"
    if latest is not None and cluster.get("resourceSnapshot") != latest:
        return "waiting"
    if _condition_is(conditions, "Available", "True"):
        return "updated"
    return "in_progress" if _condition_is(conditions, "RolloutStarted", "True") else "waiting"


def rollout_progress(clusters: Iterable[Mapping[str, Any]], latest: str | None) -> Progress:
    """The progress of a rolling update over its bindings (`rolling.cluster_states`); bindings being
    removed (Unscheduled) are no longer its targets and are left out."""
    return Progress.of(
        _binding_part(cluster, latest) for cluster in clusters if cluster.get("state") != "Unscheduled"
    )


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


class RunTable(ListTable):
    name = name_column("Run", "rollouts:run-list", orderable=True)
    hub = hub_column(orderable=True)
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
        return owner_cell(record.owner)

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
        link = f"{self.url('rollouts:approval-list')}?{urlencode({'q': record.name})}"
        return format_html('<a href="{}">{}</a>', link, value)

    def render_created(self, value: datetime) -> str:
        return date_text(value, "Y-m-d H:i")


class StrategyTable(ListTable):
    """Strategies; `run_count` and `spec_yaml` are set on each shown row by the view."""

    name = tables.Column("Strategy", attrs={"td": {"class": "name"}}, orderable=True)
    hub = hub_column(orderable=True)
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
        return owner_cell(record.owner)

    def render_stages(self, record: StagedUpdateStrategy) -> SafeString:
        stages = (record.spec or {}).get("stages") or ()
        return format_html_join(
            " → ", '<span class="chip">{}</span>', ((stage.get("name"),) for stage in stages)
        )

    def render_runs(self, record: StagedUpdateStrategy, value: int) -> SafeString | int:
        if not value:
            return 0
        query = urlencode({"q": record.name, "hub": record.hub.name})
        return format_html('<a href="{}?{}">{}</a>', self.url("rollouts:run-list"), query, value)


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
        template_name = "rollouts/_approval_rows.html"
