"""Every taint of a fleet as one row of integer columns, for both families' TaintToleration filters.

A row holds the owning cluster's position and the taint's key, value and effect as codes of the
distinct strings, in cluster order and, within a cluster, in the order of its taints. A toleration is
compared with every row at once by comparing codes, so a placement's tolerations cost a few array
operations instead of a Python loop over the tainted clusters.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from placement.scheduler.positions import Shift

T = TypeVar("T", bound=Hashable)
# the code of a string no taint holds: no row has it, so comparing with it matches nothing
ABSENT = -1


class TaintFields(Protocol):
    """What a row keeps of a taint (OCM's and Fleet's taint types both have these)."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def effect(self) -> str: ...


def _codes(values: Iterable[T]) -> tuple[dict[T, int], np.ndarray]:
    """A code per distinct value (in first-seen order) and the code of every value."""
    table: dict[T, int] = {}
    codes = [table.setdefault(value, len(table)) for value in values]
    return table, np.asarray(codes, dtype=np.int64)


def _equal(column: np.ndarray, table: dict[str, int], text: str) -> np.ndarray:
    """The rows whose `column` holds `text`."""
    matches: np.ndarray = column == table.get(text, ABSENT)
    return matches


@dataclass(frozen=True, slots=True)
class TaintRows:
    """The rows, column by column, and the code tables of the key, value and effect columns; `kind`
    codes the whole (key, value, effect) triple, whose distinct values `kinds` lists in code order."""

    owner: np.ndarray
    key: np.ndarray
    value: np.ndarray
    effect: np.ndarray
    kind: np.ndarray
    keys: dict[str, int]
    values: dict[str, int]
    effects: dict[str, int]
    kinds: list[tuple[str, str, str]]

    @classmethod
    def build(cls, taints: Sequence[Sequence[TaintFields]]) -> TaintRows:
        """The rows of `taints[position]`, the taints of the cluster at each position."""
        rows = [(position, taint) for position, own in enumerate(taints) for taint in own]
        keys, key = _codes(taint.key for _, taint in rows)
        values, value = _codes(taint.value for _, taint in rows)
        effects, effect = _codes(taint.effect for _, taint in rows)
        kinds, kind = _codes((taint.key, taint.value, taint.effect) for _, taint in rows)
        owner = np.asarray([position for position, _ in rows], dtype=np.int64)
        return cls(owner, key, value, effect, kind, keys, values, effects, list(kinds))

    def patched(self, taints: Mapping[int, Sequence[TaintFields]]) -> tuple[TaintRows, np.ndarray]:
        """These rows with the taints of the clusters at the positions of `taints` replaced (positions
        stay), and per new row the old row it copies (-1: a row of a replaced cluster). Rows stay in
        cluster order; strings no row held before get new codes, so codes differ from a fresh `build`'s
        while every comparison answers alike. Nothing of `self` is changed."""
        positions = sorted(taints)
        starts = np.searchsorted(self.owner, positions, side="left")
        ends = np.searchsorted(self.owner, positions, side="right")
        pieces, cursor = [], 0
        for position, start, end in zip(positions, starts.tolist(), ends.tolist(), strict=True):
            pieces += [np.arange(cursor, start), np.full(len(taints[position]), -1)]
            cursor = end
        pieces.append(np.arange(cursor, len(self)))
        source = np.concatenate(pieces).astype(np.int64)
        fresh = source < 0
        added = [(position, taint) for position in positions for taint in taints[position]]
        keys, values, effects = dict(self.keys), dict(self.values), dict(self.effects)
        kinds = {kind: code for code, kind in enumerate(self.kinds)}

        def column(old: np.ndarray, new: Iterable[int]) -> np.ndarray:
            out = np.empty(len(source), dtype=np.int64)
            out[~fresh] = old[source[~fresh]]
            out[fresh] = np.fromiter(new, dtype=np.int64, count=len(added))
            return out

        rows = TaintRows(
            column(self.owner, (position for position, _ in added)),
            column(self.key, (keys.setdefault(t.key, len(keys)) for _, t in added)),
            column(self.value, (values.setdefault(t.value, len(values)) for _, t in added)),
            column(self.effect, (effects.setdefault(t.effect, len(effects)) for _, t in added)),
            column(self.kind, (kinds.setdefault((t.key, t.value, t.effect), len(kinds)) for _, t in added)),
            keys,
            values,
            effects,
            list(kinds),
        )
        return rows, source

    def shifted(self, shift: Shift) -> tuple[TaintRows, np.ndarray]:
        """These rows with their owners moved to new positions (rows of removed clusters dropped), and
        the mask of the rows kept."""
        kept = shift.moved[self.owner] >= 0
        rows = TaintRows(
            shift.moved[self.owner[kept]],
            self.key[kept],
            self.value[kept],
            self.effect[kept],
            self.kind[kept],
            self.keys,
            self.values,
            self.effects,
            self.kinds,
        )
        return rows, kept

    def __len__(self) -> int:
        return len(self.owner)

    def with_key(self, key: str) -> np.ndarray:
        return _equal(self.key, self.keys, key)

    def with_value(self, value: str) -> np.ndarray:
        return _equal(self.value, self.values, value)

    def with_effect(self, effect: str) -> np.ndarray:
        return _equal(self.effect, self.effects, effect)

    def first_per_owner(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(owners, rows): the clusters owning any row of the `rows` mask, in position order, and the
        first such row of each (in its own taint order)."""
        indices = np.flatnonzero(rows)
        owners, first = np.unique(self.owner[indices], return_index=True)
        return owners, indices[first]
