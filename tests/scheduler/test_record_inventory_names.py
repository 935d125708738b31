"""A record's name column is positions into its inventory's name table, found by the identity of the
inventory's name tuple: a run does not hash the tens of thousands of names again. A column of a few of
the names is positions too (the table is stored apart from the record)."""

import numpy as np

from placement.scheduler.record import NAME, ClusterRecord, decompressed, name_column, name_table


class CountedNames(tuple[str, ...]):
    """A name tuple that counts how often it is hashed."""

    hashed = 0

    def __hash__(self) -> int:
        CountedNames.hashed += 1
        return super().__hash__()


def test_the_same_tuple_is_found_without_hashing_its_names() -> None:
    names = CountedNames(f"member-{i:04d}" for i in range(100))
    table = name_table(names)
    hashed = CountedNames.hashed
    for _ in range(3):
        assert name_column(names, np.arange(80)).table is table
    name_column(names, np.asarray([4, 2]))
    assert CountedNames.hashed == hashed


def test_a_new_tuple_of_the_same_names_finds_the_packed_table() -> None:
    names = tuple(f"spoke-{i:03d}" for i in range(50))
    assert name_table(tuple(list(names))) is name_table(names)


def test_a_few_names_are_positions_too() -> None:
    names = tuple(f"edge-{i}" for i in range(1, 300, 7))
    order = np.asarray([40, 3, 17, 0], dtype=np.int64)
    record = ClusterRecord({NAME: name_column(names, order)})
    assert record.name_table is name_table(names)
    assert names[40].encode() not in decompressed(record.pack())[0]
    assert ClusterRecord.unpack(record.pack()).names == [names[p] for p in order.tolist()]
