"""Per-cluster explanations as columns (one list per field) and the row dicts `schedule -o json` prints.

A stored explanation keeps its clusters as columns: at 10,000 clusters one list per field encodes and
decodes far faster than 10,000 dicts. A column whose value is a dict of lists (OCM `scores`: one list
per prioritizer, None where the cluster has no score) becomes a sparse dict in each row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Columns = Mapping[str, Any]


def row_count(columns: Columns) -> int:
    return len(columns.get("name") or ())


def row(columns: Columns, index: int) -> dict[str, Any]:
    """Row `index` as a dict with the columns' keys in the columns' order."""
    item: dict[str, Any] = {}
    for key, column in columns.items():
        if isinstance(column, Mapping):
            item[key] = {name: values[index] for name, values in column.items() if values[index] is not None}
        else:
            item[key] = column[index]
    return item


def rows(columns: Columns) -> list[dict[str, Any]]:
    """Every row; the one way columns turn into the per-cluster dicts of the report."""
    return [row(columns, index) for index in range(row_count(columns))]


def from_rows(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The columns of row dicts (an explanation stored before explanations were columnar)."""
    if not items:
        return {}
    columns: dict[str, Any] = {}
    for key, value in items[0].items():
        if isinstance(value, Mapping):
            names = list(dict.fromkeys(name for item in items for name in item.get(key) or {}))
            columns[key] = {name: [(item.get(key) or {}).get(name) for item in items] for name in names}
        else:
            columns[key] = [item.get(key) for item in items]
    return columns
