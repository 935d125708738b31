"""Cluster affinity: the required-terms filter and preferred-terms scoring.

Both work on a whole `FleetInventory` at once (numpy masks), and raise `SchedulingError` in exactly
the situations where upstream's per-cluster evaluation would hit an error: a term is evaluated for a
cluster only while it can still match, so an unreadable property only matters where it is reached.
The single-cluster helpers run the same code on a one-cluster inventory.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.properties import Extremes, PropertyColumn
from placement.scheduler.fleet.types import (
    ASCENDING,
    DESCENDING,
    PROPERTY_OPERATORS,
    ClusterSelectorTerm,
    MemberCluster,
    PreferredClusterSelector,
    SchedulingError,
)
from placement.scheduler.quantity import QuantityError, parse_quantity

PLUGIN = "ClusterAffinity"
REQUIRED_AFFINITY_REASON = "cluster does not match with any of the required cluster affinity terms"


def _expected_value(values: Sequence[str]) -> Fraction:
    if len(values) != 1:
        raise SchedulingError(PLUGIN, "more than one value in the property selector expression")
    try:
        return parse_quantity(values[0])
    except QuantityError as exc:
        raise SchedulingError(
            PLUGIN,
            f"value specified in property selector {values[0]} is not a valid resource quantity: {exc}",
        ) from exc


def _raise_if_unconvertible(term: ClusterSelectorTerm, reached: np.ndarray, what: str) -> None:
    """Upstream converts a term's label selector each time a cluster reaches the term."""
    if term.selector_problem is not None and reached.any():
        raise SchedulingError(
            PLUGIN, f"{what}: failed to parse label selector: {term.selector_problem.message}"
        )


def term_mask(inventory: FleetInventory, term: ClusterSelectorTerm, candidates: np.ndarray) -> np.ndarray:
    """Candidates matching one term: label selector AND every property expression (sorter ignored)."""
    _raise_if_unconvertible(term, candidates, "failed to match the cluster against a required affinity term")
    alive: np.ndarray = candidates & inventory.selector_mask(term.label_selector)
    for requirement in term.property_selector:
        if not alive.any():
            break
        column = inventory.property_column(requirement.name)
        column.raise_if_unreadable(alive)
        # upstream: a cluster without the property does not match; it is not an error
        alive = alive & column.present
        if not alive.any():
            break
        expected = _expected_value(requirement.values)
        if requirement.operator not in PROPERTY_OPERATORS:
            raise SchedulingError(PLUGIN, f"invalid operator: {requirement.operator}")
        alive = column.compare(requirement.operator, expected, alive)
    return alive


def required_affinity_mask(
    inventory: FleetInventory, terms: Sequence[ClusterSelectorTerm], candidates: np.ndarray
) -> np.ndarray:
    """Candidates matching at least one required term (terms are ORed, tried in order)."""
    matched = np.zeros(len(inventory), dtype=bool)
    for term in terms:
        matched |= term_mask(inventory, term, candidates & ~matched)
    return matched


def term_matches(cluster: MemberCluster, term: ClusterSelectorTerm) -> bool:
    """Whether one cluster matches one cluster selector term (raises SchedulingError like upstream)."""
    inventory = FleetInventory([cluster])
    return bool(term_mask(inventory, term, np.ones(1, dtype=bool))[0])


def go_round(values: np.ndarray) -> np.ndarray:
    """Go's `math.Round`: half away from zero, exact (no `x + 0.5` float error)."""
    whole = np.trunc(values)
    fraction = values - whole  # exact in binary floating point
    rounded: np.ndarray = whole + np.sign(values) * (np.abs(fraction) >= 0.5)
    return rounded


def interpolate_weights(values: np.ndarray, extremes: Extremes, weight: int, sort_order: str) -> np.ndarray:
    """Interpolated weights (int64) of observed float values, upstream `interpolateWeightFor`."""
    low, high = extremes.min_float, extremes.max_float
    if math.isinf(low) or math.isinf(high) or low > high or (values < low).any() or (values > high).any():
        bad = float(values[(values < low) | (values > high)][0]) if values.size else math.nan
        raise SchedulingError(
            PLUGIN,
            f"cannot interpolate weight, observed value {bad}, observed min {low}, observed max {high}",
        )
    if low == high:
        # upstream: every cluster reports the same value; weight 0 rather than NaN
        return np.zeros(values.shape, dtype=np.int64)
    if sort_order == DESCENDING:
        raw = ((values - low) / (high - low)) * float(weight)
    elif sort_order == ASCENDING:
        raw = (1 - (values - low) / (high - low)) * float(weight)
    else:
        raise SchedulingError(PLUGIN, f"cannot interpolate weight as sort order {sort_order} is invalid")
    return go_round(raw).astype(np.int64)


def _sorter_weights(
    column: PropertyColumn, matched: np.ndarray, bounds: Extremes | None, weight: int, sort_order: str
) -> tuple[np.ndarray, np.ndarray]:
    """Which matched clusters get a sorter contribution, and how much (upstream `interpolateWeightFor`)."""
    column.raise_if_unreadable(matched)
    # upstream: a cluster without the property gets 0 from this term
    with_value = matched & column.present
    if not with_value.any():
        return with_value, np.zeros(0, dtype=np.int64)
    if bounds is None:
        raise SchedulingError(PLUGIN, f"failed to look up extremums for property {column.name}")
    return with_value, interpolate_weights(column.approx[with_value], bounds, weight, sort_order)


def interpolate_weight(
    cluster: MemberCluster, property_name: str, sort_order: str, weight: int, extremes: Extremes | None
) -> int:
    """One cluster's interpolated weight for a property sorter; 0 when the cluster lacks the property."""
    column = FleetInventory([cluster]).property_column(property_name)
    with_value, weights = _sorter_weights(column, np.ones(1, dtype=bool), extremes, weight, sort_order)
    return int(weights[0]) if with_value[0] else 0


def observed_extremes(
    inventory: FleetInventory, preferred: Sequence[PreferredClusterSelector]
) -> dict[str, Extremes | None]:
    """PreScore: min/max of every sorter property over ALL member clusters (filtered ones included)."""
    extremes: dict[str, Extremes | None] = {}
    for term in preferred:
        sorter = term.preference.property_sorter
        if sorter is not None and sorter.name not in extremes:
            extremes[sorter.name] = inventory.property_column(sorter.name).extremes()
    return extremes


def affinity_scores(
    inventory: FleetInventory,
    preferred: Sequence[PreferredClusterSelector],
    candidates: np.ndarray,
    extremes: Mapping[str, Extremes | None] | None = None,
) -> np.ndarray:
    """AffinityScore (int64) of each candidate: the sum over preferred terms with a non-zero weight."""
    scores = np.zeros(len(inventory), dtype=np.int64)
    if extremes is None:
        # upstream PreScore scans every sorter of every preferred term, weight 0 included, and may fail
        extremes = observed_extremes(inventory, preferred)
    if not any(term.weight for term in preferred):
        return scores
    for term in preferred:
        if term.weight == 0:
            continue
        _raise_if_unconvertible(term.preference, candidates, "failed to calculate the affinity score")
        matched = candidates & inventory.selector_mask(term.preference.label_selector)
        sorter = term.preference.property_sorter
        if sorter is None:
            scores[matched] += term.weight
            continue
        with_value, weights = _sorter_weights(
            inventory.property_column(sorter.name),
            matched,
            extremes.get(sorter.name),
            term.weight,
            sorter.sort_order,
        )
        scores[with_value] += weights
    return scores


def preferred_affinity_score(
    cluster: MemberCluster,
    preferred: Sequence[PreferredClusterSelector],
    extremes: Mapping[str, Extremes | None],
) -> int:
    """AffinityScore of one cluster given the cycle's observed extremes."""
    inventory = FleetInventory([cluster])
    return int(affinity_scores(inventory, preferred, np.ones(1, dtype=bool), extremes)[0])
