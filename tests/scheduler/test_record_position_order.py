"""A ranked run's record (rows by total descending, ties by position, then the unranked ones by position)
is packed in inventory-position order, with the listed clusters as a bitmap and its ranks as the row
numbers they are, and unpacks to the same rows in the same order; a record whose rows follow another
order keeps it, packed as every record was before (positions in row order), which still reads. An
unranked record (no `total`) listed in position order packs its names as the same bitmap."""

import json

import numpy as np

from placement.scheduler.record import (
    NAME,
    RANK,
    SELECTED,
    TOTAL,
    ClusterRecord,
    Ints,
    Positions,
    Reasons,
    decompressed,
    name_column,
)

NAMES = tuple(f"cluster-{i:04d}" for i in range(1000))
rng = np.random.default_rng(7)


def ranked_record(listed: int = 900, ranked: int = 800) -> ClusterRecord:
    """`ranked` clusters scored at random (many ties), the next unranked, in a ranked run's order."""
    positions = rng.permutation(len(NAMES))[:listed]
    scored, unscored = positions[:ranked], np.sort(positions[ranked:])
    totals = rng.integers(-20, 20, size=ranked)
    order = np.lexsort((scored, -totals))
    rows = np.concatenate([scored[order], unscored])
    present = np.arange(listed) < ranked
    values = np.zeros(listed, dtype=np.int64)
    values[:ranked] = totals[order]
    return ClusterRecord(
        {
            NAME: name_column(NAMES, rows),
            SELECTED: np.arange(listed) < 10,
            "filteredBy": Reasons.of([None] * ranked + ["tainted"] * (listed - ranked)),
            "scores": {"Balance": Ints(values // 2, present)},
            TOTAL: Ints(values, present),
            RANK: Ints(np.arange(1, listed + 1), present),
        }
    )


def layout(packed: bytes) -> dict[str, str]:
    data = decompressed(packed)[0]
    size = int.from_bytes(data[:4], "big")
    return {key: kind for key, kind, *_ in json.loads(data[4 : 4 + size])["columns"]}


def test_a_ranked_record_is_packed_in_position_order_and_unpacks_to_the_same_rows() -> None:
    record = ranked_record()
    packed = record.pack()
    assert layout(packed)[NAME] == "listed" and layout(packed)[RANK] == "row numbers"
    unpacked = ClusterRecord.unpack(packed)
    assert unpacked.rows() == record.rows()
    assert unpacked.names == record.names
    assert ClusterRecord.unpack(unpacked.pack()).rows() == record.rows()


def test_position_order_packs_smaller_than_the_rank_order() -> None:
    record = ranked_record()
    names = record.columns[NAME]
    assert isinstance(names, Positions)
    # the same rows, one tie broken the other way: the rank order is no longer the rule's
    as_listed = dict(record.columns)
    order = names.order.copy()
    totals = record.ints(TOTAL)
    assert totals is not None
    ties = (totals.values[:-1] == totals.values[1:]) & totals.present[1:]
    tie = int(np.flatnonzero(ties)[0])
    order[[tie, tie + 1]] = order[[tie + 1, tie]]
    as_listed[NAME] = name_column(NAMES, order)
    other = ClusterRecord(as_listed)
    assert layout(other.pack())[NAME] == "table"
    assert ClusterRecord.unpack(other.pack()).rows() == other.rows()
    assert len(record.pack()) < len(other.pack()) - len(NAMES)


def test_a_record_whose_ranks_are_not_its_row_numbers_keeps_its_order() -> None:
    record = ranked_record()
    rows = record.rows()
    # packed as every record was before: positions in row order, the rank column as integers
    unranked = ClusterRecord({**record.columns, RANK: Ints(np.arange(1, len(rows) + 1), ~record.selected)})
    packed = unranked.pack()
    assert layout(packed)[NAME] == "table"
    assert ClusterRecord.unpack(packed).rows() == unranked.rows()


def unranked_record(rows: np.ndarray) -> ClusterRecord:
    """A record without `total`, as a Fleet run stores one."""
    return ClusterRecord(
        {
            NAME: name_column(NAMES, rows),
            SELECTED: np.arange(len(rows)) < 3,
            "filteredBy": Reasons.of([None] * 3 + ["not eligible"] * (len(rows) - 3)),
            "affinityScore": Ints(np.full(len(rows), 7), np.arange(len(rows)) < 3),
        }
    )


def test_an_unranked_record_in_position_order_packs_its_names_as_a_bitmap() -> None:
    record = unranked_record(np.sort(rng.permutation(len(NAMES))[:700]))
    packed = record.pack()
    assert layout(packed)[NAME] == "listed"
    unpacked = ClusterRecord.unpack(packed)
    assert unpacked.names == record.names and unpacked.rows() == record.rows()
    every = unranked_record(np.arange(len(NAMES)))
    assert len(every.pack()) < len(NAMES) // 4  # the positions themselves took 2 bytes per row


def test_an_unranked_record_in_another_order_keeps_its_positions() -> None:
    record = unranked_record(rng.permutation(len(NAMES))[:700])
    packed = record.pack()
    assert layout(packed)[NAME] == "table"
    assert ClusterRecord.unpack(packed).rows() == record.rows()


def test_ranked_rows_unpack_in_order_whatever_the_totals_range() -> None:
    for high in (5, 2**20):
        record = ranked_record()
        total = record.ints(TOTAL)
        assert total is not None
        # the same ranked order with totals spread far past 16 bits
        scaled = Ints(total.values * high, total.present)
        wide = ClusterRecord({**record.columns, TOTAL: scaled})
        assert layout(wide.pack())[NAME] == "listed"
        assert ClusterRecord.unpack(wide.pack()).rows() == wide.rows()
