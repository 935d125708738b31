"""`FleetInventory`: the member clusters of one fleet, built once, read column-wise by every cycle.

Clusters are kept sorted by name, so a cluster's index is also its name rank (the PickN tie-break).
Label columns, property columns and label-selector masks are computed on first use and cached: build
one inventory per fleet snapshot and schedule every placement against it. `patched` answers the
inventory after some clusters changed, reusing what did not change: never changing a column a reader
of the old inventory may hold.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from placement.scheduler.fleet.eligibility import EligibilityColumns
from placement.scheduler.fleet.properties import PropertyColumn
from placement.scheduler.fleet.types import MemberCluster
from placement.scheduler.labels import DOES_NOT_EXIST, EXISTS, IN, LabelSelector, patched_mask
from placement.scheduler.positions import Shift
from placement.scheduler.taint_rows import TaintRows


@dataclass(frozen=True, slots=True)
class LabelColumn:
    """One label key across the inventory: an integer code per cluster (-1 = label absent)."""

    codes: np.ndarray
    values: dict[str, int]

    def equals(self, value: str) -> np.ndarray:
        code = self.values.get(value)
        return self.codes == code if code is not None else np.zeros(len(self.codes), dtype=bool)

    def one_of(self, values: Iterable[str]) -> np.ndarray:
        codes = [self.values[v] for v in values if v in self.values]
        return np.isin(self.codes, codes)

    @property
    def domain_count(self) -> int:
        return len(self.values)

    def patched(self, key: str, labels: Mapping[int, Mapping[str, str]]) -> LabelColumn | None:
        """This column with the labels at these positions replaced (a copy), or None when a value no
        cluster holds any more would stay counted as a domain: the caller builds the column again."""
        codes, values = self.codes.copy(), dict(self.values)
        for position, own in labels.items():
            codes[position] = values.setdefault(own[key], len(values)) if key in own else -1
        left = {int(self.codes[position]) for position in labels} - {-1}
        if any(not np.any(codes == code) for code in left):
            return None
        return LabelColumn(codes, values)


class FleetInventory:
    """Member clusters sorted by name, with lazily built columnar views."""

    def __init__(self, clusters: Iterable[MemberCluster]) -> None:
        by_name = {cluster.name: cluster for cluster in clusters}
        self.clusters: tuple[MemberCluster, ...] = tuple(by_name[name] for name in sorted(by_name))
        self.names: tuple[str, ...] = tuple(cluster.name for cluster in self.clusters)
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.taints = TaintRows.build([cluster.taints for cluster in self.clusters])
        self._labels: dict[str, LabelColumn] = {}
        self._properties: dict[str, PropertyColumn] = {}
        self._selector_masks: dict[LabelSelector, np.ndarray] = {}
        self._eligibility: EligibilityColumns | None = None

    def __len__(self) -> int:
        return len(self.clusters)

    def patched(self, clusters: Mapping[str, MemberCluster | None]) -> FleetInventory:
        """This inventory with the clusters named in `clusters` replaced, added or (None) removed.

        Every cached column is copied and patched at the changed positions (a label column whose value
        set changed is built again, its domain count being read by topology spread). Adds and removes
        shift positions: the columns are first moved to the new positions (`positions.Shift`), the added
        clusters then patched in like changed ones."""
        if not clusters:
            return self
        base, fresh = self, set()
        removed = {name for name, cluster in clusters.items() if cluster is None and name in self.index}
        added = [name for name, cluster in clusters.items() if cluster is not None and name not in self.index]
        if removed or added:
            base = self._shifted(removed, added)
            fresh = {base.index[name] for name in added}
        changed = {base.index[name]: cluster for name, cluster in clusters.items() if cluster is not None}
        patched = copy.copy(base)
        patched.clusters = Shift.replaced_at(base.clusters, changed)
        old = base.clusters
        tainted = {i: c.taints for i, c in changed.items() if i in fresh or c.taints != old[i].taints}
        patched.taints = base.taints.patched(tainted)[0] if tainted else base.taints
        relabelled = {i: c.labels for i, c in changed.items() if i in fresh or c.labels != old[i].labels}
        patched._labels = {}
        for key, label_column in base._labels.items():
            patched_column = label_column.patched(key, relabelled) if relabelled else label_column
            patched._labels[key] = patched_column or patched._built_label(key)
        patched._properties = {name: column.patched(changed) for name, column in base._properties.items()}
        patched._selector_masks = {
            selector: patched_mask(mask, selector, relabelled)
            for selector, mask in base._selector_masks.items()
        }
        patched._eligibility = None if base._eligibility is None else base._eligibility.patched(changed)
        return patched

    def _shifted(self, removed: set[str], added: Sequence[str]) -> FleetInventory:
        """This inventory without the `removed` clusters and with a placeholder (a cluster with only a
        name) for each `added` one, its cached columns moved to the new positions; a label column that
        loses a value is built again (on the placeholders, patched after)."""
        shifted = copy.copy(self)
        shift = Shift.of(self.names, (self.index[name] for name in removed), added)
        shifted.clusters = shift.with_placeholders(self.clusters, MemberCluster)
        shifted.names = shift.names
        shifted.index = dict(zip(shift.names, range(shift.size), strict=True))
        shifted.taints = self.taints.shifted(shift)[0]
        shifted._labels = {}
        for key, column in self._labels.items():
            moved = LabelColumn(shift.column(column.codes, -1), column.values)
            whole = np.unique(moved.codes[moved.codes >= 0]).size == len(moved.values)
            shifted._labels[key] = moved if whole else shifted._built_label(key)
        shifted._properties = {
            name: column.shifted(shift, shifted.names) for name, column in self._properties.items()
        }
        shifted._selector_masks = {
            selector: shift.column(mask, False) for selector, mask in self._selector_masks.items()
        }
        shifted._eligibility = None if self._eligibility is None else self._eligibility.shifted(shift)
        return shifted

    def get(self, name: str) -> MemberCluster | None:
        """The member cluster called `name`, or None."""
        index = self.index.get(name)
        return None if index is None else self.clusters[index]

    def label(self, key: str) -> LabelColumn:
        """The column of label `key`."""
        column = self._labels.get(key)
        if column is None:
            column = self._labels[key] = self._built_label(key)
        return column

    def _built_label(self, key: str) -> LabelColumn:
        values: dict[str, int] = {}
        codes = np.fromiter(
            (values.setdefault(c.labels[key], len(values)) if key in c.labels else -1 for c in self.clusters),
            dtype=np.int32,
            count=len(self.clusters),
        )
        return LabelColumn(codes, values)

    def property_column(self, name: str) -> PropertyColumn:
        """The column of property `name` (resource or non-resource)."""
        column = self._properties.get(name)
        if column is None:
            column = self._properties[name] = PropertyColumn.build(self.clusters, name)
        return column

    def warm(self) -> None:
        """Build now the columns every placement reads (eligibility), otherwise built by the first one
        that asks: a worker warms its snapshot before it takes tasks."""
        self.eligibility  # noqa: B018 - builds and caches the columns

    @property
    def eligibility(self) -> EligibilityColumns:
        """Agent status columns for the eligibility check."""
        if self._eligibility is None:
            self._eligibility = EligibilityColumns.build(self.clusters)
        return self._eligibility

    def selector_mask(self, selector: LabelSelector | None) -> np.ndarray:
        """Clusters whose labels match `selector` (None and `{}` match every cluster). Read-only."""
        if selector is None or selector.is_empty:
            return np.ones(len(self.clusters), dtype=bool)
        mask = self._selector_masks.get(selector)
        if mask is None:
            mask = np.ones(len(self.clusters), dtype=bool)
            for key, value in selector.match_labels:
                mask &= self.label(key).equals(value)
            for requirement in selector.match_expressions:
                column = self.label(requirement.key)
                if requirement.operator == IN:
                    mask &= column.one_of(requirement.values)
                elif requirement.operator == EXISTS:
                    mask &= column.codes >= 0
                elif requirement.operator == DOES_NOT_EXIST:
                    mask &= column.codes < 0
                else:  # NotIn: an absent label passes
                    mask &= ~column.one_of(requirement.values)
            mask.flags.writeable = False
            self._selector_masks[selector] = mask
        return mask
