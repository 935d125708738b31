"""Scored clusters are ranked by total descending, ties by name (inventory position), whatever the
totals' range and whether the candidates come in position order or not."""

import numpy as np
import pytest

from placement.scheduler.ocm.schedule import _ranked_order

rng = np.random.default_rng(11)


def _expected(positions: np.ndarray, totals: np.ndarray) -> list[int]:
    return sorted(range(len(positions)), key=lambda i: (-int(totals[i]), int(positions[i])))


@pytest.mark.parametrize("high", [3, 300, 40_000, 2**40])
@pytest.mark.parametrize("in_order", [True, False])
def test_by_total_descending_then_by_position(high: int, in_order: bool) -> None:
    positions = rng.choice(5_000, size=2_000, replace=False)
    if in_order:
        positions = np.sort(positions)
    totals = rng.integers(-high, high, size=len(positions))
    assert _ranked_order(positions, totals).tolist() == _expected(positions, totals)


def test_one_and_no_candidate() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert _ranked_order(empty, empty).tolist() == []
    assert _ranked_order(np.asarray([7]), np.asarray([-5])).tolist() == [0]
