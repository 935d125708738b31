"""`Reasons.of` numbers a column's texts in the order first listed, equal texts one code whether or not
from a list or any iterable; a `ReasonColumn` filled filter by filter numbers them the same way."""

import numpy as np

from placement.scheduler.record import ReasonColumn, Reasons


def test_equal_texts_share_a_code_in_first_seen_order() -> None:
    shared = "taint down:NoSelect is not tolerated"
    copy = "".join(["taint down:", "NoSelect is not tolerated"])
    assert copy is not shared
    items = [None, "b", shared, "b", None, copy, "a", shared]
    reasons = Reasons.of(items)
    assert reasons.texts == ["b", shared, "a"]
    assert reasons.codes.tolist() == [-1, 0, 1, 0, -1, 1, 2, 1]
    assert reasons.tolist() == items


def test_any_iterable_and_the_empty_column() -> None:
    assert Reasons.of(iter(["x", None, "x"])).codes.tolist() == [0, -1, 0]
    empty = Reasons.of([])
    assert empty.texts == [] and empty.codes.tolist() == []


def test_a_column_filled_filter_by_filter_numbers_its_texts_as_of_would() -> None:
    column = ReasonColumn(6)
    column[np.asarray([True, True, False, False, False, False])] = "affinity"
    column.put(np.asarray([4, 5, 3]), ["stale", "left"], np.asarray([0, 1, 0]))
    column[0] = "overwritten"  # a text no row keeps any more
    column[1] = None
    assert [column[i] for i in range(6)] == ["overwritten", None, None, "stale", "stale", "left"]
    reasons = column.reasons()
    expected = Reasons.of([column[i] for i in range(6)])
    assert reasons.texts == expected.texts == ["overwritten", "stale", "left"]
    assert reasons.codes.tolist() == expected.codes.tolist()
    assert ReasonColumn(0).reasons().texts == []
