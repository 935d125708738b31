"""Moving an inventory's per-cluster columns when clusters are added or removed.

Inventories keep clusters sorted by name, so an add or a remove shifts the positions after it. A `Shift`
maps every old position to its new one (or drops it) and moves a column in one numpy step, leaving the
positions of added clusters at a fill value for the caller to patch (they are placeholders until then).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
# the new position of a removed cluster
GONE = -1


@dataclass(frozen=True, slots=True)
class Shift:
    """`moved[old position]`: the cluster's new position, or GONE; `size`: the new number of clusters."""

    moved: np.ndarray
    size: int

    @classmethod
    def between(cls, old_names: Sequence[str], new_position: Mapping[str, int]) -> Shift:
        moved = np.fromiter(
            (new_position.get(n, GONE) for n in old_names), dtype=np.int64, count=len(old_names)
        )
        return cls(moved, len(new_position))

    def column(self, old: np.ndarray, fill: Any) -> np.ndarray:
        """`old` at the new positions, `fill` at the added ones; a new array, read-only if `old` was."""
        kept = self.moved >= 0
        new = np.full(self.size, fill, dtype=old.dtype)
        new[self.moved[kept]] = old[kept]
        new.flags.writeable = old.flags.writeable
        return new

    def positions(self, old: np.ndarray) -> np.ndarray:
        """Sorted old positions as sorted new ones, the removed left out (the map keeps order)."""
        new: np.ndarray = self.moved[old]
        kept: np.ndarray = new[new >= 0]
        return kept

    def keys(self, items: Mapping[int, T]) -> dict[int, T]:
        """`items` keyed by new positions, the removed left out."""
        return {int(self.moved[old]): item for old, item in items.items() if self.moved[old] >= 0}

    def listed(self, old: Sequence[T], fill: T) -> list[T]:
        """A list per position at the new positions, `fill` at the added ones."""
        new = [fill] * self.size
        for position, item in zip(self.moved.tolist(), old, strict=True):
            if position >= 0:
                new[position] = item
        return new
