"""What a record takes from its inventory's names (the packed table, the names at a few positions and
their lengths) is found by the identity of the inventory's name tuple: a run does not hash the tens of
thousands of names again, and a name column of a few of them digests as the names themselves."""

import numpy as np

from placement.scheduler.record import NAME, ClusterRecord, Names, name_column, name_table


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
        assert name_column(names, np.arange(80)).table is table  # type: ignore[union-attr]
    name_column(names, np.asarray([4, 2]))
    assert CountedNames.hashed == hashed


def test_a_new_tuple_of_the_same_names_finds_the_packed_table() -> None:
    names = tuple(f"spoke-{i:03d}" for i in range(50))
    assert name_table(tuple(list(names))) is name_table(names)


def test_a_few_names_digest_and_pack_as_the_names_themselves() -> None:
    names = tuple(f"edge-{i}" for i in range(1, 300, 7))
    order = np.asarray([40, 3, 17, 0], dtype=np.int64)
    taken = name_column(names, order)
    assert isinstance(taken, Names)
    assert taken.lengths.tolist() == [len(names[p]) for p in order.tolist()]
    plain = ClusterRecord({NAME: [names[p] for p in order.tolist()]})
    record = ClusterRecord({NAME: taken})
    assert record.digest() == plain.digest()
    assert record.pack() == plain.pack()
    assert ClusterRecord.unpack(record.pack()).names == [names[p] for p in order.tolist()]
