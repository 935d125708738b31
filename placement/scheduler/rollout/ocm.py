"""OCM rollout planning: sdk-go `RolloutHandler.GetRolloutCluster` as pure functions.

A workload applier (ManifestWorkReplicaSet, addon install strategies, ...) asks, for one Placement:
given the `RolloutStrategy`, the Placement's decision groups and the rollout status of every cluster that
already has the workload, which clusters should get it now, which timed out, which left the Placement,
and when to look again. Semantics follow sdk-go `pkg/apis/cluster/v1alpha1/rollout.go` and the decision
tracker of `pkg/apis/cluster/v1beta1/placement.go` to the letter, quirks included
(All, for one, ignores minSuccessTime and maxFailures).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum, StrEnum
from typing import Any

from placement.scheduler.errors import ManifestError, in_range
from placement.scheduler.intstr import ceil_percent_of
from placement.scheduler.timeutil import DurationError, parse_go_duration

ALL, PROGRESSIVE, PROGRESSIVE_PER_GROUP = "All", "Progressive", "ProgressivePerGroup"

# The RolloutStrategy field holding each type's config.
_CONFIG_FIELDS = {ALL: "all", PROGRESSIVE: "progressive", PROGRESSIVE_PER_GROUP: "progressivePerGroup"}
# Config fields beyond RolloutConfig that each config block carries (others are pruned by the CRD).
_MANDATORY_GROUPS_FIELD, _MAX_CONCURRENCY_FIELD = "mandatoryDecisionGroups", "maxConcurrency"

# upstream regex, shared by the CRD pattern and parseTimeout; the alternation binds loosely, so only the
# start of a duration is checked ("1h30m" passes) and anything ending in "None" passes too.
_TIMEOUT_REGEX = "^(([0-9])+[h|m|s])|None$"
_THRESHOLD_REGEX = "^((100|[0-9]{1,2})%|[0-9]+)$"  # CRD pattern of maxFailures/maxConcurrency
# Go's `$` (no multiline) is the end of text; Python's would also match before a final newline.
_TIMEOUT_PATTERN = re.compile(_TIMEOUT_REGEX[:-1] + r"\Z")
_THRESHOLD_PATTERN = re.compile(_THRESHOLD_REGEX[:-1] + r"\Z")
_ATOI = re.compile(r"[+-]?[0-9]+")


class RolloutStatus(StrEnum):
    """A cluster's rollout status (sdk-go `RolloutStatus`); any other value is judged like Progressing."""

    TO_APPLY = "ToApply"
    PROGRESSING = "Progressing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    TIME_OUT = "TimeOut"
    SKIP = "Skip"


_FAILURE_STATUSES = (RolloutStatus.TIME_OUT, RolloutStatus.FAILED)


class RolloutError(ValueError):
    """An error `GetRolloutCluster` (or one of its helpers) returns, with the upstream text."""


@dataclass(frozen=True, slots=True)
class GroupKey:
    """A decision group: the PlacementDecision labels `decision-group-name` and `decision-group-index`."""

    group_name: str = ""
    group_index: int = 0


@dataclass(frozen=True, slots=True)
class MandatoryDecisionGroup:
    """A group to roll out first: by `groupName` (every index with that name) or else by `groupIndex`."""

    group_name: str = ""
    group_index: int = 0


@dataclass(frozen=True, slots=True)
class RolloutStrategy:
    """A cluster/v1alpha1 RolloutStrategy, flattened: the fields come from the config block of `type`.

    `max_failures` and `max_concurrency` are IntOrString values (`3` or `"25%"`); `max_concurrency` 0 is
    Go's zero value, i.e. unset. `mandatory_decision_groups` and `max_concurrency` are ignored by types
    whose config does not carry them.
    """

    type: str = ALL
    min_success_time: timedelta = timedelta(0)
    progress_deadline: str = "None"
    max_failures: int | str = 0
    mandatory_decision_groups: tuple[MandatoryDecisionGroup, ...] = ()
    max_concurrency: int | str = 0


@dataclass(frozen=True, slots=True)
class ClusterGroup:
    """The clusters a Placement decided for one decision group."""

    key: GroupKey
    clusters: frozenset[str]


@dataclass(frozen=True, slots=True)
class ClusterRolloutStatus:
    """One cluster's rollout status. `recheck_time` is set by the planner: soak end or progress deadline."""

    cluster_name: str
    group_key: GroupKey = GroupKey()
    status: str = RolloutStatus.TO_APPLY  # Go's zero value
    last_transition_time: datetime | None = None
    recheck_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class RolloutResult:
    """What to do now: roll out, report timed out, forget removed clusters; and when to plan again."""

    clusters_to_rollout: tuple[ClusterRolloutStatus, ...] = ()
    clusters_timeout: tuple[ClusterRolloutStatus, ...] = ()
    clusters_removed: tuple[ClusterRolloutStatus, ...] = ()
    max_failure_breach: bool = False
    recheck_after: timedelta | None = None


class _Verdict(Enum):
    ROLLOUT = "rollout"
    TIMEOUT = "timeout"
    DROP = "drop"


# ---------------------------------------------------------------------------------------------------
# Helpers with upstream names: parseTimeout, calculateRolloutSize, determineRolloutStatus
# ---------------------------------------------------------------------------------------------------


def parse_timeout(text: str) -> timedelta | None:
    """sdk-go `parseTimeout`: `""`/`"None"` -> None (infinite), else the Go duration; raises RolloutError."""
    if text in ("", "None"):
        return None
    if not _TIMEOUT_PATTERN.search(text):
        raise RolloutError("invalid timeout format")
    try:
        return parse_go_duration(text)
    except DurationError as exc:
        raise RolloutError(str(exc)) from exc


def calculate_rollout_size(value: int | str, total: int, default: int) -> int:
    """sdk-go `calculateRolloutSize`: an int as is, `"p%"` as ceil(p/100 x total); <= 0 or > total -> default.

    Raises RolloutError for a string without `%` or an unparsable percentage.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise RolloutError(f"invalid maximum threshold type {type(value).__name__}")
    size = value if isinstance(value, int) else _percent_of(value, total)
    return default if size is None or size <= 0 or size > total else size


def _percent_of(value: str, total: int) -> int | None:
    """ceil(p / 100 x total) in float64 as upstream; None where Go's int conversion is undefined."""
    if not value.endswith("%"):
        raise RolloutError(f"'{value}' is an invalid maximum threshold value: string is not a percentage")
    try:
        return ceil_percent_of(value, total)
    except ValueError as exc:
        raise RolloutError(str(exc)) from exc


def _validate_threshold(value: int | str) -> None:
    """sdk-go `parseRolloutSize`: the format check of calculateRolloutSize without the arithmetic."""
    calculate_rollout_size(value, 0, 0)


def determine_rollout_status(
    status: ClusterRolloutStatus, min_success_time: timedelta, timeout: timedelta | None, now: datetime
) -> tuple[list[ClusterRolloutStatus], list[ClusterRolloutStatus]]:
    """sdk-go `determineRolloutStatus` for one cluster: ([it] if it rolls out, [it] if it timed out).

    `timeout` None is infinite. The returned status carries its `recheck_time` (and `TimeOut` when late).
    """
    judged, verdict = _judge(status, min_success_time, timeout, now)
    rollout = [judged] if verdict is _Verdict.ROLLOUT else []
    timed_out = [judged] if verdict is _Verdict.TIMEOUT else []
    return rollout, timed_out


def _judge(
    status: ClusterRolloutStatus, min_success_time: timedelta, timeout: timedelta | None, now: datetime
) -> tuple[ClusterRolloutStatus, _Verdict]:
    """The status as determineRolloutStatus leaves it, and which list (if any) it joins."""
    if status.status == RolloutStatus.TO_APPLY:
        return status, _Verdict.ROLLOUT
    if status.status == RolloutStatus.SUCCEEDED:
        soak_end = (status.last_transition_time or now) + min_success_time
        # upstream: still soaking while now is strictly before the end of minSuccessTime
        if now < soak_end:
            return dataclasses.replace(status, recheck_time=soak_end), _Verdict.ROLLOUT
        return status, _Verdict.DROP
    if status.status in (RolloutStatus.TIME_OUT, RolloutStatus.SKIP):
        return status, _Verdict.DROP
    if timeout is None:  # upstream: an infinite deadline sets no recheck time
        return dataclasses.replace(status, recheck_time=None), _Verdict.ROLLOUT
    deadline = (status.last_transition_time or now) + timeout
    if now < deadline:
        return dataclasses.replace(status, recheck_time=deadline), _Verdict.ROLLOUT
    return dataclasses.replace(status, status=RolloutStatus.TIME_OUT, recheck_time=deadline), _Verdict.TIMEOUT


def _min_recheck_after(rollout: Sequence[ClusterRolloutStatus], now: datetime) -> timedelta | None:
    """sdk-go `minRecheckAfter`: the smallest positive recheck_time - now over the clusters to roll out."""
    waits = [c.recheck_time - now for c in rollout if c.recheck_time is not None and c.recheck_time > now]
    return min(waits, default=None)


# ---------------------------------------------------------------------------------------------------
# Decision groups (sdk-go PlacementDecisionClustersTracker)
# ---------------------------------------------------------------------------------------------------


def groups_from_decisions(
    decision_pages: Iterable[tuple[str | None, int | str, Iterable[str]]],
) -> list[ClusterGroup]:
    """The decision groups of a Placement from its PlacementDecisions, ordered by index then name.

    Each page is `(group_name, group_index, cluster_names)` read from the labels
    `cluster.open-cluster-management.io/decision-group-name` / `-index` (the index may be the label's
    string) and `status.decisions[].clusterName`. Pages of the same group are merged.
    """
    merged: dict[GroupKey, set[str]] = {}
    for group_name, group_index, cluster_names in decision_pages:
        key = GroupKey(group_name or "", _parse_group_index(group_index))
        merged.setdefault(key, set()).update(cluster_names)
    return [ClusterGroup(key, frozenset(merged[key])) for key in sorted(merged, key=_index_order)]


def _parse_group_index(value: int | str) -> int:
    """The decision-group-index label as strconv.Atoi reads it; a bad label is a tracker error upstream."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    if not _ATOI.fullmatch(text):
        raise RolloutError(f'incorrect group index: strconv.Atoi: parsing "{text}": invalid syntax')
    return int(text)


def _index_order(key: GroupKey) -> tuple[int, str]:
    return key.group_index, key.group_name


_GroupMap = dict[GroupKey, frozenset[str]]


class _DecisionGroups:
    """The tracker's view of the groups: selection by mandatory entries, and "all groups besides"."""

    def __init__(self, groups: Iterable[ClusterGroup]) -> None:
        self._clusters: _GroupMap = {}
        for group in groups:
            self._clusters[group.key] = self._clusters.get(group.key, frozenset()) | group.clusters
        self._name_by_index: dict[int, str] = {}
        self._indices_by_name: dict[str, list[int]] = {}
        for key in sorted(self._clusters, key=_index_order):
            self._name_by_index[key.group_index] = key.group_name
            self._indices_by_name.setdefault(key.group_name, []).append(key.group_index)

    def expand(self, entries: Iterable[MandatoryDecisionGroup]) -> list[GroupKey]:
        """upstream fulfillGroupKeys: a name selects all its indices; otherwise the index selects."""
        keys: list[GroupKey] = []
        for entry in entries:
            if entry.group_name:
                keys += [
                    GroupKey(entry.group_name, i) for i in self._indices_by_name.get(entry.group_name, ())
                ]
            elif entry.group_index in self._name_by_index:
                keys.append(GroupKey(self._name_by_index[entry.group_index], entry.group_index))
        return keys

    def selected(self, entries: Iterable[MandatoryDecisionGroup]) -> _GroupMap:
        """upstream ExistingClusterGroups: the groups the entries name (none for no entries)."""
        return {key: self._clusters[key] for key in self.expand(entries) if key in self._clusters}

    def besides(self, entries: Iterable[MandatoryDecisionGroup] = ()) -> _GroupMap:
        """upstream ExistingClusterGroupsBesides: every group except those the entries name."""
        excluded = set(self.expand(entries))
        result: _GroupMap = {}
        # upstream walks indices 0..n-1 (n = distinct indices), so groups past a gap in the indices vanish
        for index in range(len(self._name_by_index)):
            key = GroupKey(self._name_by_index.get(index, ""), index)
            if key not in excluded and key in self._clusters:
                result[key] = self._clusters[key]
        return result


def _clusters_of(groups: _GroupMap) -> set[str]:
    return set().union(*groups.values())


def _group_key_by_cluster(groups: _GroupMap) -> dict[str, GroupKey]:
    """Each cluster's group; a cluster in two groups gets the lowest index (upstream: map order)."""
    owner: dict[str, GroupKey] = {}
    for key in sorted(groups, key=_index_order):
        for cluster in groups[key]:
            owner.setdefault(cluster, key)
    return owner


# ---------------------------------------------------------------------------------------------------
# progressivePerCluster / progressivePerGroup
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Lists:
    """The rollout and timeout lists one planning pass builds."""

    rollout: list[ClusterRolloutStatus] = dataclasses.field(default_factory=list)
    timed_out: list[ClusterRolloutStatus] = dataclasses.field(default_factory=list)

    def judge(
        self,
        status: ClusterRolloutStatus,
        min_success_time: timedelta,
        timeout: timedelta | None,
        now: datetime,
    ) -> ClusterRolloutStatus:
        judged, verdict = _judge(status, min_success_time, timeout, now)
        if verdict is _Verdict.ROLLOUT:
            self.rollout.append(judged)
        elif verdict is _Verdict.TIMEOUT:
            self.timed_out.append(judged)
        return judged

    def result(self, breach: bool, now: datetime) -> RolloutResult:
        return RolloutResult(
            clusters_to_rollout=tuple(self.rollout),
            clusters_timeout=tuple(self.timed_out),
            max_failure_breach=breach,
            recheck_after=_min_recheck_after(self.rollout, now),
        )


def _progressive_per_cluster(
    groups: _GroupMap,
    rollout_size: int,
    max_failures: int,
    min_success_time: timedelta,
    timeout: timedelta | None,
    statuses: Sequence[ClusterRolloutStatus],
    now: datetime,
) -> RolloutResult:
    """upstream progressivePerCluster: existing statuses by name first, then new clusters by name."""
    lists = _Lists()
    known: set[str] = set()
    failures, breach = 0, False
    for status in sorted(statuses, key=lambda s: s.cluster_name):
        if not status.cluster_name:
            continue
        known.add(status.cluster_name)
        # upstream: after a breach only clusters that already had the workload applied are judged
        if not breach or status.status != RolloutStatus.TO_APPLY:
            status = lists.judge(status, min_success_time, timeout, now)
        if status.status in _FAILURE_STATUSES:
            failures += 1
            breach = failures > max_failures
        if len(lists.rollout) >= rollout_size:
            return lists.result(breach, now)
    if breach:
        return lists.result(True, now)
    group_of = _group_key_by_cluster(groups)
    for cluster in sorted(_clusters_of(groups) - known):
        lists.rollout.append(ClusterRolloutStatus(cluster, group_of[cluster], RolloutStatus.TO_APPLY))
        if len(lists.rollout) >= rollout_size:
            break
    return lists.result(False, now)


def _progressive_per_group(
    groups: _GroupMap,
    max_failures: int | str,
    min_success_time: timedelta,
    timeout: timedelta | None,
    statuses: Sequence[ClusterRolloutStatus],
    now: datetime,
) -> RolloutResult:
    """upstream progressivePerGroup: judge applied clusters, then walk groups by index until one has work."""
    lists = _Lists()
    judged: dict[str, str] = {}
    for status in statuses:
        # upstream: ToApply clusters are not recorded, so they come back as new ToApply in their group
        if status.cluster_name and status.status != RolloutStatus.TO_APPLY:
            judged[status.cluster_name] = lists.judge(status, min_success_time, timeout, now).status
    total_failures, breach = 0, False
    for key in sorted(groups, key=_index_order):
        clusters = groups[key]
        max_group_failures = calculate_rollout_size(max_failures, len(clusters), 0)
        group_failures = 0
        for cluster in sorted(clusters):
            if cluster not in judged:
                lists.rollout.append(ClusterRolloutStatus(cluster, key, RolloutStatus.TO_APPLY))
            elif judged[cluster] in _FAILURE_STATUSES:
                group_failures += 1
                breach = group_failures > max_group_failures
        total_failures += group_failures
        # upstream: stop at the first group with clusters to roll out that are not failures, or a breach
        if len(lists.rollout) - total_failures > 0 or breach:
            break
    return lists.result(breach, now)


# ---------------------------------------------------------------------------------------------------
# RolloutHandler.GetRolloutCluster
# ---------------------------------------------------------------------------------------------------


def plan_rollout(
    strategy: RolloutStrategy,
    groups: Sequence[ClusterGroup],
    existing_statuses: Sequence[ClusterRolloutStatus],
    now: datetime,
) -> RolloutResult:
    """sdk-go `RolloutHandler.GetRolloutCluster` over a Placement's decision groups at time `now`.

    `existing_statuses` holds one status per cluster that already has the workload. Raises RolloutError
    with the upstream text for an unknown type, a bad progressDeadline, maxFailures or maxConcurrency.
    """
    planner = _PLANNERS.get(strategy.type)
    if planner is None:
        raise RolloutError(f"incorrect rollout strategy type {strategy.type}")
    timeout = parse_timeout(strategy.progress_deadline)
    tracker = _DecisionGroups(groups)
    current, removed = _split_removed(tracker.besides(), existing_statuses)
    result = planner(strategy, tracker, current, timeout, now)
    return dataclasses.replace(result, clusters_removed=removed)


def _split_removed(
    groups: _GroupMap, statuses: Sequence[ClusterRolloutStatus]
) -> tuple[list[ClusterRolloutStatus], tuple[ClusterRolloutStatus, ...]]:
    """upstream getRemovedClusters: statuses of clusters in no current group are removed, order kept."""
    clusters = _clusters_of(groups)
    current = [s for s in statuses if s.cluster_name in clusters]
    return current, tuple(s for s in statuses if s.cluster_name not in clusters)


def _plan_all(
    strategy: RolloutStrategy,
    tracker: _DecisionGroups,
    current: Sequence[ClusterRolloutStatus],
    timeout: timedelta | None,
    now: datetime,
) -> RolloutResult:
    groups = tracker.besides()
    total = len(_clusters_of(groups))
    # upstream: All rolls out everywhere at once; minSuccessTime and maxFailures are ignored
    return _progressive_per_cluster(groups, total, total, timedelta(0), timeout, current, now)


def _plan_progressive(
    strategy: RolloutStrategy,
    tracker: _DecisionGroups,
    current: Sequence[ClusterRolloutStatus],
    timeout: timedelta | None,
    now: datetime,
) -> RolloutResult:
    try:
        max_failures = calculate_rollout_size(strategy.max_failures, len(_clusters_of(tracker.besides())), 0)
    except RolloutError as exc:
        raise RolloutError(f"failed to parse the provided maxFailures: {exc}") from exc
    mandatory = _mandatory_result(strategy, tracker, timeout, current, now)
    if mandatory is not None:
        return mandatory
    rest = tracker.besides(strategy.mandatory_decision_groups)
    rest_total = len(_clusters_of(rest))
    try:
        # upstream: an unset maxConcurrency rolls out to every non-mandatory cluster
        rollout_size = calculate_rollout_size(strategy.max_concurrency, rest_total, rest_total)
    except RolloutError as exc:
        raise RolloutError(f"failed to parse the provided maxConcurrency: {exc}") from exc
    return _progressive_per_cluster(
        rest, rollout_size, max_failures, strategy.min_success_time, timeout, current, now
    )


def _plan_progressive_per_group(
    strategy: RolloutStrategy,
    tracker: _DecisionGroups,
    current: Sequence[ClusterRolloutStatus],
    timeout: timedelta | None,
    now: datetime,
) -> RolloutResult:
    try:
        _validate_threshold(strategy.max_failures)
    except RolloutError as exc:
        raise RolloutError(f"failed to parse the provided maxFailures: {exc}") from exc
    mandatory = _mandatory_result(strategy, tracker, timeout, current, now)
    if mandatory is not None:
        return mandatory
    rest = tracker.besides(strategy.mandatory_decision_groups)
    return _progressive_per_group(
        rest, strategy.max_failures, strategy.min_success_time, timeout, current, now
    )


_PLANNERS = {
    ALL: _plan_all,
    PROGRESSIVE: _plan_progressive,
    PROGRESSIVE_PER_GROUP: _plan_progressive_per_group,
}


def _mandatory_result(
    strategy: RolloutStrategy,
    tracker: _DecisionGroups,
    timeout: timedelta | None,
    current: Sequence[ClusterRolloutStatus],
    now: datetime,
) -> RolloutResult | None:
    """The mandatory groups' pass (no failure tolerated), when it still has clusters to roll out or timed out.

    Its first step judges every current status, also those outside the mandatory groups, as upstream.
    """
    mandatory = tracker.selected(strategy.mandatory_decision_groups)
    if not mandatory:
        return None
    result = _progressive_per_group(mandatory, 0, strategy.min_success_time, timeout, current, now)
    return result if result.clusters_to_rollout or result.clusters_timeout else None


# ---------------------------------------------------------------------------------------------------
# Manifest parsing
# ---------------------------------------------------------------------------------------------------


def parse_rollout_strategy(
    raw: Mapping[str, Any] | None, field_path: str = "rolloutStrategy"
) -> RolloutStrategy:
    """A RolloutStrategy manifest (dict) as the API server admits and defaults it.

    Raises ManifestError for what the CRD rejects (bad progressDeadline pattern, maxFailures /
    maxConcurrency that are not an int32 or a `^((100|[0-9]{1,2})%|[0-9]+)$` string, an unparsable
    minSuccessTime, wrong types). A missing type defaults to All; an empty or unknown type is kept, so
    `plan_rollout` reports upstream's `incorrect rollout strategy type`.
    """
    raw = _object(raw, field_path)
    rollout_type = raw.get("type", ALL)
    if not isinstance(rollout_type, str):
        raise ManifestError(f"{field_path}.type", f"Invalid value: {rollout_type!r}: must be a string")
    # every config block present is validated, as the API server does; only the one named by type is used
    parsed = {
        name: _parse_config(name, _object(raw.get(field), f"{field_path}.{field}"), f"{field_path}.{field}")
        for name, field in _CONFIG_FIELDS.items()
    }
    return parsed.get(rollout_type, RolloutStrategy(type=rollout_type))


def _object(raw: Any, field_path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ManifestError(field_path, f"Invalid value: {raw!r}: must be an object")
    return raw


def _parse_config(rollout_type: str, config: Mapping[str, Any], field_path: str) -> RolloutStrategy:
    """One config block (RolloutConfig, plus mandatory groups and maxConcurrency where the type has them)."""
    strategy = RolloutStrategy(
        type=rollout_type,
        min_success_time=_parse_min_success_time(
            config.get("minSuccessTime"), f"{field_path}.minSuccessTime"
        ),
        progress_deadline=_parse_progress_deadline(
            config.get("progressDeadline"), f"{field_path}.progressDeadline"
        ),
        max_failures=_parse_threshold(config.get("maxFailures", 0), f"{field_path}.maxFailures"),
    )
    if rollout_type == ALL:  # the CRD prunes the other fields from `all`
        return strategy
    groups = _parse_mandatory_groups(
        config.get(_MANDATORY_GROUPS_FIELD), f"{field_path}.{_MANDATORY_GROUPS_FIELD}"
    )
    strategy = dataclasses.replace(strategy, mandatory_decision_groups=groups)
    if rollout_type == PROGRESSIVE:
        concurrency = _parse_threshold(
            config.get(_MAX_CONCURRENCY_FIELD, 0), f"{field_path}.{_MAX_CONCURRENCY_FIELD}"
        )
        strategy = dataclasses.replace(strategy, max_concurrency=concurrency)
    return strategy


def _parse_min_success_time(raw: Any, field_path: str) -> timedelta:
    if raw is None or raw == "":
        return timedelta(0)  # CRD default "0"
    if not isinstance(raw, str):
        raise ManifestError(field_path, f"Invalid value: {raw!r}: must be a duration string")
    try:
        return parse_go_duration(raw)
    except DurationError as exc:
        raise ManifestError(field_path, str(exc)) from exc


def _parse_progress_deadline(raw: Any, field_path: str) -> str:
    # a Go client omits "" (omitempty), so the CRD default "None" applies to it
    if raw is None or raw == "":
        return "None"
    if not isinstance(raw, str):
        raise ManifestError(field_path, f"Invalid value: {raw!r}: must be a string")
    if not _TIMEOUT_PATTERN.search(raw):
        raise ManifestError(field_path, f"Invalid value: \"{raw}\": should match '{_TIMEOUT_REGEX}'")
    return raw


def _parse_threshold(raw: Any, field_path: str) -> int | str:
    """An XIntOrString field with the CRD pattern (which applies to strings only)."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return in_range(raw, field_path)
    if not isinstance(raw, str):
        raise ManifestError(field_path, f"Invalid value: {raw!r}: must be an integer or a string")
    if not _THRESHOLD_PATTERN.search(raw):
        raise ManifestError(field_path, f"Invalid value: \"{raw}\": should match '{_THRESHOLD_REGEX}'")
    return raw


def _parse_mandatory_groups(raw: Any, field_path: str) -> tuple[MandatoryDecisionGroup, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(field_path, f"Invalid value: {raw!r}: must be a list")
    return tuple(_parse_mandatory_group(entry, f"{field_path}[{i}]") for i, entry in enumerate(raw))


def _parse_mandatory_group(raw: Any, field_path: str) -> MandatoryDecisionGroup:
    entry = _object(raw, field_path)
    name = entry.get("groupName", "")
    index = entry.get("groupIndex", 0)
    if not isinstance(name, str):
        raise ManifestError(f"{field_path}.groupName", f"Invalid value: {name!r}: must be a string")
    if isinstance(index, bool) or not isinstance(index, int):
        raise ManifestError(f"{field_path}.groupIndex", f"Invalid value: {index!r}: must be an int32")
    in_range(index, f"{field_path}.groupIndex")
    return MandatoryDecisionGroup(group_name=name, group_index=index)
