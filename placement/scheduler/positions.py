"""Moving an inventory's per-cluster columns when clusters are added or removed.

Inventories keep clusters sorted by name, so an add or a remove shifts the positions after it. A `Shift`
maps every old position to its new one (or drops it) and moves a column in one numpy step, leaving the
positions of added clusters at a fill value for the caller to patch (they are placeholders until then).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
# the new position of a removed cluster
GONE = -1


@dataclass(frozen=True, slots=True)
class Shift:
    """`moved[old position]`: the cluster's new position, or GONE; `names`: the new sorted names, and
    `added`: the new position of each added name."""

    moved: np.ndarray
    names: tuple[str, ...]
    added: dict[str, int]

    @classmethod
    def of(cls, names: Sequence[str], removed: Iterable[int], added: Iterable[str]) -> Shift:
        """Remove the clusters at positions `removed` from the sorted `names` and insert the `added` ones
        (names not among them); positions are counted, not looked up, so a shift costs numpy steps plus
        a list copy, not a dict of every name."""
        gone = np.asarray(sorted(removed), dtype=np.int64)
        inserted = sorted(added)
        slots = np.asarray([bisect.bisect_left(names, name) for name in inserted], dtype=np.int64)
        old = np.arange(len(names), dtype=np.int64)
        moved = old - np.searchsorted(gone, old, side="left") + np.searchsorted(slots, old, side="right")
        moved[gone] = GONE
        new_names = list(names)
        for position in reversed(gone.tolist()):
            del new_names[position]
        for name in inserted:
            bisect.insort(new_names, name)
        return cls(moved, tuple(new_names), {name: bisect.bisect_left(new_names, name) for name in inserted})

    @property
    def size(self) -> int:
        return len(self.names)

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
        new = self.moved[np.fromiter(items, dtype=np.int64, count=len(items))]
        kept = new >= 0
        return dict(zip(new[kept].tolist(), itertools.compress(items.values(), kept.tolist()), strict=True))

    def listed(self, old: Sequence[T], fill: T) -> list[T]:
        """A list per position at the new positions, `fill` at the added ones."""
        new = [fill] * self.size
        for position, item in zip(self.moved.tolist(), old, strict=True):
            if position >= 0:
                new[position] = item
        return new

    @staticmethod
    def replaced_at(items: Sequence[T], changed: Mapping[int, T]) -> tuple[T, ...]:
        """`items` with the item at each position of `changed` replaced (the same positions)."""
        listed = list(items)
        for position, item in changed.items():
            listed[position] = item
        return tuple(listed)

    def with_placeholders(self, old: Sequence[T], placeholder: Callable[[str], T]) -> tuple[T, ...]:
        """The objects at their new positions, each added one a `placeholder(name)` to be patched."""
        listed = self.listed(old, placeholder(""))
        for name, position in self.added.items():
            listed[position] = placeholder(name)
        return tuple(listed)
