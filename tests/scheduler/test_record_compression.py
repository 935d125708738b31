"""A record packs as a zstd frame; a record packed as a zlib stream, as every record was before, unpacks
to the same rows."""

import zlib

import numpy as np

from placement.scheduler.record import NAME, SELECTED, ClusterRecord, Ints, Reasons, decompressed, name_column

NAMES = tuple(f"cluster-{i:04d}" for i in range(500))


def test_a_zstd_frame_now_and_a_zlib_stream_before_read_the_same() -> None:
    rows = np.arange(0, len(NAMES), 3)
    record = ClusterRecord(
        {
            NAME: name_column(NAMES, rows),
            SELECTED: rows % 2 == 0,
            "filteredBy": Reasons.of(["tainted" if row % 5 else None for row in rows.tolist()]),
            "affinityScore": Ints(rows % 7, rows % 5 == 0),
        }
    )
    packed = record.pack()
    assert packed.startswith(b"\x28\xb5\x2f\xfd")  # the zstd frame magic
    data, rest = decompressed(packed)
    assert rest == b""
    before = zlib.compress(data, 1)
    assert decompressed(before) == (data, b"")
    assert ClusterRecord.unpack(before).rows() == ClusterRecord.unpack(packed).rows() == record.rows()
