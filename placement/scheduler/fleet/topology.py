"""Topology spread constraints: PostBatch limit, DoNotSchedule filter, spread score.

Domains are the distinct values of a topology key among ALL member clusters; a domain's count is the
number of its clusters holding a scheduled or bound binding under the current policy. `TopologySpread`
keeps those counts and updates them one binding at a time, so the greedy one-cluster-per-cycle loop
costs O(clusters) numpy work per pick instead of a rescan of every binding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.types import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, TopologySpreadConstraint

PLUGIN = "TopologySpreadConstraints"
# upstream: skewChangeScoreFactor = -1, maxSkewViolationPenality = 1000
SKEW_CHANGE_SCORE_FACTOR = -1
VIOLATION_PENALTY = 1000
NO_VIOLATION = -1


def violation_reason(constraint: TopologySpreadConstraint) -> str:
    """The DoNotSchedule filter reason for `constraint`."""
    return (
        f'violated doNotSchedule topology spread constraint "{constraint.topology_key}" '
        f"(max skew {constraint.max_skew})"
    )


def skew_changes(counts: np.ndarray, max_skew: int) -> tuple[np.ndarray, np.ndarray]:
    """For each domain: would one more binding there violate `max_skew`, and the skew change (-1/0/+1).

    upstream `willViolate`: from the smallest, second-smallest and largest counts; note that a
    placement that reduces the skew still violates when the skew left afterwards exceeds maxSkew.
    """
    if not counts.size:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    ordered = np.sort(counts)
    smallest, largest = ordered[0], ordered[-1]
    second_smallest = ordered[1] if counts.size >= 2 else smallest
    skew = int(largest - smallest)
    if largest == smallest:
        change = np.ones(counts.size, dtype=np.int64)
    else:
        only_minimum = (counts == smallest) & (smallest != second_smallest)
        change = np.where(only_minimum, -1, np.where(counts == largest, 1, 0)).astype(np.int64)
    return skew + change > max_skew, change


def will_violate(domain_counts: Mapping[str, int], domain: str, max_skew: int) -> tuple[bool, int]:
    """One domain's (violated, skew change) given every domain's count."""
    names = list(domain_counts)
    violated, change = skew_changes(np.array([domain_counts[n] for n in names], dtype=np.int64), max_skew)
    position = names.index(domain)
    return bool(violated[position]), int(change[position])


class TopologySpread:
    """Domain counts for every constraint, and the filter/score they imply for each cluster."""

    def __init__(
        self,
        inventory: FleetInventory,
        constraints: Sequence[TopologySpreadConstraint],
        has_binding: np.ndarray,
    ) -> None:
        # upstream evaluates every DoNotSchedule constraint before any ScheduleAnyway one
        self.constraints = tuple(
            [c for c in constraints if c.when_unsatisfiable != SCHEDULE_ANYWAY]
            + [c for c in constraints if c.when_unsatisfiable == SCHEDULE_ANYWAY]
        )
        self._size = len(inventory)
        self._domains = [inventory.label(c.topology_key).domain_count for c in self.constraints]
        # clusters without the label point at an extra, neutral last slot: never violated, score 0
        self._codes = [
            np.where(codes >= 0, codes, domains)
            for codes, domains in zip(
                (inventory.label(c.topology_key).codes for c in self.constraints), self._domains, strict=True
            )
        ]
        self._counts = [
            np.bincount(codes[has_binding & (codes < domains)], minlength=domains).astype(np.int64)
            for codes, domains in zip(self._codes, self._domains, strict=True)
        ]
        # A cluster's verdict depends only on its domain under each constraint, so evaluate() works on the
        # distinct domain combinations ("cells") and gathers per cluster once.
        if len(self._codes) == 1:
            self._cells = self._codes[0]
            self._cell_domains = [np.arange(self._domains[0] + 1)]
        else:
            radix = np.cumprod([1] + [d + 1 for d in self._domains[:-1]])
            mixed = sum(codes * np.int64(r) for codes, r in zip(self._codes, radix, strict=True))
            combos, self._cells = np.unique(mixed, return_inverse=True)
            self._cell_domains = [(combos // r) % (d + 1) for r, d in zip(radix, self._domains, strict=True)]

    def add_binding(self, index: int) -> None:
        """Count a new scheduled binding on the cluster at `index`."""
        for codes, counts, domains in zip(self._codes, self._counts, self._domains, strict=True):
            if codes[index] < domains:
                counts[codes[index]] += 1

    def evaluate(self) -> tuple[np.ndarray, np.ndarray]:
        """(index of the first violated DoNotSchedule constraint or -1, topology spread score) per cluster.

        A cluster filtered out by an earlier DoNotSchedule constraint keeps that first violation (its
        score no longer matters).
        """
        cells = self._cell_domains[0].size
        violation = np.full(cells, NO_VIOLATION, dtype=np.int64)
        scores = np.zeros(cells, dtype=np.int64)
        for position, constraint in enumerate(self.constraints):
            violated, change = skew_changes(self._counts[position], constraint.max_skew)
            domain = self._cell_domains[position]
            violated, change = np.append(violated, False)[domain], np.append(change, 0)[domain]
            if constraint.when_unsatisfiable == DO_NOT_SCHEDULE:
                violation[violated & (violation == NO_VIOLATION)] = position
                scores += np.where(violated, 0, SKEW_CHANGE_SCORE_FACTOR * change)
            else:
                scores += np.where(violated, -VIOLATION_PENALTY, SKEW_CHANGE_SCORE_FACTOR * change)
        return violation[self._cells], scores[self._cells]
