"""`Reasons.of` numbers a column's texts in the order first listed, equal texts one code whether or not
they are one object, None as -1, from a list or any iterable."""

from placement.scheduler.record import Reasons


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
