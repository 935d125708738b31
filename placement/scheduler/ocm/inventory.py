"""The hub state one scheduling pass reads, indexed once and reused across many placements.

Clusters are kept sorted by name, so a cluster's position is also its rank in Go's byte-wise name order
(Python compares code points, which orders UTF-8 the same way). Everything a prioritizer or filter
needs per cluster is a numpy column built lazily on first use (taints as one row per taint);
per-placement work then touches only arrays, plus Python objects for the selected clusters.

A hub's change becomes a new inventory through `patched`, which reuses every object and column the
change leaves alone and copies the columns it touches before patching them at the changed positions,
so a reader still holding the old inventory keeps seeing it whole.

PlacementDecisions are the one input that changes under a long-lived inventory: a service shares one
inventory between worker threads and replaces a placement's decisions as it stores them, as an informer
cache would (`replace_decisions`, `refresh_decisions`). They live in one immutable `DecisionIndex`
swapped whole under the inventory's lock, so a reader sees the decisions, their per-cluster counts and
their grouping by placement from the same moment, and concurrent replacements never lose one another.
"""

from __future__ import annotations

import copy
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from threading import Lock
from types import MappingProxyType
from typing import Any

import numpy as np

from placement.scheduler.labels import (
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    NOT_IN,
    LabelSelector,
    Requirement,
    patched_mask,
)
from placement.scheduler.ocm.clustersets import cluster_set_selector
from placement.scheduler.ocm.types import (
    PLACEMENT_LABEL,
    SCORED_RESOURCES,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    PlacementDecision,
    Taint,
)
from placement.scheduler.positions import Shift
from placement.scheduler.quantity import approx_float
from placement.scheduler.taint_rows import TaintRows

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NOTHING: Mapping[Any, Any] = MappingProxyType({})
# what a cluster position shows a projection, given the inventory it belongs to
Projection = Callable[["OcmInventory", int], Hashable]
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(moment: datetime) -> int:
    """Exact microseconds since the Unix epoch, so time comparisons stay exact inside numpy."""
    return (moment - _EPOCH) // _MICROSECOND


@dataclass(frozen=True, slots=True)
class ResourceColumn:
    """Allocatable of one resource as float64 (Go AsApproximateFloat64); `eligible` needs both entries."""

    allocatable: np.ndarray
    eligible: np.ndarray


@dataclass(slots=True)
class AddOnColumn:
    """The AddOnPlacementScore named `resource_name` in every cluster's namespace."""

    present: np.ndarray
    has_valid_until: np.ndarray
    valid_until_us: np.ndarray
    objects: dict[int, AddOnPlacementScore]
    _scores: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def shifted(self, shift: Shift) -> AddOnColumn:
        """This column with its clusters at new positions; added clusters have no score yet."""
        column = AddOnColumn(
            shift.column(self.present, False),
            shift.column(self.has_valid_until, False),
            shift.column(self.valid_until_us, 0),
            shift.keys(self.objects),
        )
        for score_name, (values, found) in self._scores.items():
            column._scores[score_name] = (shift.column(values, 0), shift.column(found, False))
        return column

    def patched(self, scores: Mapping[int, AddOnPlacementScore | None]) -> AddOnColumn:
        """This column with the scores at these positions replaced (None: removed); copies throughout."""
        column = AddOnColumn(
            self.present.copy(), self.has_valid_until.copy(), self.valid_until_us.copy(), dict(self.objects)
        )
        for position, score in scores.items():
            column.present[position] = score is not None
            column.has_valid_until[position] = score is not None and score.valid_until is not None
            column.valid_until_us[position] = 0
            column.objects.pop(position, None)
            if score is not None:
                column.objects[position] = score
                if score.valid_until is not None:
                    column.valid_until_us[position] = epoch_micros(score.valid_until)
        for score_name, (values, found) in self._scores.items():
            values, found = values.copy(), found.copy()
            for position, score in scores.items():
                value = None if score is None else score.score(score_name)
                values[position], found[position] = value or 0, value is not None
            column._scores[score_name] = (values, found)
        return column

    def score(self, score_name: str, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(values, found) of `score_name`; a repeated score name keeps its last value."""
        if score_name not in self._scores:
            values = np.zeros(size, dtype=np.int64)
            found = np.zeros(size, dtype=bool)
            for position, score in self.objects.items():
                value = score.score(score_name)
                if value is not None:
                    values[position] = value
                    found[position] = True
            self._scores[score_name] = (values, found)
        return self._scores[score_name]


@dataclass(frozen=True, slots=True)
class ProjectionCodes:
    """A projection's code per cluster position (`OcmInventory.projection_codes`) and the table that
    interned them, kept so a patched inventory codes its changed clusters alike.

    Every inventory patched from this one draws its new codes from the same counter, so a code names one
    projection in all of them, and what was worked out per code (`verdicts`) is shared by all of them.
    """

    codes: np.ndarray
    interned: dict[Hashable, int]
    projection: Projection
    counter: Iterator[int]
    verdicts: dict[Hashable, dict[int, bool]] = field(default_factory=dict)

    def shifted(self, shift: Shift) -> ProjectionCodes:
        """These codes at new positions; an added cluster's code is to be patched."""
        return ProjectionCodes(
            shift.column(self.codes, 0), self.interned, self.projection, self.counter, self.verdicts
        )

    def patched(self, inventory: OcmInventory, positions: Iterable[int]) -> ProjectionCodes:
        """These codes with the clusters at `positions` of `inventory` (this one patched) coded again."""
        codes, interned = self.codes.copy(), dict(self.interned)
        for position in positions:
            codes[position] = _code(interned, self.projection(inventory, position), self.counter)
        codes.flags.writeable = False
        return ProjectionCodes(codes, interned, self.projection, self.counter, self.verdicts)


def _code(interned: dict[Hashable, int], value: Hashable, counter: Iterator[int]) -> int:
    code = interned.get(value)
    if code is None:
        code = interned[value] = next(counter)
    return code


@dataclass(frozen=True, slots=True)
class TaintColumns:
    """Every taint of every cluster as one row (`TaintRows`), with its timeAdded as epoch microseconds
    and the nanoseconds below them, so toleration expiry is compared for all rows at once."""

    rows: TaintRows
    added_us: np.ndarray
    added_ns: np.ndarray

    @classmethod
    def build(cls, clusters: Sequence[ManagedCluster]) -> TaintColumns:
        taints = [taint for cluster in clusters for taint in cluster.taints]
        return cls(
            TaintRows.build([cluster.taints for cluster in clusters]),
            np.asarray([epoch_micros(taint.time_added) for taint in taints], dtype=np.int64),
            np.asarray([taint.time_added_nanoseconds for taint in taints], dtype=np.int64),
        )

    def shifted(self, shift: Shift) -> TaintColumns:
        """These columns with their owners at new positions, the rows of removed clusters dropped."""
        rows, kept = self.rows.shifted(shift)
        return TaintColumns(rows, self.added_us[kept], self.added_ns[kept])

    def patched(self, taints: Mapping[int, Sequence[Taint]]) -> TaintColumns:
        """These columns with the taints of the clusters at these positions replaced; copies."""
        rows, source = self.rows.patched(taints)
        fresh = source < 0
        added = [taint for position in sorted(taints) for taint in taints[position]]

        def column(old: np.ndarray, new: Iterable[int]) -> np.ndarray:
            out = np.empty(len(source), dtype=np.int64)
            out[~fresh] = old[source[~fresh]]
            out[fresh] = np.fromiter(new, dtype=np.int64, count=len(added))
            return out

        return TaintColumns(
            rows,
            column(self.added_us, (epoch_micros(taint.time_added) for taint in added)),
            column(self.added_ns, (taint.time_added_nanoseconds for taint in added)),
        )


class LabelIndex:
    """An inverted index key -> value -> positions, evaluating selectors without a Python loop per cluster."""

    def __init__(self, maps: Sequence[Mapping[str, str]]) -> None:
        self.size = len(maps)
        lists: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for position, labels in enumerate(maps):
            for key, value in labels.items():
                lists[key][value].append(position)
        self._index = {
            key: {value: np.asarray(positions, dtype=np.int64) for value, positions in values.items()}
            for key, values in lists.items()
        }

    def shifted(self, shift: Shift) -> LabelIndex:
        """This index with its positions moved (removed clusters left out; added ones hold no labels yet)."""
        index: dict[str, dict[str, np.ndarray]] = {}
        for key, values in self._index.items():
            moved = {value: shift.positions(positions) for value, positions in values.items()}
            if kept := {value: positions for value, positions in moved.items() if positions.size}:
                index[key] = kept
        shifted = LabelIndex(())
        shifted.size, shifted._index = shift.size, index
        return shifted

    def patched(self, changes: Mapping[int, tuple[Mapping[str, str], Mapping[str, str]]]) -> LabelIndex:
        """This index with the (old, new) maps of the clusters at these positions swapped; the position
        arrays of the (key, value) pairs they leave or join are rebuilt, every other one is shared."""
        left: dict[tuple[str, str], list[int]] = defaultdict(list)
        joined: dict[tuple[str, str], list[int]] = defaultdict(list)
        for position, (old, new) in changes.items():
            for key, value in old.items():
                if new.get(key) != value:
                    left[(key, value)].append(position)
            for key, value in new.items():
                if old.get(key) != value:
                    joined[(key, value)].append(position)
        index = dict(self._index)
        for key in {key for key, _ in (*left, *joined)}:
            index[key] = dict(index.get(key, {}))
        for (key, value), positions in left.items():
            kept = np.setdiff1d(index[key][value], positions, assume_unique=True)
            if kept.size:
                index[key][value] = kept
            else:
                del index[key][value]
        for (key, value), positions in joined.items():
            index[key][value] = np.union1d(index[key].get(value, np.zeros(0, dtype=np.int64)), positions)
        patched = LabelIndex(())
        patched.size, patched._index = self.size, {key: values for key, values in index.items() if values}
        return patched

    def value_codes(self, keys: Sequence[str]) -> tuple[np.ndarray, dict[Hashable, int]]:
        """Per position a code two positions share exactly when their values of `keys` are equal, and
        the table from each such tuple of values (None for a key not set) to its code: the codes and table
        `OcmInventory.projection_codes` builds from a projection reading `tuple(map.get(key) for key in
        keys)`, codes numbered in the order positions first show them, worked out from the index without
        a Python step per position."""
        values: list[list[str | None]] = []
        columns = np.zeros((self.size, len(keys)), dtype=np.int64)
        for column, key in enumerate(keys):
            values.append([None])
            for number, (value, positions) in enumerate(self._index.get(key, {}).items(), start=1):
                columns[positions, column] = number
                values[-1].append(value)
        if not self.size:
            return np.zeros(0, dtype=np.int64), {}
        rows, first, inverse = np.unique(columns, axis=0, return_index=True, return_inverse=True)
        # unique rows come sorted; renumber them by the position each is first seen at
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        interned: dict[Hashable, int] = {
            tuple(values[column][number] for column, number in enumerate(row)): int(code)
            for row, code in zip(rows.tolist(), rank.tolist(), strict=True)
        }
        return rank[inverse.reshape(-1)], interned

    def _mask(self, key: str, values: Iterable[str] | None) -> np.ndarray:
        """Clusters whose `key` is set (to one of `values`, when given)."""
        mask = np.zeros(self.size, dtype=bool)
        by_value = self._index.get(key, {})
        chosen = by_value.values() if values is None else (by_value[v] for v in values if v in by_value)
        for positions in chosen:
            mask[positions] = True
        return mask

    def requirement_mask(self, requirement: Requirement) -> np.ndarray:
        if requirement.operator == IN:
            return self._mask(requirement.key, requirement.values)
        if requirement.operator == NOT_IN:
            return ~self._mask(requirement.key, requirement.values)
        if requirement.operator == EXISTS:
            return self._mask(requirement.key, None)
        if requirement.operator == DOES_NOT_EXIST:
            return ~self._mask(requirement.key, None)
        raise ValueError(f"unknown label selector operator {requirement.operator!r}")

    def selector_mask(self, selector: LabelSelector) -> np.ndarray:
        """Which clusters `selector` matches; the empty selector matches all."""
        mask = np.ones(self.size, dtype=bool)
        for key, value in selector.match_labels:
            mask &= self._mask(key, (value,))
        for requirement in selector.match_expressions:
            mask &= self.requirement_mask(requirement)
        return mask


@dataclass(frozen=True)
class DecisionIndex:
    """Every PlacementDecision of the hub, counted per cluster and grouped by placement; never changed
    in place (a replacement builds a new index), so a reader holding one sees a consistent whole.

    The decisions are held by placement (and those no placement label claims apart), not as one
    sequence: replacing a placement's decisions then costs its own decisions and a copy of the grouping,
    where filtering one sequence cost every decision of the hub, for each of the thousands of runs a
    full reschedule stores. `decisions` lists them all, built when first asked."""

    # ClusterDecision entries per cluster position over ALL PlacementDecisions (read-only)
    counts: np.ndarray
    # entries naming clusters the inventory does not hold
    outside: Counter[str]
    by_placement: dict[tuple[str, str], list[PlacementDecision]]
    # the decisions without a placement label
    unclaimed: tuple[PlacementDecision, ...] = ()

    @cached_property
    def decisions(self) -> tuple[PlacementDecision, ...]:
        return (*self.unclaimed, *itertools.chain.from_iterable(self.by_placement.values()))

    @classmethod
    def build(cls, decisions: Iterable[PlacementDecision], position: Mapping[str, int]) -> DecisionIndex:
        counts = np.zeros(len(position), dtype=np.int64)
        outside: Counter[str] = Counter()
        positions: list[int] = []
        grouped: dict[tuple[str, str], list[PlacementDecision]] = defaultdict(list)
        unclaimed: list[PlacementDecision] = []
        for decision in decisions:
            for name in decision.cluster_names:
                index = position.get(name)
                if index is None:
                    outside[name] += 1
                else:
                    positions.append(index)
            placement_name = decision.labels.get(PLACEMENT_LABEL)
            if placement_name is not None:
                grouped[(decision.namespace, placement_name)].append(decision)
            else:
                unclaimed.append(decision)
        np.add.at(counts, np.asarray(positions, dtype=np.int64), 1)
        counts.flags.writeable = False
        return cls(counts, outside, dict(grouped), tuple(unclaimed))

    def _counted(
        self,
        gone: Iterable[PlacementDecision],
        added: Iterable[PlacementDecision],
        position: Mapping[str, int],
    ) -> tuple[np.ndarray, Counter[str]]:
        """The per-cluster counts and the outside names with `gone` taken out and `added` put in
        (read-only counts, a new Counter); costs those decisions, not the hub's."""
        counts, outside = self.counts.copy(), Counter(self.outside)
        for sign, group in ((-1, gone), (1, added)):
            for decision in group:
                for cluster_name in decision.cluster_names:
                    index = position.get(cluster_name)
                    if index is None:
                        outside[cluster_name] += sign
                    else:
                        counts[index] += sign
        counts.flags.writeable = False
        return counts, outside

    def replaced(
        self, namespace: str, name: str, decisions: Sequence[PlacementDecision], position: Mapping[str, int]
    ) -> DecisionIndex:
        """This index with `decisions` as the placement's own; counts are adjusted, not recounted, so a
        replacement costs the placement's decisions, not the hub's."""
        old = self.by_placement.get((namespace, name), [])
        if _decision_names(old) == _decision_names(decisions):
            return self
        counts, outside = self._counted(old, decisions, position)
        by_placement = dict(self.by_placement)
        by_placement[(namespace, name)] = list(decisions)
        return DecisionIndex(counts, +outside, by_placement, self.unclaimed)

    def patched(
        self, changes: Mapping[tuple[str, str], PlacementDecision | None], position: Mapping[str, int]
    ) -> DecisionIndex:
        """This index with the PlacementDecisions named by (namespace, name) in `changes` replaced, added
        or (None) removed; counts are adjusted, and only the placements these decisions belong to are
        grouped again."""
        gone = [d for d in self.decisions if (d.namespace, d.name) in changes]
        added = [d for d in changes.values() if d is not None]
        if not gone and not added:
            return self
        counts, outside = self._counted(gone, added, position)
        by_placement = dict(self.by_placement)
        for decision in (*gone, *added):
            placement_name = decision.labels.get(PLACEMENT_LABEL)
            if placement_name is not None:
                key = (decision.namespace, placement_name)
                kept = [d for d in by_placement.get(key, []) if (d.namespace, d.name) not in changes]
                by_placement[key] = kept + [d for d in added if _owner(d) == key]
        unclaimed = (
            *(d for d in self.unclaimed if (d.namespace, d.name) not in changes),
            *(d for d in added if _owner(d)[1] is None),
        )
        return DecisionIndex(counts, +outside, by_placement, unclaimed)


def _replaced(items: Mapping[Any, Any], changes: Mapping[Any, Any]) -> dict[Any, Any]:
    """A copy of `items` with `changes` applied (a None value removes its key)."""
    out = dict(items)
    for key, item in changes.items():
        if item is None:
            out.pop(key, None)
        else:
            out[key] = item
    return out


def _patched_resource(
    column: ResourceColumn, name: str, clusters: Mapping[int, ManagedCluster]
) -> ResourceColumn:
    """The column of resource `name` with the clusters at these positions read again; a copy."""
    allocatable, eligible = column.allocatable.copy(), column.eligible.copy()
    for position, cluster in clusters.items():
        value = cluster.allocatable.get(name)
        readable = value is not None and name in cluster.capacity
        eligible[position] = readable
        allocatable[position] = approx_float(value) if value is not None and readable else 0.0
    return ResourceColumn(allocatable, eligible)


def _owner(decision: PlacementDecision) -> tuple[str, str | None]:
    return decision.namespace, decision.labels.get(PLACEMENT_LABEL)


def _decision_names(decisions: Iterable[PlacementDecision]) -> list[tuple[str, tuple[str, ...]]]:
    """What tells two sets of a placement's decisions apart: page names and the clusters they list."""
    return sorted((d.name, tuple(d.cluster_names)) for d in decisions)


class OcmInventory:
    """ManagedClusters, sets, bindings, AddOnPlacementScores and PlacementDecisions of one hub."""

    def __init__(
        self,
        clusters: Iterable[ManagedCluster],
        cluster_sets: Iterable[ManagedClusterSet] = (),
        bindings: Iterable[ManagedClusterSetBinding] = (),
        add_on_scores: Iterable[AddOnPlacementScore] = (),
        decisions: Iterable[PlacementDecision] = (),
    ) -> None:
        by_name = {c.name: c for c in clusters}
        self.clusters: tuple[ManagedCluster, ...] = tuple(by_name[n] for n in sorted(by_name))
        self.names: tuple[str, ...] = tuple(c.name for c in self.clusters)
        self.position: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.cluster_sets: dict[str, ManagedClusterSet] = {s.name: s for s in cluster_sets}
        self.bindings: tuple[ManagedClusterSetBinding, ...] = tuple(bindings)
        self.add_on_scores: dict[tuple[str, str], AddOnPlacementScore] = {
            (s.namespace, s.name): s for s in add_on_scores
        }
        self._initial_decisions: tuple[PlacementDecision, ...] = tuple(decisions)
        self._decision_index: DecisionIndex | None = None
        # guards `_decision_index`: built on first use, then swapped whole by each replacement
        self._decisions_lock = Lock()
        self._set_masks: dict[str, np.ndarray] = {}
        self._resources: dict[str, ResourceColumn] = {}
        self._add_ons: dict[str, AddOnColumn] = {}
        self._projections: dict[Hashable, ProjectionCodes] = {}

    @property
    def size(self) -> int:
        return len(self.clusters)

    def cluster(self, name: str) -> ManagedCluster | None:
        position = self.position.get(name)
        return None if position is None else self.clusters[position]

    def warm(self) -> None:
        """Build now the columns every placement reads whatever its spec (labels, claims, taints, the
        deleting mask and the allocatable of the resources the prioritizers score), which are otherwise
        built by the first placement that asks: a worker warms its snapshot before it takes tasks."""
        self.deleting, self.taints, self.labels, self.claims  # noqa: B018 - each builds and caches a column
        for resource in SCORED_RESOURCES.values():
            self.resource(resource)

    @cached_property
    def deleting(self) -> np.ndarray:
        return np.fromiter((c.is_deleting for c in self.clusters), dtype=bool, count=self.size)

    @cached_property
    def taints(self) -> TaintColumns:
        return TaintColumns.build(self.clusters)

    @cached_property
    def labels(self) -> LabelIndex:
        return LabelIndex([c.labels for c in self.clusters])

    @cached_property
    def claims(self) -> LabelIndex:
        return LabelIndex([c.claim_map for c in self.clusters])

    @cached_property
    def bindings_by_namespace(self) -> dict[str, list[ManagedClusterSetBinding]]:
        grouped: dict[str, list[ManagedClusterSetBinding]] = defaultdict(list)
        for binding in self.bindings:
            grouped[binding.namespace].append(binding)
        return dict(grouped)

    def set_mask(self, set_name: str) -> np.ndarray:
        """Members of an existing set as a mask; raises ClusterSetSelectorError for an unknown type."""
        if set_name not in self._set_masks:
            selector = cluster_set_selector(self.cluster_sets[set_name])
            mask = (
                np.zeros(self.size, dtype=bool) if selector is None else self.labels.selector_mask(selector)
            )
            mask.flags.writeable = False
            self._set_masks[set_name] = mask
        return self._set_masks[set_name]

    def resource(self, resource_name: str) -> ResourceColumn:
        if resource_name not in self._resources:
            allocatable = np.zeros(self.size, dtype=np.float64)
            eligible = np.zeros(self.size, dtype=bool)
            for i, cluster in enumerate(self.clusters):
                value = cluster.allocatable.get(resource_name)
                if value is not None and resource_name in cluster.capacity:
                    allocatable[i] = approx_float(value)
                    eligible[i] = True
            self._resources[resource_name] = ResourceColumn(allocatable, eligible)
        return self._resources[resource_name]

    def add_on(self, resource_name: str) -> AddOnColumn:
        if resource_name not in self._add_ons:
            present = np.zeros(self.size, dtype=bool)
            has_valid_until = np.zeros(self.size, dtype=bool)
            valid_until = np.zeros(self.size, dtype=np.int64)
            objects: dict[int, AddOnPlacementScore] = {}
            for (namespace, name), score in self.add_on_scores.items():
                position = self.position.get(namespace)
                if name != resource_name or position is None:
                    continue
                present[position] = True
                objects[position] = score
                if score.valid_until is not None:
                    has_valid_until[position] = True
                    valid_until[position] = epoch_micros(score.valid_until)
            self._add_ons[resource_name] = AddOnColumn(present, has_valid_until, valid_until, objects)
        return self._add_ons[resource_name]

    def projection_codes(
        self,
        key: Hashable,
        projection: Projection,
        built: Callable[[OcmInventory], tuple[np.ndarray, dict[Hashable, int]]] | None = None,
    ) -> np.ndarray:
        """Per cluster position, a code two clusters share exactly when their `projection` (of this
        inventory and a position) is equal; built once per `key`, which names the projection, and shared
        by every placement. `built`, when given, works out the same codes and their table from the whole
        inventory at once (a patched inventory codes its changed clusters by `projection`)."""
        if key not in self._projections:
            if built is None:
                interned: dict[Hashable, int] = {}
                counter = itertools.count()
                codes = np.fromiter(
                    (_code(interned, projection(self, i), counter) for i in range(self.size)),
                    dtype=np.int64,
                    count=self.size,
                )
            else:
                codes, interned = built(self)
                counter = itertools.count(len(interned))
            codes.flags.writeable = False
            self._projections[key] = ProjectionCodes(codes, interned, projection, counter)
        return self._projections[key].codes

    def projection_verdicts(self, key: Hashable, judge: Hashable) -> dict[int, bool]:
        """What `judge` (a pure function of a projection, such as a compiled CEL selector) decided per code
        of the projection `key` (`projection_codes` first), filled in by the caller: shared with every
        inventory patched from this one, so each distinct projection is judged once for all of them."""
        return self._projections[key].verdicts.setdefault(judge, {})

    def patched(
        self,
        clusters: Mapping[str, ManagedCluster | None] = _NOTHING,
        cluster_sets: Mapping[str, ManagedClusterSet | None] = _NOTHING,
        bindings: Mapping[tuple[str, str], ManagedClusterSetBinding | None] = _NOTHING,
        add_on_scores: Mapping[tuple[str, str], AddOnPlacementScore | None] = _NOTHING,
        decisions: Mapping[tuple[str, str], PlacementDecision | None] = _NOTHING,
    ) -> OcmInventory:
        """This inventory with the objects named in each mapping replaced, added or (None) removed:
        clusters by name, sets by name, and bindings, scores and PlacementDecisions by (namespace, name),
        on top of this inventory's current decisions.

        Unchanged objects and columns are shared; each cached column the change reaches is copied and
        patched at the changed positions. Adds and removes shift positions: the columns are first moved
        to the new positions (`positions.Shift`), the added clusters then patched in like changed ones."""
        if not (clusters or cluster_sets or bindings or add_on_scores or decisions):
            return self
        base, fresh = self, set()
        removed = {name for name, cluster in clusters.items() if cluster is None and name in self.position}
        added = [
            name for name, cluster in clusters.items() if cluster is not None and name not in self.position
        ]
        if removed or added:
            base = self._shifted(removed, added)
            fresh = {base.position[name] for name in added}
        scores = _replaced(self.add_on_scores, add_on_scores)
        # the scores of added clusters (stored before them) join the add-on columns with them
        score_changes = {
            **{
                (name, resource): scores.get((name, resource)) for name in added for resource in self._add_ons
            },
            **add_on_scores,
        }
        changed = {base.position[name]: cluster for name, cluster in clusters.items() if cluster is not None}
        patched = copy.copy(base)
        patched.clusters = Shift.replaced_at(base.clusters, changed)
        patched.cluster_sets = _replaced(self.cluster_sets, cluster_sets)
        patched.bindings = tuple(
            _replaced({(b.namespace, b.name): b for b in self.bindings}, bindings).values()
        )
        patched.add_on_scores = scores
        patched._decisions_lock = Lock()
        patched._decision_index = base.decision_index().patched(decisions, base.position)
        base._patch_columns(patched, changed, fresh, set(cluster_sets), bool(bindings), score_changes)
        return patched

    def _shifted(self, removed: set[str], added: Sequence[str]) -> OcmInventory:
        """This inventory without the `removed` clusters and with a placeholder (a cluster with only a
        name) for each `added` one, its cached columns moved to the new positions."""
        shifted = copy.copy(self)
        shift = Shift.of(self.names, (self.position[name] for name in removed), added)
        shifted.clusters = shift.with_placeholders(self.clusters, ManagedCluster)
        shifted.names = shift.names
        shifted.position = dict(zip(shift.names, range(shift.size), strict=True))
        # decisions are counted again over the new positions on first use
        shifted._initial_decisions, shifted._decision_index = self.decisions, None
        shifted._decisions_lock = Lock()
        cached = self.__dict__
        for name in ("deleting", "labels", "claims", "taints"):
            shifted.__dict__.pop(name, None)
        if "deleting" in cached:
            shifted.__dict__["deleting"] = shift.column(self.deleting, False)
        for name in ("labels", "claims"):
            if name in cached:
                shifted.__dict__[name] = cached[name].shifted(shift)
        if "taints" in cached:
            shifted.__dict__["taints"] = self.taints.shifted(shift)
        shifted._set_masks = {name: shift.column(mask, False) for name, mask in self._set_masks.items()}
        shifted._resources = {
            name: ResourceColumn(shift.column(column.allocatable, 0.0), shift.column(column.eligible, False))
            for name, column in self._resources.items()
        }
        shifted._add_ons = {name: column.shifted(shift) for name, column in self._add_ons.items()}
        shifted._projections = {key: codes.shifted(shift) for key, codes in self._projections.items()}
        return shifted

    def _patch_columns(
        self,
        patched: OcmInventory,
        changed: Mapping[int, ManagedCluster],
        fresh: set[int],
        sets_changed: set[str],
        bindings_changed: bool,
        add_on_scores: Mapping[tuple[str, str], AddOnPlacementScore | None],
    ) -> None:
        """Give `patched` this inventory's cached columns, patched where `changed` and the scores reach;
        at the `fresh` positions (placeholders of added clusters) every column is patched."""
        old = self.clusters
        cached = self.__dict__
        for name in ("deleting", "labels", "claims", "taints", "bindings_by_namespace"):
            patched.__dict__.pop(name, None)
        if "deleting" in cached:
            deleting = self.deleting.copy()
            for position, cluster in changed.items():
                deleting[position] = cluster.is_deleting
            patched.__dict__["deleting"] = deleting
        relabelled = {
            p: (old[p].labels, c.labels)
            for p, c in changed.items()
            if p in fresh or c.labels != old[p].labels
        }
        if "labels" in cached:
            patched.__dict__["labels"] = self.labels.patched(relabelled) if relabelled else self.labels
        if "claims" in cached:
            claimed = {
                p: (old[p].claim_map, c.claim_map)
                for p, c in changed.items()
                if p in fresh or c.claims != old[p].claims
            }
            patched.__dict__["claims"] = self.claims.patched(claimed) if claimed else self.claims
        if "taints" in cached:
            tainted = {p: c.taints for p, c in changed.items() if p in fresh or c.taints != old[p].taints}
            patched.__dict__["taints"] = self.taints.patched(tainted) if tainted else self.taints
        if "bindings_by_namespace" in cached and not bindings_changed:
            patched.__dict__["bindings_by_namespace"] = self.bindings_by_namespace
        labels = {position: new for position, (_, new) in relabelled.items()}
        patched._set_masks = {
            name: patched_mask(mask, selector, labels)
            for name, mask in self._set_masks.items()
            if name not in sets_changed
            and (selector := cluster_set_selector(self.cluster_sets[name])) is not None
        }
        patched._resources = {
            name: _patched_resource(column, name, changed) for name, column in self._resources.items()
        }
        scored: dict[str, dict[int, AddOnPlacementScore | None]] = defaultdict(dict)
        for (namespace, resource_name), score in add_on_scores.items():
            if (at := self.position.get(namespace)) is not None:
                scored[resource_name][at] = score
        patched._add_ons = {
            name: column.patched(scored[name]) if name in scored else column
            for name, column in self._add_ons.items()
        }
        reached = {*changed, *(position for positions in scored.values() for position in positions)}
        patched._projections = {
            key: codes.patched(patched, reached) if reached else codes
            for key, codes in self._projections.items()
        }

    def add_on_score_items(self, cluster_name: str, resource_name: str) -> list[dict[str, object]]:
        """`managedCluster.scores(<name>)` for CEL; a missing object is an error, as the lister's NotFound."""
        score = self.add_on_scores.get((cluster_name, resource_name))
        if score is None:
            raise LookupError(
                f'addonplacementscores.cluster.open-cluster-management.io "{resource_name}" not found'
            )
        return [{"name": name, "value": value} for name, value in score.scores]

    def decision_index(self) -> DecisionIndex:
        """The PlacementDecisions as of now, consistent with their counts; built on first use."""
        index = self._decision_index
        if index is None:
            with self._decisions_lock:
                index = self._built_index()
        return index

    def _built_index(self) -> DecisionIndex:
        """The index, building it from the constructor's decisions if none is yet (lock held)."""
        if self._decision_index is None:
            self._decision_index = DecisionIndex.build(self._initial_decisions, self.position)
        return self._decision_index

    @property
    def decisions(self) -> tuple[PlacementDecision, ...]:
        """Every PlacementDecision of the hub, including replacements made since the inventory was built."""
        return self.decision_index().decisions

    def replace_decisions(self, namespace: str, name: str, decisions: Sequence[PlacementDecision]) -> None:
        """Make `decisions` the placement's own PlacementDecisions, as an informer cache would after the
        placement's decisions were written; safe to call from several threads sharing this inventory."""
        with self._decisions_lock:
            self._decision_index = self._built_index().replaced(namespace, name, decisions, self.position)

    def refresh_decisions(
        self, decisions: Iterable[PlacementDecision], placements: Collection[tuple[str, str]] | None = None
    ) -> int:
        """Make `decisions` (all of the hub's, or all of `placements`') every placement's own (or those
        placements'), replacing only the placements whose decisions differ, in one step readers see
        whole; answers how many placements changed."""
        current: dict[tuple[str, str], list[PlacementDecision]] = defaultdict(list)
        for decision in decisions:
            placement_name = decision.labels.get(PLACEMENT_LABEL)
            if placement_name is not None:
                current[(decision.namespace, placement_name)].append(decision)
        with self._decisions_lock:
            index = start = self._built_index()
            refreshed = 0
            for namespace, name in {*start.by_placement, *current} if placements is None else placements:
                replaced = index.replaced(namespace, name, current.get((namespace, name), []), self.position)
                refreshed += replaced is not index
                index = replaced
            self._decision_index = index
        return refreshed

    def own_decisions(self, namespace: str, placement_name: str) -> list[PlacementDecision]:
        """PlacementDecisions in `namespace` labelled `placement=<placement_name>` (upstream lister query)."""
        return self.decision_index().by_placement.get((namespace, placement_name), [])

    def decided_cluster_names(self, namespace: str, placement_name: str) -> set[str]:
        return {name for d in self.own_decisions(namespace, placement_name) for name in d.cluster_names}

    def decided_mask(self, namespace: str, placement_name: str) -> np.ndarray:
        """Which clusters the placement's own decisions name (names the inventory lacks are left out)."""
        mask = np.zeros(self.size, dtype=bool)
        names = self.decided_cluster_names(namespace, placement_name)
        mask[[position for name in names if (position := self.position.get(name)) is not None]] = True
        return mask

    def balance_counts(self, namespace: str, placement_name: str) -> tuple[np.ndarray, int]:
        """Decision counts without the placement's own decisions, and maxCount over ALL names."""
        index = self.decision_index()
        counts = index.counts.copy()
        outside = Counter(index.outside)
        for decision in index.by_placement.get((namespace, placement_name), []):
            for name in decision.cluster_names:
                position = self.position.get(name)
                if position is None:
                    outside[name] -= 1
                else:
                    counts[position] -= 1
        max_count = max(int(counts.max(initial=0)), max(outside.values(), default=0))
        return counts, max_count
