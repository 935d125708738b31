"""Prioritizer weights and scores, computed on numpy columns with Go's float expressions.

Every score is int64. Go's `int64(f)` truncates toward zero; `np.trunc` over the identical IEEE-754
expression sequence gives the same integers (e.g. 19.999999999999996 -> 19).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from placement.scheduler.ocm.inventory import OcmInventory, epoch_micros
from placement.scheduler.ocm.types import (
    ADD_ON,
    ADDITIVE,
    BALANCE,
    BUILT_IN,
    BUILT_IN_PRIORITIZERS,
    EXACT,
    SCORED_RESOURCES,
    STEADY,
    Placement,
    PrioritizerPolicy,
    ScoreCoordinate,
)

MAX_CLUSTER_SCORE = 100
# upstream keys weights by the ScoreCoordinate struct, whose addOn is a pointer: (type, builtIn, config index)
CoordinateKey = tuple[str, str, int | None]
_DEFAULT_WEIGHTS: dict[CoordinateKey, tuple[ScoreCoordinate, int]] = {
    (BUILT_IN, BALANCE, None): (ScoreCoordinate(BUILT_IN, BALANCE), 1),
    (BUILT_IN, STEADY, None): (ScoreCoordinate(BUILT_IN, STEADY), 1),
}


class PrioritizerMisconfigured(ValueError):
    """The weights cannot be built; str(e) is upstream's Misconfigured message (plugin name empty)."""


@dataclass(frozen=True, slots=True)
class Prioritizer:
    """One enabled prioritizer: its result name (`Balance`, `AddOn/<res>/<score>`, ...) and weight."""

    name: str
    weight: int
    coordinate: ScoreCoordinate


@dataclass(frozen=True, slots=True)
class PrioritizerScores:
    """Scores aligned with the filtered clusters; `scored` False means no map entry (counts as 0)."""

    prioritizer: Prioritizer
    values: np.ndarray
    scored: np.ndarray
    warning: str = ""


def prioritizers_for(policy: PrioritizerPolicy) -> list[Prioritizer]:
    """Upstream getWeights + getPrioritizers: mode, overrides, weight-0 removal, name validation."""
    if policy.mode == EXACT:
        weights: dict[CoordinateKey, tuple[ScoreCoordinate, int]] = {}
    elif policy.mode in ("", ADDITIVE):
        weights = dict(_DEFAULT_WEIGHTS)
    else:
        raise PrioritizerMisconfigured(f"incorrect prioritizer policy mode: {policy.mode}")
    for index, config in enumerate(policy.configurations):
        coordinate = config.score_coordinate
        if coordinate is None:
            raise PrioritizerMisconfigured("scoreCoordinate field is required")
        key = (coordinate.type, coordinate.built_in, None if coordinate.add_on is None else index)
        weights[key] = (coordinate, config.weight)
    return [_prioritizer(c, w) for c, w in weights.values() if w != 0]


def _prioritizer(coordinate: ScoreCoordinate, weight: int) -> Prioritizer:
    if coordinate.type == BUILT_IN:
        if coordinate.built_in not in BUILT_IN_PRIORITIZERS:
            raise PrioritizerMisconfigured(f"incorrect builtin prioritizer: {coordinate.built_in}")
        return Prioritizer(coordinate.built_in, weight, coordinate)
    if coordinate.add_on is None:
        raise PrioritizerMisconfigured("addOn should not be empty")
    return Prioritizer(
        f"{ADD_ON}/{coordinate.add_on.resource_name}/{coordinate.add_on.score_name}", weight, coordinate
    )


def score(
    prioritizer: Prioritizer,
    placement: Placement,
    inventory: OcmInventory,
    filtered: np.ndarray,
    now: datetime,
) -> PrioritizerScores:
    """Run one prioritizer over the filtered clusters (inventory positions)."""
    if prioritizer.name == BALANCE:
        values, scored = balance_scores(placement, inventory, filtered)
    elif prioritizer.name == STEADY:
        values, scored = steady_scores(placement, inventory, filtered)
    elif prioritizer.name in SCORED_RESOURCES:
        values, scored = resource_scores(SCORED_RESOURCES[prioritizer.name], inventory, filtered)
    else:
        return add_on_scores(prioritizer, inventory, filtered, now)
    return PrioritizerScores(prioritizer, values, scored)


def balance_scores(
    placement: Placement, inventory: OcmInventory, filtered: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """100 for clusters no other placement decided; else 2*int64(100*(0.5-count/maxCount))."""
    counts, max_count = inventory.balance_counts(placement.namespace, placement.name)
    count = counts[filtered]
    values = np.full(len(filtered), MAX_CLUSTER_SCORE, dtype=np.int64)
    decided = count > 0
    if decided.any():
        usage = count[decided].astype(np.float64) / np.float64(max_count)
        # upstream truncates before doubling, so Balance scores are always even
        values[decided] = 2 * np.trunc(np.float64(MAX_CLUSTER_SCORE) * (0.5 - usage)).astype(np.int64)
    return values, np.ones(len(filtered), dtype=bool)


def steady_scores(
    placement: Placement, inventory: OcmInventory, filtered: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """100 for clusters already in this placement's decisions, else 0."""
    decided = inventory.decided_mask(*placement.key)
    values = np.where(decided[filtered], MAX_CLUSTER_SCORE, 0).astype(np.int64)
    return values, np.ones(len(filtered), dtype=bool)


def resource_scores(
    resource: str, inventory: OcmInventory, filtered: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Min-max scaled allocatable; clusters lacking allocatable or capacity get no entry."""
    column = inventory.resource(resource)
    eligible = column.eligible[filtered]
    values = np.zeros(len(filtered), dtype=np.int64)
    if not eligible.any():
        return values, eligible
    allocatable = column.allocatable[filtered][eligible]
    low, high = allocatable.min(), allocatable.max()
    if high - low != 0:
        ratio = (allocatable - low) / (high - low)
        values[eligible] = np.trunc((ratio - 0.5) * 2.0 * 100.0).astype(np.int64)
    else:
        values[eligible] = MAX_CLUSTER_SCORE
    return values, eligible


def add_on_scores(
    prioritizer: Prioritizer, inventory: OcmInventory, filtered: np.ndarray, now: datetime
) -> PrioritizerScores:
    """The add-on's score value; 0 when the object or score is missing or `now > validUntil` (a Warning)."""
    add_on = prioritizer.coordinate.add_on
    assert add_on is not None  # guaranteed by prioritizers_for
    column = inventory.add_on(add_on.resource_name)
    values, found = column.score(add_on.score_name, inventory.size)
    present = column.present[filtered]
    expired = (
        present & column.has_valid_until[filtered] & (epoch_micros(now) > column.valid_until_us[filtered])
    )
    usable = present & ~expired & found[filtered]
    warning = ""
    if expired.any():
        stale = " ".join(f"{inventory.names[p]}/{add_on.resource_name}" for p in filtered[expired])
        warning = f"AddOnPlacementScores {stale} expired"
    return PrioritizerScores(
        prioritizer,
        np.where(usable, values[filtered], 0).astype(np.int64),
        np.ones(len(filtered), dtype=bool),
        warning,
    )
