"""A record's digest is taken from its columns, without packing them: records with equal columns (built
apart) share it, and a change in any column (a name, a flag, a reason, a score, a total) changes it, as
it changes the packed bytes."""

from collections.abc import Callable

import numpy as np
import pytest

from placement.scheduler.record import NAME, SELECTED, TOTAL, ClusterRecord, Ints, Reasons, name_column

NAMES = tuple(f"cluster-{i:03d}" for i in range(200))


def record(
    names: tuple[str, ...] = NAMES, edit: Callable[[dict[str, np.ndarray]], None] = lambda arrays: None
) -> ClusterRecord:
    """150 ranked clusters then 30 tainted ones, as fresh arrays; `edit` changes them before use."""
    arrays = {
        "rows": np.arange(180, dtype=np.int64)[::-1].copy(),
        "selected": np.arange(180) < 5,
        "scores": np.arange(180, dtype=np.int64) % 7,
        "totals": np.arange(180, dtype=np.int64) // 3,
    }
    edit(arrays)
    present = np.arange(180) < 150
    return ClusterRecord(
        {
            NAME: name_column(names, arrays["rows"]),
            SELECTED: arrays["selected"],
            "filteredBy": Reasons.of([None] * 150 + ["tainted"] * 30),
            "scores": {"Balance": Ints(np.where(present, arrays["scores"], 0), present)},
            TOTAL: Ints(np.where(present, arrays["totals"], 0), present),
        }
    )


def test_records_with_equal_columns_share_a_digest() -> None:
    assert record().digest() == record().digest()
    assert record().pack() == record().pack()


def set_item(key: str, index: int, value: object) -> Callable[[dict[str, np.ndarray]], None]:
    def edit(arrays: dict[str, np.ndarray]) -> None:
        arrays[key][index] = value

    return edit


@pytest.mark.parametrize(
    "changed",
    [
        lambda: record(edit=set_item("rows", 0, 199)),
        lambda: record(edit=set_item("selected", 7, True)),
        lambda: record(edit=set_item("scores", 3, 6)),
        lambda: record(edit=set_item("totals", 140, 999)),
        lambda: record(names=(*NAMES[:-1], "renamed")),
        lambda: ClusterRecord({**record().columns, "filteredBy": Reasons.of([None] * 150 + ["other"] * 30)}),
    ],
    ids=["name", "selected", "score", "total", "table", "reason"],
)
def test_a_change_in_any_column_changes_the_digest(changed: Callable[[], ClusterRecord]) -> None:
    other = changed()
    assert other.pack() != record().pack()
    assert other.digest() != record().digest()


def test_names_listed_are_told_apart_however_they_split() -> None:
    """A record of an explanation that listed its names (`from_columns`): the digest reads each name
    whole."""
    assert ClusterRecord({NAME: ["ab", "c"]}).digest() != ClusterRecord({NAME: ["a", "bc"]}).digest()
