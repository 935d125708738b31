"""A run stores its clusters' positions in the inventory's name table, packed once per inventory
(front-coded: each name as what it shares with the one before and the rest) and referred to by key; a
record of an explanation that listed its names packs the names themselves."""

import json
import zlib

import numpy as np
import pytest

from placement.scheduler import record as records
from placement.scheduler.record import (
    NAME,
    SELECTED,
    ClusterRecord,
    Positions,
    Reasons,
    decompressed,
    name_column,
    name_table,
)

NAMES = tuple(f"cluster-{i:03d}" for i in range(40))


def record_of(order: list[int]) -> ClusterRecord:
    positions = np.asarray(order, dtype=np.int64)
    return ClusterRecord(
        {
            NAME: name_column(NAMES, positions),
            SELECTED: positions < 5,
            "filteredBy": Reasons.of(["tainted" if p % 7 == 0 else None for p in order]),
        }
    )


def test_a_run_listing_most_clusters_stores_positions_into_the_shared_table() -> None:
    order = list(range(30, 40)) + list(range(30))
    record = record_of(order)
    assert isinstance(record.columns[NAME], Positions)
    assert record.columns[NAME].table is name_table(NAMES)  # packed once for every run on these names
    unpacked = ClusterRecord.unpack(record.pack())
    assert unpacked.names == [NAMES[p] for p in order]
    assert unpacked.rows() == record.rows()
    assert unpacked.row(3) == {"name": "cluster-033", "selected": False, "filteredBy": None}
    assert ClusterRecord.unpack(unpacked.pack()).names == unpacked.names


def test_a_record_of_listed_names_packs_the_names() -> None:
    record = ClusterRecord.from_columns({NAME: ["cluster-004", "cluster-009"], SELECTED: [True, False]})
    assert record.name_table is None
    assert b"cluster-004" in decompressed(record.pack())[0]
    assert ClusterRecord.unpack(record.pack()).rows() == record.rows()


def test_an_empty_inventory_packs_an_empty_table() -> None:
    record = ClusterRecord({NAME: name_column((), np.zeros(0, dtype=np.int64))})
    unpacked = ClusterRecord.unpack(record.pack())
    assert len(unpacked) == 0 and unpacked.names == []


def test_the_table_is_front_coded_and_a_table_joined_by_newlines_still_reads() -> None:
    record = record_of(list(range(40)))
    names = record.columns[NAME]
    assert isinstance(names, Positions)
    joined = zlib.compress("\n".join(NAMES).encode(), 9)
    assert len(names.table.packed) < len(joined)
    # a record written before tables were front-coded (and stored apart): its table follows its bytes
    data = decompressed(record.pack())[0]
    size = int.from_bytes(data[:4], "big")
    header = json.loads(data[4 : 4 + size])
    for column in header["columns"]:
        if column[0] == NAME:
            column[-1] = len(joined)
    text = json.dumps(header, separators=(",", ":")).encode()
    rewritten = zlib.compress(len(text).to_bytes(4, "big") + text + data[4 + size :]) + joined
    assert ClusterRecord.unpack(rewritten).rows() == record.rows()


def test_the_record_refers_to_its_table_by_key_and_reads_it_from_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = record_of(list(range(40))[::-1])
    table = record.name_table
    assert table is not None and table.key == table.digest.hex()
    packed = record.pack()
    assert table.packed not in packed
    # a process that holds no table asks the caller for it, once
    monkeypatch.setattr(records, "_tables", {})
    asked: list[str] = []

    def stored(key: str) -> bytes:
        asked.append(key)
        return table.packed

    assert ClusterRecord.unpack(packed, stored).rows() == record.rows()
    assert ClusterRecord.unpack(packed, stored).names == record.names
    assert asked == [table.key]
