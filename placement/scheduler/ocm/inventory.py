"""The hub state one scheduling pass reads, indexed once and reused across many placements.

Clusters are kept sorted by name, so a cluster's position is also its rank in Go's byte-wise name order
(Python compares code points, which orders UTF-8 the same way). Everything a prioritizer or filter
needs per cluster is a numpy column built lazily on first use; per-placement work then touches only
arrays, plus Python objects for the few tainted clusters and the selected ones.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

import numpy as np

from placement.scheduler.labels import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, LabelSelector, Requirement
from placement.scheduler.ocm.clustersets import cluster_set_selector
from placement.scheduler.ocm.types import (
    PLACEMENT_LABEL,
    AddOnPlacementScore,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    PlacementDecision,
)
from placement.scheduler.quantity import approx_float

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
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
        self.decisions: tuple[PlacementDecision, ...] = tuple(decisions)
        self._set_masks: dict[str, np.ndarray] = {}
        self._resources: dict[str, ResourceColumn] = {}
        self._add_ons: dict[str, AddOnColumn] = {}

    @property
    def size(self) -> int:
        return len(self.clusters)

    def cluster(self, name: str) -> ManagedCluster | None:
        position = self.position.get(name)
        return None if position is None else self.clusters[position]

    @cached_property
    def deleting(self) -> np.ndarray:
        return np.fromiter((c.is_deleting for c in self.clusters), dtype=bool, count=self.size)

    @cached_property
    def tainted(self) -> np.ndarray:
        """Positions of the clusters that carry any taint (usually few)."""
        return np.fromiter((i for i, c in enumerate(self.clusters) if c.taints), dtype=np.int64)

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

    def add_on_score_items(self, cluster_name: str, resource_name: str) -> list[dict[str, object]]:
        """`managedCluster.scores(<name>)` for CEL; a missing object is an error, as the lister's NotFound."""
        score = self.add_on_scores.get((cluster_name, resource_name))
        if score is None:
            raise LookupError(
                f'addonplacementscores.cluster.open-cluster-management.io "{resource_name}" not found'
            )
        return [{"name": name, "value": value} for name, value in score.scores]

    @cached_property
    def _decision_counts(self) -> tuple[np.ndarray, Counter[str]]:
        """ClusterDecision entries per cluster over ALL PlacementDecisions; unknown names kept apart."""
        counts = np.zeros(self.size, dtype=np.int64)
        outside: Counter[str] = Counter()
        positions: list[int] = []
        for decision in self.decisions:
            for name in decision.cluster_names:
                position = self.position.get(name)
                if position is None:
                    outside[name] += 1
                else:
                    positions.append(position)
        np.add.at(counts, np.asarray(positions, dtype=np.int64), 1)
        counts.flags.writeable = False
        return counts, outside

    @cached_property
    def _decisions_by_placement(self) -> dict[tuple[str, str], list[PlacementDecision]]:
        grouped: dict[tuple[str, str], list[PlacementDecision]] = defaultdict(list)
        for decision in self.decisions:
            placement_name = decision.labels.get(PLACEMENT_LABEL)
            if placement_name is not None:
                grouped[(decision.namespace, placement_name)].append(decision)
        return dict(grouped)

    def own_decisions(self, namespace: str, placement_name: str) -> list[PlacementDecision]:
        """PlacementDecisions in `namespace` labelled `placement=<placement_name>` (upstream lister query)."""
        return self._decisions_by_placement.get((namespace, placement_name), [])

    def decided_cluster_names(self, namespace: str, placement_name: str) -> set[str]:
        return {name for d in self.own_decisions(namespace, placement_name) for name in d.cluster_names}

    def balance_counts(self, namespace: str, placement_name: str) -> tuple[np.ndarray, int]:
        """Decision counts without the placement's own decisions, and maxCount over ALL names."""
        all_counts, all_outside = self._decision_counts
        counts = all_counts.copy()
        outside = Counter(all_outside)
        for decision in self.own_decisions(namespace, placement_name):
            for name in decision.cluster_names:
                position = self.position.get(name)
                if position is None:
                    outside[name] -= 1
                else:
                    counts[position] -= 1
        max_count = max(int(counts.max(initial=0)), max(outside.values(), default=0))
        return counts, max_count
