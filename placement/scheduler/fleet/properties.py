"""Cluster property lookup, per cluster and as inventory columns.

`resources.kubernetes-fleet.io/<capacityType>-<resource>` reads `status.resourceUsage`; every other
name reads `status.properties[name].value`. A missing property is not an error (the term simply does
not match); a malformed resource property name or a value that is not a quantity IS an error, and it
aborts the whole scheduling cycle (`PropertyError`), exactly like a plugin error upstream.

The rollout planner imports `property_text` / `property_quantity`; keep their signatures stable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from placement.scheduler.fleet.types import MemberCluster, SchedulingError
from placement.scheduler.positions import Shift
from placement.scheduler.quantity import QuantityError, approx_float, parse_quantity

RESOURCE_PROPERTY_PREFIX = "resources.kubernetes-fleet.io/"
TOTAL_CAPACITY, ALLOCATABLE_CAPACITY, AVAILABLE_CAPACITY = "total", "allocatable", "available"
CAPACITY_TYPES = (TOTAL_CAPACITY, ALLOCATABLE_CAPACITY, AVAILABLE_CAPACITY)

NODE_COUNT_PROPERTY = "kubernetes-fleet.io/node-count"
PER_CPU_CORE_COST_PROPERTY = "kubernetes.azure.com/per-cpu-core-cost"
PER_GB_MEMORY_COST_PROPERTY = "kubernetes.azure.com/per-gb-memory-cost"

# Float views within this relative distance are compared exactly (Go compares Quantity values exactly).
_EXACT_RECHECK_TOLERANCE = 1e-9


class PropertyError(SchedulingError):
    """A property that cannot be read: malformed resource property name or a non-quantity value."""

    def __init__(self, message: str) -> None:
        super().__init__("ClusterAffinity", message)


def resource_property_error(name: str) -> str | None:
    """Why a `resources.kubernetes-fleet.io/...` name cannot be read, or None when it can.

    `name` is the part after the prefix. upstream: exactly one `-` between the capacity type
    and the resource, and the capacity type is total, allocatable or available.
    """
    parts = name.split("-")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return f"invalid resource property name: {name}"
    if parts[0] not in CAPACITY_TYPES:
        return f"invalid capacity type {parts[0]} in resource property name {name}"
    return None


def _resource_usage(cluster: MemberCluster, capacity_type: str) -> Mapping[str, str]:
    if capacity_type == TOTAL_CAPACITY:
        return cluster.capacity
    if capacity_type == ALLOCATABLE_CAPACITY:
        return cluster.allocatable
    return cluster.available


def property_text(cluster: MemberCluster, name: str) -> str | None:
    """The observed value string of property `name` on `cluster`; None when the cluster lacks it.

    Raises PropertyError for a malformed resource property name.
    """
    if name.startswith(RESOURCE_PROPERTY_PREFIX):
        short = name[len(RESOURCE_PROPERTY_PREFIX) :]
        if (why := resource_property_error(short)) is not None:
            raise PropertyError(
                f"failed to retrieve resource property value for {short} from cluster {cluster.name}: {why}"
            )
        capacity_type, resource = short.split("-")
        return _resource_usage(cluster, capacity_type).get(resource)
    entry = cluster.properties.get(name)
    return None if entry is None else entry.value


def _value_error(cluster_name: str, name: str, text: str, exc: QuantityError) -> PropertyError:
    return PropertyError(
        f"value {text} of property {name} from cluster {cluster_name} is not a valid quantity: {exc}"
    )


def property_quantity(cluster: MemberCluster, name: str) -> Fraction | None:
    """The exact value of property `name` on `cluster`, None when missing; PropertyError when unreadable."""
    text = property_text(cluster, name)
    if text is None:
        return None
    try:
        return parse_quantity(text)
    except QuantityError as exc:
        raise _value_error(cluster.name, name, text, exc) from exc


@dataclass(frozen=True, slots=True)
class Extremes:
    """Observed min/max of a property across all member clusters (exact and float views)."""

    minimum: Fraction
    maximum: Fraction
    min_float: float
    max_float: float


@dataclass(slots=True)
class PropertyColumn:
    """One property read across an inventory: presence mask, float views, exact values on demand."""

    name: str
    cluster_names: Sequence[str]
    texts: list[str | None]
    present: np.ndarray  # bool: value found and parsed
    invalid: np.ndarray  # bool: value found but not a quantity
    approx: np.ndarray  # float64: Go's AsApproximateFloat64, NaN where not present
    name_error: str | None = None
    _exact: dict[int, Fraction] = field(default_factory=dict)
    _extremes: tuple[Extremes | None] | None = None

    @classmethod
    def build(cls, clusters: Sequence[MemberCluster], name: str) -> PropertyColumn:
        """Read `name` from every cluster once."""
        count = len(clusters)
        names = [c.name for c in clusters]
        present = np.zeros(count, dtype=bool)
        invalid = np.zeros(count, dtype=bool)
        approx = np.full(count, np.nan)
        name_error = None
        if name.startswith(RESOURCE_PROPERTY_PREFIX):
            name_error = resource_property_error(name[len(RESOURCE_PROPERTY_PREFIX) :])
        texts: list[str | None] = [None] * count
        column = cls(name, names, texts, present, invalid, approx, name_error)
        column._read(enumerate(clusters))
        return column

    def _read(self, clusters: Iterable[tuple[int, MemberCluster]]) -> None:
        """Fill the entries of these (index, cluster) pairs (of a column being built)."""
        if self.name_error is not None:
            return
        for index, cluster in clusters:
            text = self.texts[index] = property_text(cluster, self.name)
            self.present[index] = self.invalid[index] = False
            self.approx[index] = np.nan
            if text is None:
                continue
            try:
                self.approx[index] = approx_float(text)
                self.present[index] = True
            except QuantityError:
                self.invalid[index] = True

    def shifted(self, shift: Shift, cluster_names: Sequence[str]) -> PropertyColumn:
        """This column at new positions (of clusters `cluster_names`); added clusters are read in by
        `patched`."""
        return PropertyColumn(
            self.name,
            cluster_names,
            shift.listed(self.texts, None),
            shift.column(self.present, False),
            shift.column(self.invalid, False),
            shift.column(self.approx, np.nan),
            self.name_error,
            shift.keys(self._exact),
        )

    def patched(self, clusters: Mapping[int, MemberCluster]) -> PropertyColumn:
        """This column with the clusters at these indices read again (same names, same positions);
        copies, so a reader of this column keeps seeing it unchanged."""
        exact = {index: value for index, value in self._exact.items() if index not in clusters}
        column = PropertyColumn(
            self.name,
            self.cluster_names,
            list(self.texts),
            self.present.copy(),
            self.invalid.copy(),
            self.approx.copy(),
            self.name_error,
            exact,
        )
        column._read(clusters.items())
        return column

    def error_at(self, index: int) -> PropertyError:
        """The error reading this property on the cluster at `index` raises upstream."""
        cluster_name = self.cluster_names[index]
        if self.name_error is not None:
            short = self.name[len(RESOURCE_PROPERTY_PREFIX) :]
            return PropertyError(
                f"failed to retrieve resource property value for {short} from cluster {cluster_name}: "
                f"{self.name_error}"
            )
        text = self.texts[index] or ""
        try:
            parse_quantity(text)
        except QuantityError as exc:
            return _value_error(cluster_name, self.name, text, exc)
        raise AssertionError(f"property {self.name} is readable on {cluster_name}")

    def raise_if_unreadable(self, reached: np.ndarray) -> None:
        """Raise the first error among the clusters whose evaluation reaches this property."""
        if self.name_error is not None:
            hits = np.flatnonzero(reached)
        else:
            hits = np.flatnonzero(reached & self.invalid)
        if hits.size:
            raise self.error_at(int(hits[0]))

    def exact(self, index: int) -> Fraction:
        """Exact value at `index` (the cluster must have the property)."""
        value = self._exact.get(index)
        if value is None:
            value = parse_quantity(self.texts[index] or "")
            self._exact[index] = value
        return value

    def compare(self, operator: str, expected: Fraction, candidates: np.ndarray) -> np.ndarray:
        """Mask of candidates (which must all have the property) where `observed <op> expected` holds.

        Float views decide clear cases; values within float error of `expected` are compared exactly.
        """
        sign = np.zeros(len(self.present), dtype=np.int8)
        expected_float = float(expected)
        values = self.approx
        tolerance = _EXACT_RECHECK_TOLERANCE * max(abs(expected_float), 1e-300)
        close = candidates & ~(np.abs(values - expected_float) > tolerance)
        sign[candidates & (values > expected_float)] = 1
        sign[candidates & (values < expected_float)] = -1
        for index in np.flatnonzero(close):
            observed = self.exact(int(index))
            sign[index] = (observed > expected) - (observed < expected)
        matched: np.ndarray = candidates & _OPERATOR_TESTS[operator](sign)
        return matched

    def extremes(self) -> Extremes | None:
        """Exact min/max over every cluster that has the property (first cluster wins a tie).

        Raises PropertyError when any cluster's value cannot be read (upstream PreScore scans all).
        """
        if self._extremes is None:
            self.raise_if_unreadable(np.ones(len(self.present), dtype=bool))
            self._extremes = (self._find_extremes(),)
        return self._extremes[0]

    def _find_extremes(self) -> Extremes | None:
        indices = np.flatnonzero(self.present)
        if not indices.size:
            return None
        values = self.approx[indices]
        low = self._exact_extreme(indices, values, float(values.min()), lowest=True)
        high = self._exact_extreme(indices, values, float(values.max()), lowest=False)
        return Extremes(self.exact(low), self.exact(high), float(self.approx[low]), float(self.approx[high]))

    def _exact_extreme(self, indices: np.ndarray, values: np.ndarray, bound: float, *, lowest: bool) -> int:
        # only values within float error of the float extreme can be the exact extreme
        tolerance = _EXACT_RECHECK_TOLERANCE * max(abs(bound), 1e-300) if math.isfinite(bound) else math.inf
        best: int | None = None
        for index in indices[np.abs(values - bound) <= tolerance]:
            value = self.exact(int(index))
            if best is None or (value < self.exact(best) if lowest else value > self.exact(best)):
                best = int(index)
        return best if best is not None else int(indices[0])


_OPERATOR_TESTS = {
    "Gt": lambda sign: sign > 0,
    "Ge": lambda sign: sign >= 0,
    "Lt": lambda sign: sign < 0,
    "Le": lambda sign: sign <= 0,
    "Eq": lambda sign: sign == 0,
    "Ne": lambda sign: sign != 0,
}
