"""Filtered clusters are grouped by the columns their reason reads: rows equal in every column share a
group, rows that differ in any column do not, whatever range the columns' codes span."""

import numpy as np
import pytest

from placement.scheduler.ocm.report import _groups


def combinations(columns: list[np.ndarray]) -> list[tuple[int, ...]]:
    return list(zip(*(column.tolist() for column in columns), strict=True))


@pytest.mark.parametrize(
    "columns",
    [
        [np.array([3, 1, 3, 0, 1]), np.array([True, False, True, True, False])],
        # codes whose product leaves int64: the columns are renumbered before they are combined
        [
            np.array([1 << 40, 5, 1 << 40, 5, 7]),
            np.array([1 << 41, 2, 1 << 41, 3, 2]),
            np.array([-4, 0, -4, 0, 0]),
        ],
    ],
)
def test_rows_share_a_group_exactly_when_their_columns_are_equal(columns: list[np.ndarray]) -> None:
    first, group = _groups(columns)
    rows = combinations(columns)
    assert sorted(set(rows)) == sorted(rows[i] for i in first.tolist())
    for i, j in [(i, j) for i in range(len(rows)) for j in range(len(rows))]:
        assert (group[i] == group[j]) == (rows[i] == rows[j])
    assert [rows[first[g]] for g in group.tolist()] == rows
