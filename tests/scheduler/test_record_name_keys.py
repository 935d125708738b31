"""A record sorts its rows by name, and names a page of its rows, without building every row's name: the
positions into an inventory's sorted name table sort as the names do; any other name column sorts by
the names themselves."""

import numpy as np
import pytest

from placement.scheduler.record import NAME, ClusterRecord, NameTable, Positions, name_column, name_table

# sorted as an inventory lists them, and the same names out of order
NAMES = tuple(f"c-{i}" for i in sorted(range(40), key=str))
SHUFFLED = tuple(sorted(NAMES, key=lambda name: name[::-1]))


def record_over(table: NameTable, order: list[int]) -> ClusterRecord:
    return ClusterRecord({NAME: Positions(table, np.asarray(order, dtype=np.int64))})


ORDER = [7, 3, 39, 0, 12, 25, 1, 30, 18]


@pytest.mark.parametrize(
    "record",
    [
        record_over(name_table(NAMES), ORDER),
        record_over(NameTable(SHUFFLED, b""), ORDER),
        ClusterRecord({NAME: [NAMES[p] for p in ORDER]}),
        ClusterRecord.unpack(ClusterRecord({NAME: name_column(NAMES, np.arange(40)[::-1])}).pack()),
    ],
    ids=["sorted table", "unsorted table", "names", "unpacked"],
)
def test_name_order_and_keys_sort_as_the_names_do(record: ClusterRecord) -> None:
    names = record.names
    assert [names[i] for i in record.name_order] == sorted(names)
    rows = np.asarray([5, 0, 2], dtype=np.int64)
    assert record.names_at(rows) == [names[5], names[0], names[2]]
    by_key = rows[np.argsort(record.name_keys(rows), kind="stable")]
    assert [names[i] for i in by_key] == sorted(names[i] for i in rows)


def test_only_an_inventory_s_table_sorts_by_position() -> None:
    assert name_table(NAMES).ascending
    assert not NameTable(SHUFFLED, b"").ascending
    assert not NameTable(("a", "a", "b"), b"").ascending  # repeated names are no inventory's
    positions = record_over(name_table(NAMES), ORDER).name_keys(np.arange(len(ORDER)))
    assert positions.dtype.kind == "i"
